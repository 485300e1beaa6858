#pragma once
// Quaternion toolkit for rigid spheres (notes 001 §2.0, §2.4, §2.8).
// Storage is scalar-last, q = (x, y, z, w) = (t, s); products are Hamilton products; q maps body to world.
// Everything is fixed-size and inline because it runs per particle and per bond in the hot loops.
#include <Eigen/Core>
#include <Eigen/Geometry>  // cross()
#include <cmath>

namespace percussion::quat {

using Quat = Eigen::Vector4d;  // (x, y, z, w), w scalar

inline Quat identity() { return Quat(0.0, 0.0, 0.0, 1.0); }

// (a,α)⊗(b,β) = (α b + β a + a×b, αβ − a·b)
inline Quat mul(const Quat& a, const Quat& b) {
  const Eigen::Vector3d av = a.head<3>(), bv = b.head<3>();
  Quat r;
  r.head<3>() = a[3] * bv + b[3] * av + av.cross(bv);
  r[3] = a[3] * b[3] - av.dot(bv);
  return r;
}

inline Quat conj(const Quat& q) { return Quat(-q[0], -q[1], -q[2], q[3]); }

// [v]× with [v]× a = v × a.
inline Eigen::Matrix3d cross_matrix(const Eigen::Vector3d& v) {
  Eigen::Matrix3d m;
  m << 0.0, -v[2], v[1],
       v[2], 0.0, -v[0],
       -v[1], v[0], 0.0;
  return m;
}

// R(q) = (s² − |t|²) I + 2 t tᵀ + 2 s [t]×. Homogeneous quadratic on purpose: for non-unit q it is
// |q|² times a rotation, which lets the shear potential avoid normalising (R(n)/|n|²).
inline Eigen::Matrix3d rotation_matrix(const Quat& q) {
  const Eigen::Vector3d t = q.head<3>();
  const double s = q[3];
  return (s * s - t.squaredNorm()) * Eigen::Matrix3d::Identity() + 2.0 * t * t.transpose() +
         2.0 * s * cross_matrix(t);
}

// R(q) v without forming the matrix.
inline Eigen::Vector3d rotate(const Quat& q, const Eigen::Vector3d& v) {
  const Eigen::Vector3d t = q.head<3>();
  const double s = q[3];
  return (s * s - t.squaredNorm()) * v + (2.0 * t.dot(v)) * t + (2.0 * s) * t.cross(v);
}

// q_a ⊗ q_b = Ql(q_a) q_b = Qr(q_b) q_a   (eqs. 40–42)
inline Eigen::Matrix4d Ql(const Quat& q) {
  const Eigen::Vector3d t = q.head<3>();
  Eigen::Matrix4d m;
  m.topLeftCorner<3, 3>() = q[3] * Eigen::Matrix3d::Identity() + cross_matrix(t);
  m.topRightCorner<3, 1>() = t;
  m.bottomLeftCorner<1, 3>() = -t.transpose();
  m(3, 3) = q[3];
  return m;
}

inline Eigen::Matrix4d Qr(const Quat& q) {
  const Eigen::Vector3d t = q.head<3>();
  Eigen::Matrix4d m;
  m.topLeftCorner<3, 3>() = q[3] * Eigen::Matrix3d::Identity() - cross_matrix(t);
  m.topRightCorner<3, 1>() = t;
  m.bottomLeftCorner<1, 3>() = -t.transpose();
  m(3, 3) = q[3];
  return m;
}

// G_l(q) = [s I − [t]×, −t]: G_l(q)ᵀ y = q ⊗ (y,0) is a body-frame increment (eq. 47).
inline Eigen::Matrix<double, 3, 4> Gl(const Quat& q) {
  const Eigen::Vector3d t = q.head<3>();
  Eigen::Matrix<double, 3, 4> m;
  m.leftCols<3>() = q[3] * Eigen::Matrix3d::Identity() - cross_matrix(t);
  m.col(3) = -t;
  return m;
}

// G_r(q) = [s I + [t]×, −t]: G_r(q)ᵀ y = (y,0) ⊗ q is a world-frame increment.
inline Eigen::Matrix<double, 3, 4> Gr(const Quat& q) {
  const Eigen::Vector3d t = q.head<3>();
  Eigen::Matrix<double, 3, 4> m;
  m.leftCols<3>() = q[3] * Eigen::Matrix3d::Identity() + cross_matrix(t);
  m.col(3) = -t;
  return m;
}

namespace detail {
// sin(x)/x, with its Taylor series where the quotient would lose digits.
inline double sinc(double x) {
  if (std::abs(x) < 1e-4) {
    const double x2 = x * x;
    return 1.0 - x2 / 6.0 * (1.0 - x2 / 20.0);
  }
  return std::sin(x) / x;
}

// cos a and sin(a)/a for a ≥ 0. A Newton step turns a particle by a small fraction of a radian: below 0.05 rad their
// Taylor series to a⁸, exact to a rounding (the next terms are below 3e-20), take multiplications only where libm's
// cos and sinc's division are a large share of the retraction's cost.
inline void cos_sinc(double a, double& cos_a, double& sinc_a) {
  if (a < 0.05) {
    const double x = a * a;
    cos_a = 1.0 - x * (1.0 / 2 - x * (1.0 / 24 - x * (1.0 / 720 - x * (1.0 / 40320))));
    sinc_a = 1.0 - x * (1.0 / 6 - x * (1.0 / 120 - x * (1.0 / 5040 - x * (1.0 / 362880))));
    return;
  }
  cos_a = std::cos(a);
  sinc_a = std::sin(a) / a;
}
}  // namespace detail

// Rotation by |theta| about theta/|theta|: (sin(a/2) axis, cos(a/2)), written with sinc so θ → 0 is smooth.
inline Quat from_rotation_vector(const Eigen::Vector3d& theta) {
  const double half = 0.5 * theta.norm();
  Quat q;
  q.head<3>() = (0.5 * detail::sinc(half)) * theta;
  q[3] = std::cos(half);
  return q;
}

// Inverse of from_rotation_vector (q scaled by any positive factor) for angles below 2π: 2 atan2(|t|, s) t/|t|.
// No canonical sign on purpose: −q gives the angle 2π − θ about the opposite axis, the same rotation, so a
// step's quaternion q_{n+1} ⊗ q̄_n keeps the turn that exp(ωh) made even beyond π.
inline Eigen::Vector3d rotation_vector(const Quat& q) {
  const Eigen::Vector3d t = q.head<3>();
  const double n = t.norm(), s = q[3];
  if (n < 1e-4 * s) {  // atan(x)/x = 1 − x²/3 + O(x⁴), x = n/s: no 0/0 near the identity
    const double x2 = (n / s) * (n / s);
    return (2.0 / s * (1.0 - x2 / 3.0)) * t;
  }
  if (n == 0.0) return Eigen::Vector3d::Zero();  // −identity: a full turn about an undefined axis
  return (2.0 * std::atan2(n, s) / n) * t;
}

// Geodesic on S³ from q along the tangent vector (eqs. 20–21), then renormalised (eq. 22) against drift.
inline Quat exp_map(const Quat& q, const Eigen::Vector4d& tangent) {
  const double a = tangent.norm();
  double cos_a, sinc_a;
  detail::cos_sinc(a, cos_a, sinc_a);
  const Quat r = cos_a * q + sinc_a * tangent;
  return r * (1.0 / r.norm());
}

// exp_map(q, G_l(q)ᵀ y): rotates the particle by 2|y| about y in its body frame (half-angle coordinates).
inline Quat exp_body(const Quat& q, const Eigen::Vector3d& y) {
  return exp_map(q, Gl(q).transpose() * y);
}

// One explicit rotation step with a world-frame angular velocity: q ← exp(ω dt) ⊗ q, normalised.
inline Quat advance_world(const Quat& q, const Eigen::Vector3d& omega_world, double dt) {
  const Quat r = mul(from_rotation_vector(omega_world * dt), q);
  return r / r.norm();
}

// (ω, 0) = 2 q̇ ⊗ q̄, ω in the world frame (eq. 53).
inline Eigen::Vector3d omega_from_qdot(const Quat& q, const Quat& qdot) {
  return 2.0 * mul(qdot, conj(q)).head<3>();
}

// q̇ = ½ (ω, 0) ⊗ q (eq. 52).
inline Quat qdot_from_omega(const Quat& q, const Eigen::Vector3d& omega) {
  return 0.5 * mul(Quat(omega[0], omega[1], omega[2], 0.0), q);
}

// World-frame torque of a potential from its Euclidean q-gradient: τ = −½ G_r(q) ∇_q V.
inline Eigen::Vector3d torque_world(const Quat& q, const Quat& grad_q) {
  return -0.5 * (Gr(q) * grad_q);
}

}  // namespace percussion::quat
