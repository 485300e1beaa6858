#pragma once
// One bond's energy, Riemannian gradient and Riemannian Hessian in reduced coordinates for the implicit
// (manifold Newton) BDEM solver (notes 001 §2.8–2.9).
//
// Reduced coordinates per particle are (δp, y) with the retraction p ← p + δp, q ← quat::exp_body(q, y),
// i.e. body-frame half-angle increments, 𝒢 = blockdiag(I3, G_l(q_i), I3, G_l(q_j)) (12 × 14). Then
//   gradient = 𝒢 ∇V,
//   Hessian  = 𝒢 ∇²V 𝒢ᵀ − diag(0, (q_i·∇_{q_i}V) I3, 0, (q_j·∇_{q_j}V) I3),
// the second term being the bond's share of the S³ curvature (Weingarten) term. The curvature term is
// linear in the gradient, so per-bond blocks sum exactly to the global Riemannian Hessian; this is what
// makes per-element PSD projection (IPC-style) possible. Expect every loaded bond block to be indefinite
// (see project_psd_bond), with negative eigenvalues of order |force|·L, small next to k_n L².
//
// The midpoint form (notes §2.2, eqs. 2–4) evaluates V at x_e = (x + x_n)/2, quaternions averaged as
// 4-vectors (chords, not unit; every potential here is valid off S³), but minimises over the iterate x. By
// the chain rule, with s = dx_e/dx = ½, the reduced gradient is s 𝒢(q)∇V(x_e) and the reduced Hessian
// s² 𝒢(q)∇²V(x_e)𝒢(q)ᵀ − s (q·∇_qV(x_e)) I3: 𝒢 and the curvature term belong to the iterate's q, not to x_e.
#include <Eigen/Core>
#include <Eigen/Eigenvalues>

#include "percussion/physics/bond_bendtwist.hpp"
#include "percussion/physics/bond_rest.hpp"
#include "percussion/physics/bond_shear.hpp"
#include "percussion/physics/bond_stretch.hpp"
#include "percussion/physics/quaternion.hpp"

