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

#include "percussion/physics/bond_rest.hpp"
#include "percussion/physics/manifold_bond.hpp"
#include "percussion/physics/quaternion.hpp"

namespace percussion::physics {

using BondResidual = Eigen::Matrix<double, 7, 1>;            // (L − l0, u, t)
using BondResidualJacobian = Eigen::Matrix<double, 7, 12>;   // ∂r/∂(δp_i, y_i, δp_j, y_j)

// The Jacobian's rotation blocks. (The position blocks are ∂(L − l0)/∂δp_j = dᵀ and ∂u/∂δp_j = P/L, P = I − d dᵀ;
// the position-i blocks are their negatives.)
struct BondResidualBlocks {
  Eigen::Matrix3d shear_yi, shear_yj;   // ∂u/∂y_i, ∂u/∂y_j
  Eigen::Matrix3d bend_yi, bend_yj;     // ∂t/∂y_i, ∂t/∂y_j
};

// W as a vector, in the residual order of BondResidual.
BondResidual bond_residual_weights(const BondRest& rest);

// r(x); ½ rᵀ W r equals bond_energy.
BondResidual bond_residuals(const Eigen::Vector3d& pi, const quat::Quat& qi, const Eigen::Vector3d& pj,
                            const quat::Quat& qj, const BondRest& rest);

// Dense J (tests, diagnostics); the kernel below works on the blocks.
BondResidualJacobian bond_residual_jacobian(const Eigen::Vector3d& pi, const quat::Quat& qi,
                                            const Eigen::Vector3d& pj, const quat::Quat& qj,
                                            const BondRest& rest);

// The Newton system's diagonal scaling of one particle's rows: σ_p on its three position rows, σ_y on its three
// rotation rows (the system the implicit solver assembles is S H S, S = diag(σ_p I3, σ_y I3) per particle).
struct BlockScale {
  double p = 1.0, y = 1.0;
};

// A bond's Gauss–Newton Hessian as the assembly takes it: its three distinct 6×6 blocks, scaled (aa = S_a H_aa S_a,
// ab = S_a H_ab S_b, bb = S_b H_bb S_b; H_ba = H_abᵀ), column-major, aa and bb exactly symmetric.
using Matrix6 = Eigen::Matrix<double, 6, 6>;
struct BondBlocks {
  Matrix6 aa, ab, bb;
};

// Hessian = s² JᵀWJ (s = at.scale) from 3×3 blocks, with s² folded into the weights k:
//   pos–pos  A   = k_n d dᵀ + k_t P/L²                 ([[A, −A], [−A, A]])
//   pos_j–y  C_a = k_t (P/L) S_a                        (pos_i rows: −C_a)
//   y_a–y_b      = k_t S_aᵀ S_b + B_aᵀ K B_b            (S = shear, B = bend/twist blocks)
// and each 3×3 block scaled by its row's and column's σ. Written block by block, without a 12×12 in between: the
// paper-size plate assembles 1.2 million of them per Newton matrix.
void gauss_newton_blocks(const detail::BondFirstOrder& f, const quat::Quat& qi, const BondRest& rest,
                         const ReducedAt& at, BlockScale sa, BlockScale sb, BondBlocks& out);

// Energy, reduced gradient and the scaled Gauss–Newton blocks of one bond (the implicit solver's assembly).
// Energy and gradient come from the same code as bond_reduced, bit for bit.
double bond_gauss_newton(const Eigen::Vector3d& pi, const quat::Quat& qi, const Eigen::Vector3d& pj,
                         const quat::Quat& qj, const BondRest& rest, const ReducedAt& at, BlockScale sa,
                         BlockScale sb, Reduced12& gradient, BondBlocks& blocks);

// The same, unscaled, as one 12×12 Hessian (tests and diagnostics).
BondReduced bond_reduced_gauss_newton(const Eigen::Vector3d& pi, const quat::Quat& qi,
                                      const Eigen::Vector3d& pj, const quat::Quat& qj,
                                      const BondRest& rest, const ReducedAt& at);

// The same at the iterate itself.
BondReduced bond_reduced_gauss_newton(const Eigen::Vector3d& pi, const quat::Quat& qi,
                                      const Eigen::Vector3d& pj, const quat::Quat& qj,
                                      const BondRest& rest);

}  // namespace percussion::physics
