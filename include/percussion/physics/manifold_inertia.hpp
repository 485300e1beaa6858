#pragma once
// Backward-Euler inertia term of the incremental potential for one sphere (notes 001 §2.2 eqs. 5–6, §2.8):
//   E = m/(2h²)|p − p̂|² + c/2 |q − q̂|²,   c = (8/5) m r² / h²   (constant extended mass, §2.1),
// in the reduced coordinates (δp, y) of manifold_bond.hpp. q̂ = 2q_n − q_{n−1} is in general not unit.
#include <Eigen/Core>
#include <algorithm>

#include "percussion/physics/quaternion.hpp"

namespace percussion::physics {

struct InertiaReduced {
  double energy;
  Eigen::Matrix<double, 6, 1> gradient;      // (m/h² (p − p̂), c G_l(q)(q − q̂))
  Eigen::Matrix<double, 6, 1> hessian_diag;  // the reduced Hessian is diagonal
};

inline double inertia_energy(const Eigen::Vector3d& p, const quat::Quat& q, const Eigen::Vector3d& p_hat,
                             const quat::Quat& q_hat, double mass, double radius, double h) {
  const double inv_h2 = 1.0 / (h * h);
  const double c = 1.6 * mass * radius * radius * inv_h2;
  return 0.5 * (mass * inv_h2 * (p - p_hat).squaredNorm() + c * (q - q_hat).squaredNorm());
}

// Rotational Hessian: c G_l G_lᵀ = c|q|² I3 from the Euclidean part, minus the curvature term
// (q·∇_q E) I3 = c (|q|² − q·q̂) I3, leaves c (q·q̂) I3. It is positive unless the iterate is more than 90°
// (on S³) from q̂; there it is clamped to 0 (PSD projection, notes §2.8).
inline InertiaReduced inertia(const Eigen::Vector3d& p, const quat::Quat& q, const Eigen::Vector3d& p_hat,
                              const quat::Quat& q_hat, double mass, double radius, double h) {
  const double inv_h2 = 1.0 / (h * h);
  const double mt = mass * inv_h2;
  const double c = 1.6 * mass * radius * radius * inv_h2;
  const Eigen::Vector3d dp = p - p_hat;
  const Eigen::Vector4d dq = q - q_hat;
  InertiaReduced out;
  out.energy = 0.5 * (mt * dp.squaredNorm() + c * dq.squaredNorm());
  out.gradient.head<3>() = mt * dp;
  out.gradient.tail<3>() = c * (quat::Gl(q) * dq);
  out.hessian_diag.head<3>().setConstant(mt);
  out.hessian_diag.tail<3>().setConstant(std::max(0.0, c * q.dot(q_hat)));
  return out;
}

}  // namespace percussion::physics
