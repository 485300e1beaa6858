#include "percussion/core/json_checker.hpp"

#include <charconv>
#include <climits>
#include <cmath>
#include <set>
#include <span>

#include "percussion/core/error.hpp"

namespace percussion {

namespace {

std::string join(std::span<const std::string_view> items) {
  std::string out;
  for (std::string_view s : items) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

bool contains(std::span<const std::string_view> items, std::string_view s) {
  for (std::string_view item : items)
    if (item == s) return true;
  return false;
}

// nlohmann prefixes messages with "[json.exception.parse_error.101] "; the user does not need it.
std::string strip_exception_tag(const std::string& what) {
  const auto close = what.find("] ");
  return (!what.empty() && what[0] == '[' && close != std::string::npos) ? what.substr(close + 2) : what;
}

}  // namespace

nlohmann::json parse_json_text(const std::string& text, const std::string& file) {
  // Track the pointer of the value being read so a repeated key can be named; nlohmann keeps the last one silently.
  struct Frame {
    bool is_array;
    long index = -1;   // current element (arrays)
    std::string key;   // current member (objects)
    std::set<std::string> keys;
  };
  std::vector<Frame> stack;
  std::optional<std::string> duplicate;
  auto enter_element = [&] {
    if (!stack.empty() && stack.back().is_array) ++stack.back().index;
  };
  auto pointer = [&] {
    std::string out;
    for (const Frame& f : stack) out += "/" + (f.is_array ? std::to_string(f.index) : JsonChecker::escape_key(f.key));
    return out;
  };
  // Printing or checking a value recurses into it: a document nested thousands deep would overflow the stack.
  constexpr std::size_t kMaxDepth = 64;
  auto enter_container = [&](bool is_array) {
    enter_element();
    if (stack.size() >= kMaxDepth)
      throw InputError(file + ": " + pointer() + ": nested deeper than " + std::to_string(kMaxDepth) + " levels");
    stack.push_back({is_array, -1, {}, {}});
  };
  auto callback = [&](int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    switch (event) {
      case E::object_start: enter_container(false); break;
      case E::array_start: enter_container(true); break;
      case E::object_end:
      case E::array_end: stack.pop_back(); break;
      case E::value: enter_element(); break;
      case E::key: {
        Frame& top = stack.back();
        top.key = parsed.get<std::string>();
        if (!top.keys.insert(top.key).second && !duplicate) duplicate = pointer();
        break;
      }
    }
    return true;
  };
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text, callback);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number overflow
    throw InputError(file + ": invalid JSON: " + strip_exception_tag(e.what()));
  }
  if (duplicate) throw InputError(file + ": " + *duplicate + ": key appears more than once in its object");
  return doc;
}

// ---------------------------------------------------------------------------------------------------------------
bool Range::contains(double v) const {
  const bool above = lo_open ? v > lo : v >= lo;
  const bool below = hi_open ? v < hi : v <= hi;
  return above && below;
}

std::string Range::describe() const {
  const bool has_lo = std::isfinite(lo), has_hi = std::isfinite(hi);
  const std::string l = JsonChecker::format_number(lo), h = JsonChecker::format_number(hi);
  if (has_lo && has_hi) return "in " + std::string(lo_open ? "(" : "[") + l + ", " + h + (hi_open ? ")" : "]");
  if (has_lo) return (lo_open ? "> " : ">= ") + l;
  if (has_hi) return (hi_open ? "< " : "<= ") + h;
  return "any number";
}

// ---------------------------------------------------------------------------------------------------------------
JsonChecker::JsonChecker(const nlohmann::json& value, std::string file, std::string pointer)
    : value_(&value), file_(std::move(file)), pointer_(std::move(pointer)) {}

void JsonChecker::fail(const std::string& what) const {
  // The root's pointer is "" in RFC 6901; print "/" so the message keeps its "<file>: <where>: <what>" shape.
  throw InputError(file_ + ": " + (pointer_.empty() ? "/" : pointer_) + ": " + what);
}

void JsonChecker::fail_at(const std::string& key, const std::string& what) const {
  throw InputError(file_ + ": " + member_pointer(key) + ": " + what);
}

