#pragma once
// Typed, range-checked reading of JSON input files. A JsonChecker views one value of a parsed document and
// knows its JSON pointer, so every problem becomes InputError("<file>: <pointer>: <what>") without the caller
// tracking paths. Methods reuse it for their own scene sections.
#include <Eigen/Core>
#include <nlohmann/json.hpp>

#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace percussion {

// Parses JSON text. Invalid JSON -> InputError("<file>: invalid JSON: <parser message with line, column>");
// a key given twice in one object (which JSON parsers silently resolve) -> InputError naming its pointer.
nlohmann::json parse_json_text(const std::string& text, const std::string& file);

// Allowed interval of a number; each end closed, open or unbounded.
struct Range {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false, hi_open = false;

  bool contains(double v) const;
  std::string describe() const;  // "> 0", ">= 1", "in [0, 0.5)"

  static Range any() { return {}; }
  static Range positive() { return {0.0, std::numeric_limits<double>::infinity(), true, false}; }
  static Range non_negative() { return at_least(0.0); }
  static Range at_least(double lo) { return {lo, std::numeric_limits<double>::infinity(), false, false}; }
  static Range closed(double lo, double hi) { return {lo, hi, false, false}; }
  static Range closed_open(double lo, double hi) { return {lo, hi, false, true}; }  // [lo, hi)
  static Range open_closed(double lo, double hi) { return {lo, hi, true, false}; }  // (lo, hi]
};

class JsonChecker {
 public:
  // `value` must outlive the checker and everything derived from it. `pointer` is RFC 6901 ("" = root).
  JsonChecker(const nlohmann::json& value, std::string file, std::string pointer = "");

  const nlohmann::json& value() const { return *value_; }
  const std::string& file() const { return file_; }
  const std::string& pointer() const { return pointer_; }

  // Throw InputError at this value, or at one of its members (which need not exist).
  [[noreturn]] void fail(const std::string& what) const;
  [[noreturn]] void fail_at(const std::string& key, const std::string& what) const;

  // --- this value ---
  // Must be an object whose keys are all in `allowed` (the first other key is reported with the list).
  void expect_object(std::initializer_list<std::string_view> allowed) const;
  void expect_object(std::span<const std::string_view> allowed) const;
  std::vector<JsonChecker> as_array(std::size_t min_size = 0) const;  // one checker per element
  double as_number(const Range& range = Range::any()) const;          // finite, in range
  long as_integer(const Range& range = Range::any()) const;           // integral value (1e3 is fine)
  bool as_bool() const;
  std::string as_string() const;
  std::string as_choice(std::initializer_list<std::string_view> allowed, std::string_view what) const;
  Eigen::Vector3d as_vector3() const;    // array of exactly 3 numbers
  Eigen::Vector3d as_direction() const;  // non-zero vector3, returned normalised
  // An array of exactly `dimension` (2 or 3) numbers, as a 3-vector with z = 0 in 2D.
  Eigen::Vector3d as_vector(int dimension) const;

  // --- members of this object (call expect_object first) ---
  bool has(const std::string& key) const;
  JsonChecker at(const std::string& key) const;  // required: "<pointer>: missing required key '<key>'"
  std::optional<JsonChecker> find(const std::string& key) const;

  // Required object member with allowed keys; optional variant returns nullopt when absent.
  JsonChecker object(const std::string& key, std::initializer_list<std::string_view> allowed) const;
  std::optional<JsonChecker> optional_object(const std::string& key,
                                             std::initializer_list<std::string_view> allowed) const;
  std::vector<JsonChecker> array(const std::string& key, std::size_t min_size) const;  // required
  std::vector<JsonChecker> optional_array(const std::string& key) const;                // absent = empty

  double number(const std::string& key, const Range& range = Range::any()) const;
  double number_or(const std::string& key, double fallback, const Range& range = Range::any()) const;
  long integer(const std::string& key, const Range& range = Range::any()) const;
  long integer_or(const std::string& key, long fallback, const Range& range = Range::any()) const;
  bool boolean(const std::string& key) const;
  bool boolean_or(const std::string& key, bool fallback) const;
  std::string string(const std::string& key) const;
  std::string string_or(const std::string& key, const std::string& fallback) const;
  std::string choice(const std::string& key, std::initializer_list<std::string_view> allowed,
                     std::string_view what) const;
  std::string choice_or(const std::string& key, const std::string& fallback,
                        std::initializer_list<std::string_view> allowed, std::string_view what) const;
  Eigen::Vector3d vector3(const std::string& key) const;
  Eigen::Vector3d vector3_or(const std::string& key, const Eigen::Vector3d& fallback) const;
  Eigen::Vector3d direction(const std::string& key) const;
  Eigen::Vector3d direction_or(const std::string& key, const Eigen::Vector3d& fallback) const;
  Eigen::Vector3d vector(const std::string& key, int dimension) const;
  Eigen::Vector3d vector_or(const std::string& key, int dimension, const Eigen::Vector3d& fallback) const;

  // Short description of a JSON value for messages: `number 2.5`, `string "abc"`, `array [1,2]`, `null`.
  static std::string describe(const nlohmann::json& value);
  // RFC 6901 escaping of one key ("~" -> "~0", "/" -> "~1").
  static std::string escape_key(std::string_view key);
  // Shortest text that reads back as `v` ("0.5", "1e-05", "-3").
  static std::string format_number(double v);

 private:
  std::string member_pointer(const std::string& key) const { return pointer_ + "/" + escape_key(key); }
  // Expectation failure: "expected <what>, got <describe(value)>".
  [[noreturn]] void expected(std::string_view what) const;

  const nlohmann::json* value_;
  std::string file_;
  std::string pointer_;
};

}  // namespace percussion
