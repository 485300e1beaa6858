#pragma once
// The asynchronous integrator's one queue of events: force kicks on their clocks' lattices and certificate
// expiries, in time order. Ties are broken by what the event is (kind, then for a pair's events the pair's own
// vertices, then its layer), never by when it was queued or where the pair is stored, so the order depends only on
// the set of events: a restored queue, a broad phase that numbers pairs differently, or ranks holding parts of the
// queue take the same path.
// A lattice event is never removed: once superseded it carries an old version and its handler ignores it.
#include <algorithm>
#include <array>
#include <cstdint>
#include <tuple>
#include <vector>

namespace percussion::avi {

enum class EventKind : std::uint8_t { Spring, Gravity, Layer, Certificate, Skin };

struct Event {
  double time = 0;
  EventKind kind = EventKind::Spring;
  std::int32_t item = 0;      // spring, pair or vertex index
  std::int64_t layer = 0;     // Layer and Certificate: the layer
  std::int64_t tick = 0;      // lattice events: time = origin + tick · step
  std::uint32_t version = 0;  // Layer: valid while it matches its clock's
  // Layer and Certificate: the pair's type and vertices (a plane pair: the vertex and −1 − plane); else item.
  std::array<std::int32_t, 5> identity{};
};

inline bool operator<(const Event& a, const Event& b) {
  return std::tie(a.time, a.kind, a.identity, a.layer, a.version, a.tick, a.item) <
         std::tie(b.time, b.kind, b.identity, b.layer, b.version, b.tick, b.item);
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

// The pending certificate expiry of each pair (or skin expiry of each sphere), at most one, moved in place when a
// kick changes it (a certificate is rescheduled at every kick of its vertices: left in the main queue, the superseded
// ones would outnumber the rest).
class CertificateQueue {
 public:
  void reset(std::size_t items) {
    heap_.clear();
    slot_.assign(items, kNone);
  }
  void reset_size(std::size_t items) { slot_.resize(std::max(slot_.size(), items), kNone); }  // keeps what is queued
  void set(const Event& e) {  // keyed by e.item
    std::size_t& i = slot_[static_cast<std::size_t>(e.item)];
    if (i == kNone) {
      i = heap_.size();
      heap_.push_back(e);
    } else {
      heap_[i] = e;
    }
    up(i);
    down(slot_[static_cast<std::size_t>(e.item)]);
  }
  void erase(std::int32_t pair) {
    const std::size_t i = slot_[static_cast<std::size_t>(pair)];
    if (i == kNone) return;
    swap(i, heap_.size() - 1);
    heap_.pop_back();
    slot_[static_cast<std::size_t>(pair)] = kNone;
    if (i < heap_.size()) {
      up(i);
      down(slot_[static_cast<std::size_t>(heap_[i].item)]);
    }
  }
  bool empty() const { return heap_.empty(); }
  const Event& top() const { return heap_.front(); }
  Event pop() {
    const Event e = heap_.front();
    erase(e.item);
    return e;
  }
  const std::vector<Event>& events() const { return heap_; }

 private:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  void swap(std::size_t a, std::size_t b) {
    std::swap(heap_[a], heap_[b]);
    slot_[static_cast<std::size_t>(heap_[a].item)] = a;
    slot_[static_cast<std::size_t>(heap_[b].item)] = b;
  }
  void up(std::size_t i) {
    for (; i > 0 && heap_[i] < heap_[(i - 1) / 2]; i = (i - 1) / 2) swap(i, (i - 1) / 2);
  }
  void down(std::size_t i) {
    for (;;) {
      std::size_t m = i;
      for (std::size_t c = 2 * i + 1; c <= 2 * i + 2 && c < heap_.size(); ++c)
        if (heap_[c] < heap_[m]) m = c;
      if (m == i) return;
      swap(i, m);
      i = m;
    }
  }
  std::vector<Event> heap_;
  std::vector<std::size_t> slot_;
};

}  // namespace percussion::avi