void JsonChecker::expected(std::string_view what) const {
  fail("expected " + std::string(what) + ", got " + describe(*value_));
}

std::string JsonChecker::describe(const nlohmann::json& value) {
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  switch (value.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::boolean: return "boolean " + text;
    case nlohmann::json::value_t::string: return "string " + text;
    case nlohmann::json::value_t::array: return "array " + text;
    case nlohmann::json::value_t::object: return "object " + text;
    default: return "number " + text;
  }
}

std::string JsonChecker::escape_key(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::string JsonChecker::format_number(double v) {
  char buf[32];
  const auto result = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, result.ptr);
}

// --- this value ------------------------------------------------------------------------------------------------
void JsonChecker::expect_object(std::initializer_list<std::string_view> allowed) const {
  expect_object(std::span<const std::string_view>(allowed.begin(), allowed.size()));
}

void JsonChecker::expect_object(std::span<const std::string_view> allowed) const {
  if (!value_->is_object()) expected("an object");
  for (const auto& item : value_->items())
    if (!contains(allowed, item.key())) fail_at(item.key(), "unknown key (expected one of: " + join(allowed) + ")");
}

std::vector<JsonChecker> JsonChecker::as_array(std::size_t min_size) const {
  if (!value_->is_array()) expected("an array");
  if (value_->size() < min_size)
    fail("must have at least " + std::to_string(min_size) + (min_size == 1 ? " element" : " elements") + ", got " +
         std::to_string(value_->size()));
  std::vector<JsonChecker> out;
  out.reserve(value_->size());
  for (std::size_t i = 0; i < value_->size(); ++i)
    out.emplace_back((*value_)[i], file_, pointer_ + "/" + std::to_string(i));
  return out;
}

double JsonChecker::as_number(const Range& range) const {
  if (!value_->is_number()) expected("a number");
  const double v = value_->get<double>();
  if (!std::isfinite(v)) fail("must be a finite number");
  if (!range.contains(v)) fail("must be " + range.describe() + ", got " + value_->dump());
  return v;
}

long JsonChecker::as_integer(const Range& range) const {
  long v = 0;
  if (value_->is_number_unsigned()) {
    const auto u = value_->get<unsigned long long>();
    if (u > static_cast<unsigned long long>(LONG_MAX)) fail("integer too large, got " + value_->dump());
    v = static_cast<long>(u);
  } else if (value_->is_number_integer()) {
    v = value_->get<long>();
  } else if (value_->is_number_float()) {
    // Accept integral floats (users write 1e3); 2^63 itself does not fit in long.
    const double d = value_->get<double>();
    if (!std::isfinite(d) || d != std::floor(d)) expected("an integer");
    if (std::fabs(d) >= 9.2233720368547758e18) fail("integer too large, got " + value_->dump());
    v = static_cast<long>(d);
  } else {
    expected("an integer");
  }
  if (!range.contains(static_cast<double>(v))) fail("must be " + range.describe() + ", got " + value_->dump());
  return v;
}

bool JsonChecker::as_bool() const {
  if (!value_->is_boolean()) expected("true or false");
  return value_->get<bool>();
}

std::string JsonChecker::as_string() const {
  if (!value_->is_string()) expected("a string");
  return value_->get<std::string>();
}

std::string JsonChecker::as_choice(std::initializer_list<std::string_view> allowed, std::string_view what) const {
  std::string s = as_string();
  if (!contains(std::span<const std::string_view>(allowed.begin(), allowed.size()), s))
    fail("unknown " + std::string(what) + " '" + s + "' (expected one of: " +
         join(std::span<const std::string_view>(allowed.begin(), allowed.size())) + ")");
  return s;
}

Eigen::Vector3d JsonChecker::as_vector3() const {
  if (!value_->is_array() || value_->size() != 3) expected("an array of 3 numbers");
  const std::vector<JsonChecker> items = as_array();
  return {items[0].as_number(), items[1].as_number(), items[2].as_number()};
}

