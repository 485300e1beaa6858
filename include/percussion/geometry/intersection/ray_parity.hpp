#pragma once
// Exact crossing tests of the ray from a point in the +x direction with a boundary primitive, for point-in-body
// tests by the parity of the crossings with a closed boundary. Degenerate hits (the ray through a vertex or along
// an edge) are decided by symbolic perturbation of the point, so that a ray through a shared vertex or edge counts
// for exactly one of the primitives around it and the parity stays right. A point on the boundary itself gets an
// arbitrary answer.
#include <Eigen/Core>

namespace percussion::geometry {

// The ray p + t (1, 0), t > 0, crosses segment a b (p moved up by an infinitesimal).
bool ray_crosses_segment(const Eigen::Vector2d& p, const Eigen::Vector2d& a, const Eigen::Vector2d& b);

// The ray p + t (1, 0, 0), t > 0, crosses triangle a b c (p moved by (0, ε, ε²)).
bool ray_crosses_triangle(const Eigen::Vector3d& p, const Eigen::Vector3d& a, const Eigen::Vector3d& b,
                          const Eigen::Vector3d& c);

}  // namespace percussion::geometry
