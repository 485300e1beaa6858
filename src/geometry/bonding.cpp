#include "percussion/geometry/bonding.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "percussion/geometry/cell_list.hpp"

namespace percussion::geometry {

std::vector<std::array<std::int64_t, 2>> touching_pairs(std::span<const Eigen::Vector3d> p,
                                                        std::span<const double> radius, double tolerance) {
  if (p.size() != radius.size()) throw std::invalid_argument("touching_pairs: one radius per point expected");
  if (!(tolerance >= 0.0) || !std::isfinite(tolerance)) {
    throw std::invalid_argument("touching_pairs: tolerance must be finite and >= 0");
  }
  std::vector<std::array<std::int64_t, 2>> pairs;
  if (p.empty()) return pairs;
  double r_max = 0.0;
  for (const double r : radius) {
    if (!(r > 0.0) || !std::isfinite(r)) throw std::invalid_argument("touching_pairs: radii must be positive");
    r_max = std::max(r_max, r);
  }
  const double scale = 1.0 + tolerance;
  // The grid's cut-off is strict (<); widen it a hair so pairs exactly at (r_i + r_j)(1 + tol) are kept by
  // the exact test below.
  const double cutoff = 2.0 * r_max * scale * (1.0 + 1e-9);
  CellList cells;
  cells.build(p, cutoff);
  cells.for_each_pair(cutoff, [&](std::size_t i, std::size_t j, double d2) {
    const double reach = (radius[i] + radius[j]) * scale;
    if (d2 <= reach * reach) pairs.push_back({static_cast<std::int64_t>(i), static_cast<std::int64_t>(j)});
  });
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

}  // namespace percussion::geometry
