#pragma once
// The asynchronous integrator's one queue of events: force kicks on their clocks' lattices and certificate
// expiries, in time order. Ties are broken by what the event is (kind, item, layer), never by when it was queued, so
// the order depends only on the set of events: a restored queue, or one split over ranks, takes the same path.
// Events are never removed: a superseded one carries an old version and its handler ignores it when it surfaces.
#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

namespace percussion::avi {

enum class EventKind : std::uint8_t { Spring, Gravity, Layer, Certificate };

struct Event {
  double time = 0;
  EventKind kind = EventKind::Spring;
  std::int32_t item = 0;      // spring or pair index
  std::int64_t layer = 0;     // Layer and Certificate: the layer
  std::int64_t tick = 0;      // lattice events: time = origin + tick · step
  std::uint32_t version = 0;  // Layer and Certificate: valid while it matches the pair's
};

inline bool operator<(const Event& a, const Event& b) {
  return std::tie(a.time, a.kind, a.item, a.layer, a.version, a.tick) <
         std::tie(b.time, b.kind, b.item, b.layer, b.version, b.tick);
}

class EventQueue {
 public:
  void push(const Event& e) {
    heap_.push_back(e);
    std::push_heap(heap_.begin(), heap_.end(), later);
  }
  bool empty() const { return heap_.empty(); }
  const Event& top() const { return heap_.front(); }
  Event pop() {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    const Event e = heap_.back();
    heap_.pop_back();
    return e;
  }
  std::size_t size() const { return heap_.size(); }
  const std::vector<Event>& events() const { return heap_; }  // in heap order
  void assign(std::vector<Event> events) {
    heap_ = std::move(events);
    std::make_heap(heap_.begin(), heap_.end(), later);
  }

 private:
  static bool later(const Event& a, const Event& b) { return b < a; }
  std::vector<Event> heap_;
};

}  // namespace percussion::avi