Eigen::Vector3d JsonChecker::as_vector(int dimension) const {
  if (dimension == 3) return as_vector3();
  if (!value_->is_array() || static_cast<int>(value_->size()) != dimension)
    expected("an array of " + std::to_string(dimension) + " numbers (a " + std::to_string(dimension) + "D scene)");
  const std::vector<JsonChecker> items = as_array();
  Eigen::Vector3d v = Eigen::Vector3d::Zero();
  for (int i = 0; i < dimension; ++i) v[i] = items[static_cast<std::size_t>(i)].as_number();
  return v;
}

Eigen::Vector3d JsonChecker::as_direction() const {
  const Eigen::Vector3d v = as_vector3();
  const double n = v.stableNorm();  // no overflow for huge components
  if (!(n > 0) || !std::isfinite(n)) fail("must be a non-zero finite vector, got " + value_->dump());
  return v / n;
}

// --- members ---------------------------------------------------------------------------------------------------
bool JsonChecker::has(const std::string& key) const {
  return value_->is_object() && value_->contains(key);
}

JsonChecker JsonChecker::at(const std::string& key) const {
  if (!value_->is_object()) expected("an object");
  const auto it = value_->find(key);
  if (it == value_->end()) fail("missing required key '" + key + "'");
  return JsonChecker(*it, file_, member_pointer(key));
}

std::optional<JsonChecker> JsonChecker::find(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return at(key);
}

JsonChecker JsonChecker::object(const std::string& key, std::initializer_list<std::string_view> allowed) const {
  JsonChecker c = at(key);
  c.expect_object(allowed);
  return c;
}

std::optional<JsonChecker> JsonChecker::optional_object(const std::string& key,
                                                        std::initializer_list<std::string_view> allowed) const {
  if (!has(key)) return std::nullopt;
  return object(key, allowed);
}

std::vector<JsonChecker> JsonChecker::array(const std::string& key, std::size_t min_size) const {
  return at(key).as_array(min_size);
}

std::vector<JsonChecker> JsonChecker::optional_array(const std::string& key) const {
  if (!has(key)) return {};
  return at(key).as_array();
}

double JsonChecker::number(const std::string& key, const Range& range) const { return at(key).as_number(range); }

double JsonChecker::number_or(const std::string& key, double fallback, const Range& range) const {
  return has(key) ? at(key).as_number(range) : fallback;
}

long JsonChecker::integer(const std::string& key, const Range& range) const { return at(key).as_integer(range); }

long JsonChecker::integer_or(const std::string& key, long fallback, const Range& range) const {
  return has(key) ? at(key).as_integer(range) : fallback;
}

bool JsonChecker::boolean(const std::string& key) const { return at(key).as_bool(); }

bool JsonChecker::boolean_or(const std::string& key, bool fallback) const {
  return has(key) ? at(key).as_bool() : fallback;
}

std::string JsonChecker::string(const std::string& key) const { return at(key).as_string(); }

std::string JsonChecker::string_or(const std::string& key, const std::string& fallback) const {
  return has(key) ? at(key).as_string() : fallback;
}

std::string JsonChecker::choice(const std::string& key, std::initializer_list<std::string_view> allowed,
                                std::string_view what) const {
  return at(key).as_choice(allowed, what);
}

std::string JsonChecker::choice_or(const std::string& key, const std::string& fallback,
                                   std::initializer_list<std::string_view> allowed, std::string_view what) const {
  return has(key) ? at(key).as_choice(allowed, what) : fallback;
}

Eigen::Vector3d JsonChecker::vector3(const std::string& key) const { return at(key).as_vector3(); }

Eigen::Vector3d JsonChecker::vector3_or(const std::string& key, const Eigen::Vector3d& fallback) const {
  return has(key) ? at(key).as_vector3() : fallback;
}

Eigen::Vector3d JsonChecker::vector(const std::string& key, int dimension) const {
  return at(key).as_vector(dimension);
}

Eigen::Vector3d JsonChecker::vector_or(const std::string& key, int dimension, const Eigen::Vector3d& fallback) const {
  return has(key) ? at(key).as_vector(dimension) : fallback;
}

Eigen::Vector3d JsonChecker::direction(const std::string& key) const { return at(key).as_direction(); }

Eigen::Vector3d JsonChecker::direction_or(const std::string& key, const Eigen::Vector3d& fallback) const {
  return has(key) ? at(key).as_direction() : fallback;
}

}  // namespace percussion
