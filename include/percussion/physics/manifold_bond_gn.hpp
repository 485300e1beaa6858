#pragma once
// Gauss–Newton Hessian of one bond in reduced coordinates (notes 001 §2.9, "cheaper alternative").
//
// Every bond potential is a weighted square of a residual, V = ½ rᵀ W r with r ∈ R⁷:
//   stretch   r_0     = L − l0,                     W = k_n
//   shear     r_1..3  = u = d − d_q,                W = k_t I
//   bend/twist r_4..6 = t = s_b R0 vec(q̄_j ⊗ q_i),  W = diag(k_twist, k_bend, k_bend).
// With J = ∂r/∂e along the retraction e = (δp_i, y_i, δp_j, y_j) at e = 0 (i.e. (∂r/∂x) 𝒢ᵀ), the exact
// reduced Hessian is JᵀWJ + Σ (Wr)_k ∇²r_k − curvature. Gauss–Newton keeps JᵀWJ only: PSD by construction,
// exact wherever all residuals vanish (so near rest it loses nothing), and no eigen-solve per bond.
// Energy and gradient come from the same code as bond_reduced, bit for bit.
//
// Closed-form Jacobian blocks (the q-derivatives along the body-frame retraction q ← q ⊗ (y, 0)):
//   ∂r_0/∂δp_j = dᵀ,  ∂u/∂δp_j = P/L, P = I − d dᵀ;  position-i blocks are the negatives (translation).
//   d_q depends on n̂ = n/|n| only; a change δn turns it by ω = 2 vec(δn ⊗ n̄)/|n|² = 2 G_r(n) δn/|n|²,
//   so ∂u/∂y_a = −∂d_q/∂y_a = (2/|n|²) [d_q]× G_r(n) G_l(q_a)ᵀ, with δn = G_l(q_a)ᵀ y_a (q_a = q_i or q_j').
//   t is bilinear: ∂t/∂q_i = s_b R0 G_l(q_j'), ∂t/∂q_j' = −s_b R0 G_l(q_i), and for any 4-vectors a, b
//   G_l(a) G_l(b)ᵀ = s I + [v]× with (v, s) = ā ⊗ b; at the iterate ∂t/∂y_i = s_b R0 (s I + [v]×),
//   ∂t/∂y_j = −s_b R0 (s I − [v]×) with (v, s) = q̄_j' ⊗ q_i.
// At the step midpoint (manifold_bond.hpp, ReducedAt) r is evaluated at x_e and the blocks are taken along the
// iterate's retraction, J = s (∂r/∂x)(x_e) 𝒢(q)ᵀ, so the Gauss–Newton Hessian becomes s² JᵀWJ.
#include <Eigen/Core>

#include "percussion/physics/bond_bendtwist.hpp"
#include "percussion/physics/bond_rest.hpp"
#include "percussion/physics/manifold_bond.hpp"
#include "percussion/physics/quaternion.hpp"

