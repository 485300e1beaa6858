#include "percussion/geometry/intersection/edge_triangle.hpp"

#include "percussion/geometry/intersection/orientation.hpp"
#include "percussion/geometry/intersection/segment_segment.hpp"

namespace percussion::geometry {
namespace {

// The point without coordinate k (a projection along axis k).
Eigen::Vector2d drop(const Eigen::Vector3d& p, int k) { return {p[(k + 1) % 3], p[(k + 2) % 3]}; }

// Closed segment and closed triangle of one plane, projected along an axis the plane is not parallel to.
bool meets_in_plane(const Eigen::Vector3d& e0, const Eigen::Vector3d& e1, const Eigen::Vector3d* t, int k) {
  const Eigen::Vector2d a = drop(t[0], k), b = drop(t[1], k), c = drop(t[2], k);
  const Eigen::Vector2d p = drop(e0, k), q = drop(e1, k);
  const int sense = orient2d(a, b, c);
  auto inside = [&](const Eigen::Vector2d& r) {
    return orient2d(a, b, r) != -sense && orient2d(b, c, r) != -sense && orient2d(c, a, r) != -sense;
  };
  return inside(p) || inside(q) || segment_segment(p, q, a, b) != Intersection::none ||
         segment_segment(p, q, b, c) != Intersection::none || segment_segment(p, q, c, a) != Intersection::none;
}

}  // namespace

Intersection segment_segment_3d(const Eigen::Vector3d& p0, const Eigen::Vector3d& p1, const Eigen::Vector3d& q0,
                                const Eigen::Vector3d& q1) {
  // Coplanar segments meet iff their projections along all three axes meet: at least one projection is one-to-one
  // on their common plane (or line), and every projection of a common point is common.
  if (orient3d(p0, p1, q0, q1) != 0) return Intersection::none;
  for (int k = 0; k < 3; ++k)
    if (segment_segment(drop(p0, k), drop(p1, k), drop(q0, k), drop(q1, k)) == Intersection::none)
      return Intersection::none;
  return Intersection::touching;
}

Intersection edge_triangle(const Eigen::Vector3d& e0, const Eigen::Vector3d& e1, const Eigen::Vector3d& t0,
                           const Eigen::Vector3d& t1, const Eigen::Vector3d& t2) {
  const int s0 = orient3d(t0, t1, t2, e0), s1 = orient3d(t0, t1, t2, e1);
  if (s0 * s1 > 0) return Intersection::none;
  if (s0 != 0 || s1 != 0) {
    // The segment meets the plane at one point; it is in the closed triangle iff the segment's line passes on no
    // strictly opposite sides of the three edges.
    const int a = orient3d(e0, e1, t0, t1), b = orient3d(e0, e1, t1, t2), c = orient3d(e0, e1, t2, t0);
    if ((a < 0 || b < 0 || c < 0) && (a > 0 || b > 0 || c > 0)) return Intersection::none;
    const bool interior = s0 * s1 < 0 && a != 0 && a == b && b == c;
    return interior ? Intersection::crossing : Intersection::touching;
  }
  // Coplanar: project along an axis the triangle's plane is not parallel to (a non-zero normal component).
  const Eigen::Vector3d t[3] = {t0, t1, t2};
  for (int k = 0; k < 3; ++k)
    if (orient2d(drop(t0, k), drop(t1, k), drop(t2, k)) != 0)
      return meets_in_plane(e0, e1, t, k) ? Intersection::touching : Intersection::none;
  // A degenerate triangle: its edges.
  for (int i = 0; i < 3; ++i)
    if (segment_segment_3d(e0, e1, t[i], t[(i + 1) % 3]) != Intersection::none) return Intersection::touching;
  return Intersection::none;
}

}  // namespace percussion::geometry
