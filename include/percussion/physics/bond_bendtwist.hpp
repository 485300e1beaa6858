#pragma once
// Bond bending and twisting (notes 001 §2.5, eq. 10-11):
//   t = bend_scale · R0 · G_l(q_j) q_i = bend_scale · R0 · vec(q̄_j ⊗ q_i),   V = ½ tᵀ K t,
//   K = diag(k_twist, k_bend, k_bend); t0 is twist about the bond axis, t1, t2 bending.
// vec(q̄_j ⊗ q_i) is the relative rotation in j's body frame, so a world rotation of both ends leaves V
// unchanged. t is bilinear in (q_i, q_j), which makes the Hessian closed form.
// q_j is flipped into q_i's hemisphere like the shear term. V is even in q_j, so the flip only fixes the sign
// of t (what the fracture test and any output see), not the energy or its derivatives.
// [ERRATUM] the paper's R0 = G_l(q0) G_r(q0) is a 3x4 times 3x4 product; we use R0 = G_l(q0) G_r(q0)ᵀ = R(q0)ᵀ,
// i.e. the bond frame rows (notes §7 item 1). The paper's half-angle t (stiffness EI/(4 l0)) is the default;
// BondModel::full_angle_bending doubles t for beam-theory stiffness (item 4).
#include <Eigen/Core>
#include <Eigen/Geometry>  // cross()

#include "percussion/physics/bond_rest.hpp"
#include "percussion/physics/quaternion.hpp"

namespace percussion::physics::bendtwist {

inline double hemisphere_sign(const Eigen::Vector4d& qi, const Eigen::Vector4d& qj) {
  return qi.dot(qj) < 0.0 ? -1.0 : 1.0;
}

// G_l(a) b = s_a t_b − s_b t_a − t_a × t_b = vec(ā ⊗ b): rotation b relative to a, in a's body frame.
inline Eigen::Vector3d relative_vec(const Eigen::Vector4d& a, const Eigen::Vector4d& b) {
  const Eigen::Vector3d ta = a.head<3>(), tb = b.head<3>();
  return a[3] * tb - b[3] * ta - ta.cross(tb);
}

// G_l(q)ᵀ c = q ⊗ (c, 0) = (s c + t × c, −t·c).
inline Eigen::Vector4d gl_transpose_times(const Eigen::Vector4d& q, const Eigen::Vector3d& c) {
  const Eigen::Vector3d tq = q.head<3>();
  Eigen::Vector4d r;
  r.head<3>() = q[3] * c + tq.cross(c);
  r[3] = -tq.dot(c);
  return r;
}

// Local rotation vector t (uses the hemisphere-flipped q_j).
inline Eigen::Vector3d local_rotation(const Eigen::Vector4d& qi, const Eigen::Vector4d& qj, const BondRest& b) {
  const double sign = hemisphere_sign(qi, qj);
  return b.bend_scale * (b.R0 * relative_vec(sign * qj, qi));
}

inline Eigen::Vector3d stiffness_times(const Eigen::Vector3d& t, const BondRest& b) {
  return Eigen::Vector3d(b.k_twist * t[0], b.k_bend * t[1], b.k_bend * t[2]);
}

double energy(const BondDofs& x, const BondRest& b);

// ∇_{q_i} V = s_b G_l(q_j')ᵀ c,  ∇_{q_j} V = −sign · s_b G_l(q_i)ᵀ c,  c = R0ᵀ K t,  q_j' = sign · q_j.
BondDofs gradient(const BondDofs& x, const BondRest& b);

// H = Jᵀ K J + Σ_k (K t)_k ∇²t_k. The second term only couples q_i with q_j:
// ∂²(cᵀ G_l(q_j) q_i)/∂q_i∂q_j = Q_r((c, 0)).
BondHessian hessian(const BondDofs& x, const BondRest& b);

}  // namespace percussion::physics::bendtwist
