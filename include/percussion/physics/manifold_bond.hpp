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

#include "percussion/physics/bond_rest.hpp"
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
Eigen::Matrix<double, 12, 14> reduction_operator(const quat::Quat& qi, const quat::Quat& qj);

// 𝒢 g.
Reduced12 reduce_gradient(const BondDofs& g, const quat::Quat& qi, const quat::Quat& qj);

// 𝒢 H 𝒢ᵀ without multiplying 𝒢's zero and identity blocks (≈ 600 multiply-adds instead of ≈ 4400 for the
// dense 12×14·14×14·14×12 product). Symmetrised, so the eigen-solver and the assembly see an exactly
// symmetric block.
Hessian12 reduce_hessian(const BondHessian& H, const quat::Quat& qi, const quat::Quat& qj);

// project_to_psd<12> (psd_projection.hpp) for a bond block, using that a bond's energy is invariant under a common translation:
// H c = 0 exactly for c = (a, 0, a, 0) (the position blocks are [[A, −A], [−A, A]] and the mixed ones
// ±C by construction). In the orthonormal basis S = (rel = (δp_j − δp_i)/√2, y_i, y_j) of the complement,
// H = S (SᵀHS) Sᵀ, so clamping the 9×9 SᵀHS and mapping back equals clamping H, for ≈ 60% of the
// eigen-solver's cost. (No cheap "already PSD?" pre-test: along rigid rotations the Hessian equals
// |ω|²(g·Δ) − (g·ω)(ω·Δ), g = ∇_{p_j}V, Δ = p_j − p_i, which is negative for some ω unless g ∥ Δ in
// tension, so every sheared or compressed bond block is indefinite.)
void project_psd_bond(Hessian12& H);

// V_stretch + V_shear + V_bendtwist only: what the line search evaluates at every trial state.
double bond_energy(const Eigen::Vector3d& pi, const quat::Quat& qi, const Eigen::Vector3d& pj,
                   const quat::Quat& qj, const BondRest& rest);

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

// sign, qjs, d, L and 1/L only: what the Gauss–Newton Hessian reads (manifold_bond_gn.hpp).
BondFirstOrder bond_geometry(const Eigen::Vector3d& pi, const quat::Quat& qi, const Eigen::Vector3d& pj,
                             const quat::Quat& qj);

// Energy and reduced gradient of one bond into out.energy, out.gradient; shared by bond_reduced and
// bond_reduced_gauss_newton so both see bit-identical first-order terms.
BondFirstOrder bond_energy_gradient(const Eigen::Vector3d& pi, const quat::Quat& qi,
                                    const Eigen::Vector3d& pj, const quat::Quat& qj, const BondRest& rest,
                                    const ReducedAt& at, BondReduced& out);
}  // namespace detail

// Energy and reduced gradient only, for evaluations that assemble no Hessian: bit-identical to those of
// bond_reduced and bond_reduced_gauss_newton.
void bond_reduced_gradient(const Eigen::Vector3d& pi, const quat::Quat& qi, const Eigen::Vector3d& pj,
                           const quat::Quat& qj, const BondRest& rest, const ReducedAt& at, double& energy,
                           Reduced12& gradient);

// Energy, reduced gradient and reduced Hessian of one bond at (p_i, q_i, p_j, q_j), in the coordinates `at`.
// With project_psd the Hessian's negative eigenvalues are clamped to zero (notes §2.9, project_psd_bond), so
// the assembled Newton matrix stays PSD.
BondReduced bond_reduced(const Eigen::Vector3d& pi, const quat::Quat& qi, const Eigen::Vector3d& pj,
                         const quat::Quat& qj, const BondRest& rest, bool project_psd, const ReducedAt& at);

// The same at the iterate itself.
BondReduced bond_reduced(const Eigen::Vector3d& pi, const quat::Quat& qi, const Eigen::Vector3d& pj,
                         const quat::Quat& qj, const BondRest& rest, bool project_psd);

}  // namespace percussion::physics