namespace percussion::physics {

using Reduced12 = Eigen::Matrix<double, 12, 1>;   // (δp_i, y_i, δp_j, y_j)
using Hessian12 = Eigen::Matrix<double, 12, 12>;

struct BondReduced {
  double energy;
  Reduced12 gradient;
  Hessian12 hessian;
};

// Whose reduced coordinates a bond's derivatives are taken in (see the header comment): the iterate's
// quaternions and s = dx_e/dx. Evaluating at the iterate itself is {q_i, q_j, 1}.
struct ReducedAt {
  quat::Quat qi, qj;
  double scale;
};

// 𝒢 for one particle pair, 12 × 14. For tests and for anything that wants the dense operator; the
// kernels below apply it block by block instead.
inline Eigen::Matrix<double, 12, 14> reduction_operator(const quat::Quat& qi, const quat::Quat& qj) {
  Eigen::Matrix<double, 12, 14> G = Eigen::Matrix<double, 12, 14>::Zero();
  G.block<3, 3>(0, kPosI).setIdentity();
  G.block<3, 4>(3, kRotI) = quat::Gl(qi);
  G.block<3, 3>(6, kPosJ).setIdentity();
  G.block<3, 4>(9, kRotJ) = quat::Gl(qj);
  return G;
}

// 𝒢 g.
inline Reduced12 reduce_gradient(const BondDofs& g, const quat::Quat& qi, const quat::Quat& qj) {
  Reduced12 r;
  r.segment<3>(0) = g.segment<3>(kPosI);
  r.segment<3>(3) = quat::Gl(qi) * g.segment<4>(kRotI);
  r.segment<3>(6) = g.segment<3>(kPosJ);
  r.segment<3>(9) = quat::Gl(qj) * g.segment<4>(kRotJ);
  return r;
}

// 𝒢 H 𝒢ᵀ without multiplying 𝒢's zero and identity blocks (≈ 600 multiply-adds instead of ≈ 4400 for the
// dense 12×14·14×14·14×12 product). Symmetrised, so the eigen-solver and the assembly see an exactly
// symmetric block.
inline Hessian12 reduce_hessian(const BondHessian& H, const quat::Quat& qi, const quat::Quat& qj) {
  const Eigen::Matrix<double, 3, 4> Gi = quat::Gl(qi), Gj = quat::Gl(qj);
  Eigen::Matrix<double, 14, 12> T;  // H 𝒢ᵀ
  T.middleCols<3>(0) = H.middleCols<3>(kPosI);
  T.middleCols<3>(3).noalias() = H.middleCols<4>(kRotI) * Gi.transpose();
  T.middleCols<3>(6) = H.middleCols<3>(kPosJ);
  T.middleCols<3>(9).noalias() = H.middleCols<4>(kRotJ) * Gj.transpose();
  Hessian12 R;
  R.middleRows<3>(0) = T.middleRows<3>(kPosI);
  R.middleRows<3>(3).noalias() = Gi * T.middleRows<4>(kRotI);
  R.middleRows<3>(6) = T.middleRows<3>(kPosJ);
  R.middleRows<3>(9).noalias() = Gj * T.middleRows<4>(kRotJ);
  return 0.5 * (R + R.transpose());
}

// Clamp the eigenvalues of a symmetric matrix to >= 0. Subtracting only the negative eigenpairs
// (H − Σ_{λ<0} λ v vᵀ = V max(Λ, 0) Vᵀ) leaves an already PSD matrix bit-for-bit unchanged and costs
// nothing beyond the decomposition when few eigenvalues are negative.
template <int N>
inline void project_psd(Eigen::Matrix<double, N, N>& H) {
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, N, N>> es(H);
  const auto& lambda = es.eigenvalues();  // ascending
  for (int k = 0; k < N && lambda[k] < 0.0; ++k) {
    const Eigen::Matrix<double, N, 1> v = es.eigenvectors().col(k);
    H.noalias() -= (lambda[k] * v) * v.transpose();
  }
}

// project_psd<12> for a bond block, using that a bond's energy is invariant under a common translation:
// H c = 0 exactly for c = (a, 0, a, 0) (the position blocks are [[A, −A], [−A, A]] and the mixed ones
// ±C by construction). In the orthonormal basis S = (rel = (δp_j − δp_i)/√2, y_i, y_j) of the complement,
// H = S (SᵀHS) Sᵀ, so clamping the 9×9 SᵀHS and mapping back equals clamping H, for ≈ 60% of the
// eigen-solver's cost. (No cheap "already PSD?" pre-test: along rigid rotations the Hessian equals
// |ω|²(g·Δ) − (g·ω)(ω·Δ), g = ∇_{p_j}V, Δ = p_j − p_i, which is negative for some ω unless g ∥ Δ in
// tension, so every sheared or compressed bond block is indefinite.)
inline void project_psd_bond(Hessian12& H) {
  using Matrix9 = Eigen::Matrix<double, 9, 9>;
  constexpr double r = 0.70710678118654752440;  // 1/√2
  Eigen::Matrix<double, 9, 12> StH;
  StH.topRows<3>() = r * (H.middleRows<3>(6) - H.middleRows<3>(0));
  StH.middleRows<3>(3) = H.middleRows<3>(3);
  StH.bottomRows<3>() = H.middleRows<3>(9);
  Matrix9 A;
  A.leftCols<3>() = r * (StH.middleCols<3>(6) - StH.middleCols<3>(0));
  A.middleCols<3>(3) = StH.middleCols<3>(3);
  A.rightCols<3>() = StH.middleCols<3>(9);

  const Eigen::SelfAdjointEigenSolver<Matrix9> es(A);
  const auto& lambda = es.eigenvalues();  // ascending
  for (int k = 0; k < 9 && lambda[k] < 0.0; ++k) {
    const Eigen::Matrix<double, 9, 1> v = es.eigenvectors().col(k);
    Reduced12 w;  // S v
    w.segment<3>(0) = -r * v.head<3>();
    w.segment<3>(3) = v.segment<3>(3);
    w.segment<3>(6) = r * v.head<3>();
    w.segment<3>(9) = v.tail<3>();
    H.noalias() -= (lambda[k] * w) * w.transpose();
  }
}

// V_stretch + V_shear + V_bendtwist only: what the line search evaluates at every trial state.
inline double bond_energy(const Eigen::Vector3d& pi, const quat::Quat& qi, const Eigen::Vector3d& pj,
                          const quat::Quat& qj, const BondRest& rest) {
  const double sign = qi.dot(qj) < 0.0 ? -1.0 : 1.0;  // same hemisphere rule as shear and bendtwist
  const Eigen::Vector4d n = qi + sign * qj;
  const Eigen::Vector3d delta = pj - pi;
  const double L = delta.norm();
  const double stretch = L - rest.l0;
  // Shear surrogate ½ k_t |d − R(n) d0 / |n|²|² (bond_shear.hpp).
  const Eigen::Vector3d u = delta / L - quat::rotate(n, rest.d0) / n.squaredNorm();
  const Eigen::Vector3d t = rest.bend_scale * (rest.R0 * bendtwist::relative_vec(sign * qj, qi));
  return 0.5 * (rest.kn * stretch * stretch + rest.kt * u.squaredNorm() + t.dot(bendtwist::stiffness_times(t, rest)));
}

namespace detail {
// The state pieces that the exact and the Gauss–Newton Hessians reuse after the gradient.
struct BondFirstOrder {
  double sign;               // +1, or −1 when q_j is flipped into q_i's hemisphere
  Eigen::Vector4d qjs;       // sign · q_j
  Eigen::Vector3d d;         // (p_j − p_i)/L
  double L, inv_L;
  Eigen::Vector3d t;         // bend/twist rotation vector
  Eigen::Vector4d gqi, gqj;  // Euclidean ∇_{q_i}V and ∇_{q_j}V (w.r.t. the stored q_j)
};

// Energy and reduced gradient of one bond into out.energy, out.gradient; shared by bond_reduced and
// bond_reduced_gauss_newton so both see bit-identical first-order terms.
// sign, qjs, d, L and 1/L only: what the Gauss–Newton Hessian reads (manifold_bond_gn.hpp).
inline BondFirstOrder bond_geometry(const Eigen::Vector3d& pi, const quat::Quat& qi, const Eigen::Vector3d& pj,
                                   const quat::Quat& qj) {
  BondFirstOrder f;
  f.sign = qi.dot(qj) < 0.0 ? -1.0 : 1.0;
  f.qjs = f.sign * qj;  // q_j in q_i's hemisphere
  const Eigen::Vector3d delta = pj - pi;
  f.L = delta.norm();
  f.inv_L = 1.0 / f.L;
  f.d = delta * f.inv_L;
  return f;
}

inline BondFirstOrder bond_energy_gradient(const Eigen::Vector3d& pi, const quat::Quat& qi,
                                           const Eigen::Vector3d& pj, const quat::Quat& qj, const BondRest& rest,
                                           const ReducedAt& at, BondReduced& out) {
  BondFirstOrder f = bond_geometry(pi, qi, pj, qj);
  // Energy and Euclidean gradient, fused as in bond_forces.hpp (shared d, L, t).
  const double stretch = f.L - rest.l0;
  const double fn = rest.kn * stretch;
  const shear::Terms<double> sh = shear::terms_core<double>(f.d, f.inv_L, qi + f.qjs, rest);
  f.t = rest.bend_scale * (rest.R0 * bendtwist::relative_vec(f.qjs, qi));
  const Eigen::Vector3d Kt = bendtwist::stiffness_times(f.t, rest);
  const Eigen::Vector3d c = rest.bend_scale * (rest.R0.transpose() * Kt);
  const Eigen::Vector3d gpj = fn * f.d + sh.g_pj;
  f.gqi = sh.g_n + bendtwist::gl_transpose_times(f.qjs, c);
  f.gqj = f.sign * (sh.g_n - bendtwist::gl_transpose_times(qi, c));  // w.r.t. stored q_j

  out.energy = 0.5 * fn * stretch + sh.energy + 0.5 * f.t.dot(Kt);
  out.gradient.segment<3>(0) = -at.scale * gpj;
  out.gradient.segment<3>(3) = at.scale * (quat::Gl(at.qi) * f.gqi);
  out.gradient.segment<3>(6) = at.scale * gpj;
  out.gradient.segment<3>(9) = at.scale * (quat::Gl(at.qj) * f.gqj);
  return f;
}
}  // namespace detail

// Energy and reduced gradient only, for evaluations that assemble no Hessian: bit-identical to those of
// bond_reduced and bond_reduced_gauss_newton.
inline void bond_reduced_gradient(const Eigen::Vector3d& pi, const quat::Quat& qi, const Eigen::Vector3d& pj,
                                  const quat::Quat& qj, const BondRest& rest, const ReducedAt& at, double& energy,
                                  Reduced12& gradient) {
  BondReduced out;  // its Hessian stays unset
  detail::bond_energy_gradient(pi, qi, pj, qj, rest, at, out);
  energy = out.energy;
  gradient = out.gradient;
}

// Energy, reduced gradient and reduced Hessian of one bond at (p_i, q_i, p_j, q_j), in the coordinates `at`.
// With project_psd the Hessian's negative eigenvalues are clamped to zero (notes §2.9, project_psd_bond), so
// the assembled Newton matrix stays PSD.
inline BondReduced bond_reduced(const Eigen::Vector3d& pi, const quat::Quat& qi, const Eigen::Vector3d& pj,
                                const quat::Quat& qj, const BondRest& rest, bool project_psd, const ReducedAt& at) {
  BondReduced out;
  const detail::BondFirstOrder f = detail::bond_energy_gradient(pi, qi, pj, qj, rest, at, out);
  const BondDofs x = pack_bond(pi, qi, pj, qj);
  const BondHessian H = stretch::hessian(x, rest) + shear::hessian(x, rest) + bendtwist::hessian(x, rest);
  out.hessian = (at.scale * at.scale) * reduce_hessian(H, at.qi, at.qj);
  out.hessian.diagonal().segment<3>(3).array() -= at.scale * at.qi.dot(f.gqi);
  out.hessian.diagonal().segment<3>(9).array() -= at.scale * at.qj.dot(f.gqj);
  if (project_psd) project_psd_bond(out.hessian);
  return out;
}

// The same at the iterate itself.
inline BondReduced bond_reduced(const Eigen::Vector3d& pi, const quat::Quat& qi, const Eigen::Vector3d& pj,
                                const quat::Quat& qj, const BondRest& rest, bool project_psd) {
  return bond_reduced(pi, qi, pj, qj, rest, project_psd, {qi, qj, 1.0});
}

}  // namespace percussion::physics
