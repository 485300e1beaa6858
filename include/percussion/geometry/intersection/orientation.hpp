#pragma once
// Exact signs of the orientation determinants, the building block of every intersection predicate here: a
// floating-point evaluation with Shewchuk's static error bound decides almost every case, and an exact GMP
// integer evaluation of the same determinant decides the rest (near-degenerate and degenerate inputs). Finite
// coordinates (a non-finite one gives 0).
#include <Eigen/Core>

namespace percussion::geometry {

inline int sign_of(double v) { return (v > 0) - (v < 0); }

// Sign of (b − a) × (c − a): +1 if a, b, c turn counterclockwise, −1 clockwise, 0 collinear.
int orient2d(const Eigen::Vector2d& a, const Eigen::Vector2d& b, const Eigen::Vector2d& c);

// Sign of det[a − d; b − d; c − d] = n·(a − d) with n = (b − a) × (c − a): +1 if d lies on the side of the plane
// of a, b, c that n points away from, −1 on the side n points to, 0 coplanar.
int orient3d(const Eigen::Vector3d& a, const Eigen::Vector3d& b, const Eigen::Vector3d& c, const Eigen::Vector3d& d);

}  // namespace percussion::geometry
