#pragma once
// Broad phase of the contact pair set: axis-aligned boxes and a sweep along x (sort by lower x, keep the boxes
// whose x-range is still open, test y and z), reporting every overlapping pair once.
#include <Eigen/Core>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

namespace percussion::ipc {

struct Box {
  Eigen::Vector3d lower = Eigen::Vector3d::Constant(std::numeric_limits<double>::infinity());
  Eigen::Vector3d upper = Eigen::Vector3d::Constant(-std::numeric_limits<double>::infinity());
  void extend(const Eigen::Vector3d& p) {
    lower = lower.cwiseMin(p);
    upper = upper.cwiseMax(p);
  }
  void extend(const Box& b) {
    lower = lower.cwiseMin(b.lower);
    upper = upper.cwiseMax(b.upper);
  }
  Box inflated(double r) const { return {lower.array() - r, upper.array() + r}; }
  bool empty() const { return (lower.array() > upper.array()).any(); }
  bool overlaps(const Box& b) const {
    return (lower.array() <= b.upper.array()).all() && (b.lower.array() <= upper.array()).all();
  }
};

// f(i, j) for every i in a and j in b whose boxes overlap; with same (a and b the same list) each unordered pair
// i < j once.
template <class F>
void overlapping_boxes(const std::vector<Box>& a, const std::vector<Box>& b, bool same, F&& f) {
  // Events: boxes of both lists by lower x; list 0 is a, list 1 is b.
  struct Item {
    double x;
    std::int32_t list, index;
  };
  std::vector<Item> items;
  items.reserve(a.size() + (same ? 0 : b.size()));
  for (std::size_t i = 0; i < a.size(); ++i) items.push_back({a[i].lower.x(), 0, static_cast<std::int32_t>(i)});
  if (!same)
    for (std::size_t j = 0; j < b.size(); ++j) items.push_back({b[j].lower.x(), 1, static_cast<std::int32_t>(j)});
  std::sort(items.begin(), items.end(), [](const Item& p, const Item& q) {
    return p.x != q.x ? p.x < q.x : p.list != q.list ? p.list < q.list : p.index < q.index;
  });
  std::vector<std::int32_t> open[2];
  const std::vector<Box>* lists[2] = {&a, same ? &a : &b};
  for (const Item& it : items) {
    const Box& box = (*lists[it.list])[static_cast<std::size_t>(it.index)];
    const int other = same ? 0 : 1 - it.list;
    auto& candidates = open[other];
    const std::vector<Box>& others = *lists[other];
    std::erase_if(candidates, [&](std::int32_t k) { return others[std::size_t(k)].upper.x() < box.lower.x(); });
    for (std::int32_t k : candidates) {
      if (!box.overlaps((*lists[other])[std::size_t(k)])) continue;
      if (same)
        f(std::min(k, it.index), std::max(k, it.index));
      else if (it.list == 0)
        f(it.index, k);
      else
        f(k, it.index);
    }
    open[it.list].push_back(it.index);
  }
}

}  // namespace percussion::ipc
