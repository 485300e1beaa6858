#pragma once
// Closest points between a point and a triangle and between two segments in 3D, as barycentric weights: what a
// contact force between the primitives is distributed with (each side's weights are ≥ 0 and sum to 1). Degenerate
// triangles and segments, and parallel segments, get one valid closest pair.
#include <Eigen/Core>

#include <array>

namespace percussion::geometry {

// Weights (b0, b1, b2) of the triangle point closest to p.
std::array<double, 3> point_triangle_closest(const Eigen::Vector3d& p, const Eigen::Vector3d& t0,
                                             const Eigen::Vector3d& t1, const Eigen::Vector3d& t2);

// Parameters (s, t) in [0, 1]² of the closest points a0 + s (a1 − a0) and b0 + t (b1 − b0).
std::array<double, 2> segment_segment_closest(const Eigen::Vector3d& a0, const Eigen::Vector3d& a1,
                                              const Eigen::Vector3d& b0, const Eigen::Vector3d& b1);

}  // namespace percussion::geometry
