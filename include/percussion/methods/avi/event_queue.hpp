#pragma once
// The asynchronous integrator's one queue of events: force kicks on their clocks' lattices and certificate
// expiries, in time order with ties broken by insertion order, so a run takes the same path every time. Events are
// never removed: a superseded one carries an old version and its handler ignores it when it surfaces.
#include <cstdint>
#include <queue>
#include <vector>

namespace percussion::avi {

enum class EventKind : std::uint8_t { Spring, Gravity, Layer, Certificate };

struct Event {
  double time = 0;
  std::uint64_t sequence = 0;
  EventKind kind = EventKind::Spring;
  std::int32_t item = 0;      // spring or pair index
  std::int64_t layer = 0;     // Layer and Certificate: the layer
  std::int64_t tick = 0;      // lattice events: time = origin + tick · step
  std::uint32_t version = 0;  // Layer and Certificate: valid while it matches the pair's
};

class EventQueue {
 public:
  void push(Event e) {
    e.sequence = next_sequence_++;
    heap_.push(e);
  }
  bool empty() const { return heap_.empty(); }
  const Event& top() const { return heap_.top(); }
  Event pop() {
    Event e = heap_.top();
    heap_.pop();
    return e;
  }
  std::size_t size() const { return heap_.size(); }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time > b.time || (a.time == b.time && a.sequence > b.sequence);
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  std::uint64_t next_sequence_ = 0;
};

}  // namespace percussion::avi
