#pragma once
// Bond shear (notes 001 §2.5, eq. 9, corrected reading): the bond direction d = (p_j − p_i)/L should follow
// the common rotation of its ends, d_q = R(q_c) d0 with q_c = (q_i + q_j)/|q_i + q_j|.
// [ERRATUM] the printed text measures θ between d0 and d_q, which gives no shear force; θ = ∠(d, d_q) is the
// reading the notes recommend (§7 item 2). ½ k_t θ² has units N/m; the default multiplies k_t by l0²
// (BondModel::shear_length_scaled, item 3).
//
// We use the smooth surrogate V = ½ k_t |d − d_q|² instead of ½ k_t θ², θ = ∠(d, d_q):
// |d − d_q|² = 2 − 2 cos θ = θ² + O(θ⁴), so the small-strain stiffness is identical. Derivatives of θ go
// through θ/sin θ and |d × d_q|, which are 0/0 at θ = 0 (the rest state, where Newton needs a clean
// Hessian) and blow up at θ = π; the surrogate is rational in (p, q) with no special cases.
// k_t already carries the l0² units fix when BondModel::shear_length_scaled.
//
// n = q_i + q_j is never normalised: with the homogeneous R, d_q = R(n) d0 / |n|², valid off the sphere
// too. If q_i·q_j < 0 the bond flips q_j locally (n = q_i − q_j) so the common rotation takes the short
// arc; the gradient with respect to the stored q_j picks up that sign.
#include <Eigen/Core>
#include <Eigen/Geometry>  // cross()
#include <cmath>

#include "percussion/physics/bond_rest.hpp"

namespace percussion::physics::shear {

// +1, or −1 when q_j must be flipped into q_i's hemisphere; piecewise constant, so it has no derivative.
inline double hemisphere_sign(const Eigen::Vector4d& qi, const Eigen::Vector4d& qj) {
  return qi.dot(qj) < 0.0 ? -1.0 : 1.0;
}

template <class S>
struct Terms {
  S energy;
  Eigen::Matrix<S, 3, 1> g_pj;  // ∇_{p_j} V = −∇_{p_i} V
  Eigen::Matrix<S, 4, 1> g_n;   // ∇_n V; ∇_{q_i} V = g_n, ∇_{q_j} V = sign · g_n
};

// Energy and gradient pieces from the current direction d, 1/L and n = q_i + sign·q_j. Templated on the
// scalar so the tests can take its exact forward-autodiff Jacobian; bond_forces calls it with double. Without
// `Rotation` the n-gradient is left out (zero): the bond stresses read only the force.
template <class S, bool Rotation = true>
inline Terms<S> terms_core(const Eigen::Matrix<S, 3, 1>& d, const S& inv_L, const Eigen::Matrix<S, 4, 1>& n,
                           const BondRest& b) {
  using V3 = Eigen::Matrix<S, 3, 1>;
  const V3 t = n.template head<3>();
  const S s = n(3);
  const V3 d0 = b.d0.template cast<S>();
  const S tt = t.squaredNorm();
  const S inv_nu = 1.0 / (tt + s * s);           // 1/|n|²
  const S td0 = t.dot(d0);
  const V3 txd0 = t.cross(d0);
  const V3 w = (s * s - tt) * d0 + (2.0 * td0) * t + (2.0 * s) * txd0;  // R(n) d0
  const V3 dq = w * inv_nu;
  const V3 u = d - dq;

  Terms<S> r;
  r.energy = 0.5 * b.kt * u.squaredNorm();
  // ∂d/∂p_j = (I − d dᵀ)/L
  r.g_pj = (b.kt * inv_L) * (u - d.dot(u) * d);
  if constexpr (!Rotation) {
    r.g_n.setZero();
    return r;
  }
  // ∂d_q/∂n = (W − 2 d_q nᵀ)/|n|², W = ∂(R(n) d0)/∂n; Wᵀu written out column by column.
  const S tu = t.dot(u), d0u = d0.dot(u), dqu = dq.dot(u);
  const V3 Wtu_v = 2.0 * (tu * d0 - d0u * t + td0 * u + s * d0.cross(u));
  const S Wtu_s = 2.0 * (s * d0u + txd0.dot(u));
  const S scale = -b.kt * inv_nu;
  r.g_n.template head<3>() = scale * (Wtu_v - (2.0 * dqu) * t);
  r.g_n(3) = scale * (Wtu_s - 2.0 * dqu * s);
  return r;
}

template <class S>
inline Terms<S> terms(const Eigen::Matrix<S, 3, 1>& pi, const Eigen::Matrix<S, 4, 1>& qi,
                      const Eigen::Matrix<S, 3, 1>& pj, const Eigen::Matrix<S, 4, 1>& qj, const BondRest& b,
                      double sign) {
  using std::sqrt;
  const Eigen::Matrix<S, 3, 1> delta = pj - pi;
  const S inv_L = 1.0 / sqrt(delta.squaredNorm());
  const Eigen::Matrix<S, 3, 1> d = delta * inv_L;
  const Eigen::Matrix<S, 4, 1> n = qi + sign * qj;
  return terms_core<S>(d, inv_L, n, b);
}

double energy(const BondDofs& x, const BondRest& b);

namespace detail {
template <class S>
inline Eigen::Matrix<S, 14, 1> gradient(const Eigen::Matrix<S, 14, 1>& x, const BondRest& b, double sign) {
  const Terms<S> r = terms<S>(x.template segment<3>(kPosI), x.template segment<4>(kRotI),
                              x.template segment<3>(kPosJ), x.template segment<4>(kRotJ), b, sign);
  Eigen::Matrix<S, 14, 1> g;
  g.template segment<3>(kPosI) = -r.g_pj;
  g.template segment<4>(kRotI) = r.g_n;
  g.template segment<3>(kPosJ) = r.g_pj;
  g.template segment<4>(kRotJ) = sign * r.g_n;
  return g;
}
}  // namespace detail

BondDofs gradient(const BondDofs& x, const BondRest& b);

// Closed form. u = d(p) − d_q(n) is separable, so
//   ∇²V = k_t [Jᵀ J + Σ_k u_k ∇²u_k],   J = [−P/L, −J_n, P/L, −sign·J_n],   P = I − d dᵀ,
//   J_n = ∂d_q/∂n = (W − 2 d_q nᵀ)/|n|²,
//   Σ u_k ∇²d_k  = −[(Pu) dᵀ + d (Pu)ᵀ + (d·u) P]/L²                       (p-p blocks, signs ±)
//   Σ u_k ∇²d_q,k = ∇²(a/ν), a = uᵀR(n)d0 = nᵀA_u n, ν = |n|²               (n-n blocks, weights 1, sign)
//                 = 2A_u/ν − 2(∇a nᵀ + n ∇aᵀ)/ν² − 2a I/ν² + 8a n nᵀ/ν³,   ∇a = 2 A_u n = Wᵀu.
// The tests also compare it with the exact forward-autodiff Jacobian of the templated gradient above.
BondHessian hessian(const BondDofs& x, const BondRest& b);

}  // namespace percussion::physics::shear
