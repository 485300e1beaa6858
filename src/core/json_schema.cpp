// JSON Schema validation with valijson. Messages name the file and the JSON pointer of the deepest failure.
#include "percussion/core/json_schema.hpp"

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "percussion/core/error.hpp"
#include "percussion/core/json_checker.hpp"

namespace percussion {

namespace {

// valijson's context ("<root>", "[bodies]", "[0]", ...) as an RFC 6901 pointer.
std::string pointer_of(const std::vector<std::string>& context) {
  std::string pointer;
  for (const std::string& part : context) {
    if (part.size() < 2 || part.front() != '[' || part.back() != ']') continue;
    pointer += "/" + JsonChecker::escape_key(std::string_view(part).substr(1, part.size() - 2));
  }
  return pointer;
}

// A copy where integral floats (1e3) are integers: the typed readers (json_checker.hpp) take them as such, and a
// schema's "integer" should too.
nlohmann::json integral_numbers_as_integers(const nlohmann::json& v) {
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && std::floor(d) == d && std::abs(d) < 9.0e15) return static_cast<std::int64_t>(d);
    return v;
  }
  if (v.is_array() || v.is_object()) {
    nlohmann::json out = v;
    for (auto& item : out) item = integral_numbers_as_integers(item);
    return out;
  }
  return v;
}

}  // namespace

void validate_against_schema(const nlohmann::json& document, std::string_view schema_name, const std::string& file) {
  const std::string_view schema = published_schema(schema_name);
  if (schema.empty()) throw std::logic_error("no schema docs/schema/" + std::string(schema_name) + ".schema.json compiled in");
  nlohmann::json schema_doc;
  try {
    schema_doc = nlohmann::json::parse(schema.begin(), schema.end());
  } catch (const nlohmann::json::exception& e) {
    throw std::logic_error("docs/schema/" + std::string(schema_name) + ".schema.json: not valid JSON: " + e.what());
  }
  valijson::Schema parsed;
  valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
  parser.populateSchema(valijson::adapters::NlohmannJsonAdapter(schema_doc), parsed);
  valijson::Validator validator(valijson::Validator::kStrongTypes);
  valijson::ValidationResults results;
  const nlohmann::json normalised = integral_numbers_as_integers(document);
  if (validator.validate(parsed, valijson::adapters::NlohmannJsonAdapter(normalised), &results)) return;
  valijson::ValidationResults::Error error, deepest;
  bool first = true;
  while (results.popError(error))
    if (first || error.context.size() > deepest.context.size()) {
      deepest = error;
      first = false;
    }
  throw InputError(file + ": " + pointer_of(deepest.context) + ": " + deepest.description +
                   " (docs/schema/" + std::string(schema_name) + ".schema.json)");
}

}  // namespace percussion