namespace percussion::physics {

using BondResidual = Eigen::Matrix<double, 7, 1>;            // (L − l0, u, t)
using BondResidualJacobian = Eigen::Matrix<double, 7, 12>;   // ∂r/∂(δp_i, y_i, δp_j, y_j)

// Nonzero Jacobian blocks; the position-i blocks are the negatives of the position-j ones.
struct BondResidualBlocks {
  Eigen::Vector3d d;                    // ∂(L − l0)/∂δp_j (as a column)
  Eigen::Matrix3d shear_p;              // ∂u/∂δp_j = P/L, symmetric
  Eigen::Matrix3d shear_yi, shear_yj;   // ∂u/∂y_i, ∂u/∂y_j
  Eigen::Matrix3d bend_yi, bend_yj;     // ∂t/∂y_i, ∂t/∂y_j
};

namespace detail {
// qjs = sign · q_j (hemisphere-flipped), d and 1/L of the state r is evaluated at; the y-blocks are taken along
// the retraction of ri, rjs (= sign · r_j), the same quaternions or the iterate's (unscaled: J/s).
inline BondResidualBlocks residual_blocks(const quat::Quat& qi, const Eigen::Vector4d& qjs, const Eigen::Vector3d& d,
                                          double inv_L, const BondRest& rest, const quat::Quat& ri,
                                          const Eigen::Vector4d& rjs) {
  BondResidualBlocks J;
  J.d = d;
  const Eigen::Matrix3d ddT = d * d.transpose();  // evaluated first: a folded scalar would break symmetry
  J.shear_p = inv_L * (Eigen::Matrix3d::Identity() - ddT);

  const Eigen::Vector4d n = qi + qjs;
  const double inv_nu = 1.0 / n.squaredNorm();
  const Eigen::Vector3d dq = quat::rotate(n, rest.d0) * inv_nu;
  const Eigen::Matrix<double, 3, 4> Dn = (2.0 * inv_nu) * (quat::cross_matrix(dq) * quat::Gr(n));  // −∂d_q/∂n
  J.shear_yi.noalias() = Dn * quat::Gl(ri).transpose();
  J.shear_yj.noalias() = Dn * quat::Gl(rjs).transpose();

  // s_b R0 G_l(a) G_l(b)ᵀ = s_b R0 ((a·b) I + [vec(ā ⊗ b)]×)
  auto bend = [&](const Eigen::Vector4d& a, const Eigen::Vector4d& b) -> Eigen::Matrix3d {
    const Eigen::Matrix3d R0v = rest.bend_scale * (rest.R0 * quat::cross_matrix(bendtwist::relative_vec(a, b)));
    const Eigen::Matrix3d R0s = (rest.bend_scale * a.dot(b)) * rest.R0;
    return R0s + R0v;
  };
  J.bend_yi = bend(qjs, ri);
  J.bend_yj = -bend(qi, rjs);
  return J;
}
}  // namespace detail

// W as a vector, in the residual order of BondResidual.
inline BondResidual bond_residual_weights(const BondRest& rest) {
  BondResidual w;
  w << rest.kn, rest.kt, rest.kt, rest.kt, rest.k_twist, rest.k_bend, rest.k_bend;
  return w;
}

// r(x); ½ rᵀ W r equals bond_energy.
inline BondResidual bond_residuals(const Eigen::Vector3d& pi, const quat::Quat& qi, const Eigen::Vector3d& pj,
                                   const quat::Quat& qj, const BondRest& rest) {
  const double sign = qi.dot(qj) < 0.0 ? -1.0 : 1.0;
  const Eigen::Vector4d qjs = sign * qj;
  const Eigen::Vector4d n = qi + qjs;
  const Eigen::Vector3d delta = pj - pi;
  const double L = delta.norm();
  BondResidual r;
  r[0] = L - rest.l0;
  r.segment<3>(1) = delta / L - quat::rotate(n, rest.d0) / n.squaredNorm();
  r.segment<3>(4) = rest.bend_scale * (rest.R0 * bendtwist::relative_vec(qjs, qi));
  return r;
}

// Dense J (tests, diagnostics); the kernel below works on the blocks.
inline BondResidualJacobian bond_residual_jacobian(const Eigen::Vector3d& pi, const quat::Quat& qi,
                                                   const Eigen::Vector3d& pj, const quat::Quat& qj,
                                                   const BondRest& rest) {
  const double sign = qi.dot(qj) < 0.0 ? -1.0 : 1.0;
  const Eigen::Vector3d delta = pj - pi;
  const double inv_L = 1.0 / delta.norm();
  const BondResidualBlocks B = detail::residual_blocks(qi, sign * qj, delta * inv_L, inv_L, rest, qi, sign * qj);
  BondResidualJacobian J = BondResidualJacobian::Zero();
  J.block<1, 3>(0, 0) = -B.d.transpose();
  J.block<1, 3>(0, 6) = B.d.transpose();
  J.block<3, 3>(1, 0) = -B.shear_p;
  J.block<3, 3>(1, 3) = B.shear_yi;
  J.block<3, 3>(1, 6) = B.shear_p;
  J.block<3, 3>(1, 9) = B.shear_yj;
  J.block<3, 3>(4, 3) = B.bend_yi;
  J.block<3, 3>(4, 9) = B.bend_yj;
  return J;
}

// Energy and reduced gradient as bond_reduced; Hessian = s² JᵀWJ (s = at.scale), assembled from 3×3 blocks:
//   pos–pos  A   = k_n d dᵀ + k_t P/L²                 ([[A, −A], [−A, A]])
//   pos_j–y  C_a = k_t (P/L) S_a                        (pos_i rows: −C_a)
//   y_a–y_b      = k_t S_aᵀ S_b + B_aᵀ K B_b            (S = shear, B = bend/twist blocks)
// with s² folded into the weights k.
inline BondReduced bond_reduced_gauss_newton(const Eigen::Vector3d& pi, const quat::Quat& qi,
                                             const Eigen::Vector3d& pj, const quat::Quat& qj,
                                             const BondRest& rest, const ReducedAt& at) {
  BondReduced out;
  const detail::BondFirstOrder f = detail::bond_energy_gradient(pi, qi, pj, qj, rest, at, out);
  const BondResidualBlocks J = detail::residual_blocks(qi, f.qjs, f.d, f.inv_L, rest, at.qi, f.sign * at.qj);

  const double s2 = at.scale * at.scale;
  const double kn = s2 * rest.kn, kt = s2 * rest.kt;
  const Eigen::Matrix3d ddT = f.d * f.d.transpose();  // evaluated first, as in residual_blocks
  const Eigen::Matrix3d A = kn * ddT + (kt * f.inv_L) * J.shear_p;  // (P/L)² = P/L²
  const Eigen::Matrix3d Pkt = kt * J.shear_p;
  const Eigen::Matrix3d Ci = Pkt * J.shear_yi, Cj = Pkt * J.shear_yj;
  const Eigen::Vector3d kdiag(s2 * rest.k_twist, s2 * rest.k_bend, s2 * rest.k_bend);
  const Eigen::Matrix3d KBi = kdiag.asDiagonal() * J.bend_yi, KBj = kdiag.asDiagonal() * J.bend_yj;
  const Eigen::Matrix3d ktSi = kt * J.shear_yi, ktSj = kt * J.shear_yj;
  Eigen::Matrix3d Hii = J.shear_yi.transpose() * ktSi + J.bend_yi.transpose() * KBi;
  Eigen::Matrix3d Hjj = J.shear_yj.transpose() * ktSj + J.bend_yj.transpose() * KBj;
  const Eigen::Matrix3d Hij = J.shear_yi.transpose() * ktSj + J.bend_yi.transpose() * KBj;
  Hii = (0.5 * (Hii + Hii.transpose())).eval();  // exact symmetry for the assembly and CG
  Hjj = (0.5 * (Hjj + Hjj.transpose())).eval();

  Hessian12& H = out.hessian;
  H.block<3, 3>(0, 0) = A;
  H.block<3, 3>(6, 6) = A;
  H.block<3, 3>(0, 6) = -A;
  H.block<3, 3>(6, 0) = -A;
  H.block<3, 3>(0, 3) = -Ci;
  H.block<3, 3>(6, 3) = Ci;
  H.block<3, 3>(0, 9) = -Cj;
  H.block<3, 3>(6, 9) = Cj;
  H.block<3, 3>(3, 0) = -Ci.transpose();
  H.block<3, 3>(3, 6) = Ci.transpose();
  H.block<3, 3>(9, 0) = -Cj.transpose();
  H.block<3, 3>(9, 6) = Cj.transpose();
  H.block<3, 3>(3, 3) = Hii;
  H.block<3, 3>(9, 9) = Hjj;
  H.block<3, 3>(3, 9) = Hij;
  H.block<3, 3>(9, 3) = Hij.transpose();
  return out;
}

// The same at the iterate itself.
inline BondReduced bond_reduced_gauss_newton(const Eigen::Vector3d& pi, const quat::Quat& qi,
                                             const Eigen::Vector3d& pj, const quat::Quat& qj,
                                             const BondRest& rest) {
  return bond_reduced_gauss_newton(pi, qi, pj, qj, rest, {qi, qj, 1.0});
}

}  // namespace percussion::physics
