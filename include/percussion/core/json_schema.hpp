#pragma once
// JSON Schema validation of input files (valijson, draft 7). The schemas are the files under docs/schema/,
// compiled into the program, so editors and the program read the same rules.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace percussion {

// The schema published as docs/schema/<name>.schema.json, or an empty view when there is none.
std::string_view published_schema(std::string_view name);

// Throws InputError("<file>: <json pointer>: <what the schema requires>") at the deepest place `document` breaks
// the published schema `schema_name`; std::logic_error when there is no such schema or it is not JSON.
void validate_against_schema(const nlohmann::json& document, std::string_view schema_name, const std::string& file);

}  // namespace percussion
