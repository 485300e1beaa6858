#pragma once
// A separating slab (notes 000 §2.11): the points within `half` of the plane w·x = offset. While it holds one
// primitive on each side, their distance is at least 2·half, which certifies that every penalty layer reaching no
// further is inactive. Primitives here are spheres (a vertex has radius 0) moving linearly between events, so the
// slab holds until the first one's surface reaches its face.
#include <Eigen/Core>

#include <limits>

namespace percussion::geometry {

struct SeparatingSlab {
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();  // unit; side +1 is where w·x > offset
  double offset = 0;
  double half = 0;

  // Clearance of a sphere on `side` (±1) from the slab's face: ≥ 0 while the sphere stays out of the slab.
  double clearance(int side, const Eigen::Vector3d& center, double radius) const {
    return side * (normal.dot(center) - offset) - radius - half;
  }
  // Time from now until the sphere moving at v reaches the face (0 if it already has; +∞ if it never will).
  double exit_time(int side, const Eigen::Vector3d& center, double radius, const Eigen::Vector3d& v) const {
    const double s = clearance(side, center, radius);
    const double rate = side * normal.dot(v);
    if (s <= 0) return 0.0;
    if (rate >= 0) return std::numeric_limits<double>::infinity();
    return s / -rate;
  }
};

}  // namespace percussion::geometry
