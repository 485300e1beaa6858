#include "percussion/geometry/intersection/segment_segment.hpp"

#include <algorithm>

#include "percussion/geometry/intersection/orientation.hpp"

namespace percussion::geometry {
namespace {

// r collinear with a, b: is it within the segment's bounding box (and so on the segment)?
bool within(const Eigen::Vector2d& a, const Eigen::Vector2d& b, const Eigen::Vector2d& r) {
  return std::min(a.x(), b.x()) <= r.x() && r.x() <= std::max(a.x(), b.x()) && std::min(a.y(), b.y()) <= r.y() &&
         r.y() <= std::max(a.y(), b.y());
}

}  // namespace

Intersection segment_segment(const Eigen::Vector2d& p0, const Eigen::Vector2d& p1, const Eigen::Vector2d& q0,
                             const Eigen::Vector2d& q1) {
  const int d0 = orient2d(p0, p1, q0), d1 = orient2d(p0, p1, q1);
  const int d2 = orient2d(q0, q1, p0), d3 = orient2d(q0, q1, p1);
  if (d0 * d1 < 0 && d2 * d3 < 0) return Intersection::crossing;
  if ((d0 == 0 && within(p0, p1, q0)) || (d1 == 0 && within(p0, p1, q1)) || (d2 == 0 && within(q0, q1, p0)) ||
      (d3 == 0 && within(q0, q1, p1)))
    return Intersection::touching;
  return Intersection::none;
}

}  // namespace percussion::geometry
