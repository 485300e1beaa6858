#pragma once
// Global quantities a method reports each frame and at the end of a run (identical on every rank), by name:
// the log, summary.json and the trajectory's /observables take whatever a method reports, without a fixed struct.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace percussion {

struct Observable {
  std::string name;
  std::vector<double> value;  // 1 number for a scalar, 3 for a vector
  bool integer = false;       // a count: stored as int64 in the trajectory, printed without decimals
};

class ObservableSet {
 public:
  // Adding a name twice replaces its value (the order of first addition is kept).
  void set(std::string_view name, double v) { put(name, {v}, false); }
  void set_count(std::string_view name, std::int64_t v) { put(name, {static_cast<double>(v)}, true); }
  void set(std::string_view name, const std::array<double, 3>& v) { put(name, {v[0], v[1], v[2]}, false); }

  const std::vector<Observable>& values() const { return values_; }
  const Observable* find(std::string_view name) const {
    for (const Observable& o : values_)
      if (o.name == name) return &o;
    return nullptr;
  }
  // A scalar's value, or `fallback` when the method does not report it.
  double scalar_or(std::string_view name, double fallback) const {
    const Observable* o = find(name);
    return o && o->value.size() == 1 ? o->value[0] : fallback;
  }

 private:
  void put(std::string_view name, std::vector<double> value, bool integer) {
    for (Observable& o : values_)
      if (o.name == name) {
        o.value = std::move(value);
        o.integer = integer;
        return;
      }
    values_.push_back({std::string(name), std::move(value), integer});
  }
  std::vector<Observable> values_;
};

}  // namespace percussion
