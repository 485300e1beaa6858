// Bodies of manifold_bond_gn.hpp's Gauss–Newton kernels, compiled once here instead of in every translation unit
// that includes the header.
#include "percussion/physics/manifold_bond_gn.hpp"

#include <Eigen/Core>

#include "percussion/physics/bond_bendtwist.hpp"
#include "percussion/physics/bond_rest.hpp"
#include "percussion/physics/manifold_bond.hpp"
#include "percussion/physics/quaternion.hpp"

namespace percussion::physics {

namespace detail {
// qjs = sign · q_j (hemisphere-flipped) of the state r is evaluated at; the y-blocks are taken along the retraction
// of ri, rjs (= sign · r_j), the same quaternions or the iterate's (unscaled: J/s).
BondResidualBlocks residual_blocks(const quat::Quat& qi, const Eigen::Vector4d& qjs, const BondRest& rest,
                                   const quat::Quat& ri, const Eigen::Vector4d& rjs) {
  BondResidualBlocks J;
  // d_q depends on n̂ only: a change δn = G_l(r)ᵀ y turns it by ω = 2 G_r(n) δn/|n|², so ∂u/∂y = [w]× M with
  // w = 2 d_q/|n|² and M = G_r(n) G_l(r)ᵀ = (s σ − t·τ) I + [s τ + σ t]× + τ tᵀ + t τᵀ for n = (t, s), r = (τ, σ).
  const Eigen::Vector4d n = qi + qjs;
  const double inv_nu = 1.0 / n.squaredNorm();
  const Eigen::Vector3d w = (2.0 * inv_nu * inv_nu) * quat::rotate(n, rest.d0);
  auto shear_y = [&](const Eigen::Vector4d& r) {
    const Eigen::Vector3d t = n.head<3>(), tau = r.head<3>();
    Eigen::Matrix3d M = tau * t.transpose() + t * tau.transpose() + quat::cross_matrix(n[3] * tau + r[3] * t);
    M.diagonal().array() += n[3] * r[3] - t.dot(tau);
    Eigen::Matrix3d S;
    for (int c = 0; c < 3; ++c) S.col(c) = w.cross(M.col(c));
    return S;
  };
  J.shear_yi = shear_y(ri);
  J.shear_yj = shear_y(rjs);

  // s_b R0 G_l(a) G_l(b)ᵀ = s_b R0 ((a·b) I + [v]×), v = vec(ā ⊗ b): row k is s_b ((a·b) e_k + e_k × v)ᵀ, e_k R0's row k.
  auto bend = [&](const Eigen::Vector4d& a, const Eigen::Vector4d& b, double scale) {
    const Eigen::Vector3d v = bendtwist::relative_vec(a, b);
    const double ab = a.dot(b);
    Eigen::Matrix3d B;
    for (int k = 0; k < 3; ++k) {
      const Eigen::Vector3d e = rest.R0.row(k).transpose();
      B.row(k) = (scale * (ab * e + e.cross(v))).transpose();
    }
    return B;
  };
  J.bend_yi = bend(qjs, ri, rest.bend_scale);
  J.bend_yj = bend(qi, rjs, -rest.bend_scale);
  return J;
}

}  // namespace detail

BondResidual bond_residual_weights(const BondRest& rest) {
  BondResidual w;
  w << rest.kn, rest.kt, rest.kt, rest.kt, rest.k_twist, rest.k_bend, rest.k_bend;
  return w;
}

BondResidual bond_residuals(const Eigen::Vector3d& pi, const quat::Quat& qi, const Eigen::Vector3d& pj,
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

BondResidualJacobian bond_residual_jacobian(const Eigen::Vector3d& pi, const quat::Quat& qi,
                                            const Eigen::Vector3d& pj, const quat::Quat& qj,
                                            const BondRest& rest) {
  const double sign = qi.dot(qj) < 0.0 ? -1.0 : 1.0;
  const Eigen::Vector3d delta = pj - pi;
  const double inv_L = 1.0 / delta.norm();
  const Eigen::Vector3d d = delta * inv_L;
  const Eigen::Matrix3d shear_p = inv_L * (Eigen::Matrix3d::Identity() - d * d.transpose());
  const BondResidualBlocks B = detail::residual_blocks(qi, sign * qj, rest, qi, sign * qj);
  BondResidualJacobian J = BondResidualJacobian::Zero();
  J.block<1, 3>(0, 0) = -d.transpose();
  J.block<1, 3>(0, 6) = d.transpose();
  J.block<3, 3>(1, 0) = -shear_p;
  J.block<3, 3>(1, 3) = B.shear_yi;
  J.block<3, 3>(1, 6) = shear_p;
  J.block<3, 3>(1, 9) = B.shear_yj;
  J.block<3, 3>(4, 3) = B.bend_yi;
  J.block<3, 3>(4, 9) = B.bend_yj;
  return J;
}

void gauss_newton_blocks(const detail::BondFirstOrder& f, const quat::Quat& qi, const BondRest& rest,
                         const ReducedAt& at, BlockScale sa, BlockScale sb, BondBlocks& out) {
  using Eigen::Matrix3d;
  const BondResidualBlocks J = detail::residual_blocks(qi, f.qjs, rest, at.qi, f.sign * at.qj);
  const double s2 = at.scale * at.scale;
  const double kn = s2 * rest.kn, kt = s2 * rest.kt;
  const double k0 = s2 * rest.k_twist, k1 = s2 * rest.k_bend;
  const Eigen::Vector3d& d = f.d;
  // A = k_t/L² I + (k_n − k_t/L²) d dᵀ, exactly symmetric (d_r d_c = d_c d_r)
  const double a_iso = kt * f.inv_L * f.inv_L, a_dd = kn - a_iso;
  Matrix3d A;
  for (int c = 0; c < 3; ++c)
    for (int r = 0; r < 3; ++r) A(r, c) = a_iso * (r == c ? 1.0 : 0.0) + a_dd * (d[r] * d[c]);
  // C = k_t (P/L) S = (k_t/L) (S − d (dᵀS))
  auto coupling = [&](const Matrix3d& S) -> Matrix3d {
    const Eigen::RowVector3d dS = d.transpose() * S;
    return (kt * f.inv_L) * (S - d * dS);
  };
  const Matrix3d Ci = coupling(J.shear_yi), Cj = coupling(J.shear_yj);
  // Entry (r, c) of k_t S_aᵀ S_b + B_aᵀ K B_b, K = diag(k_twist, k_bend, k_bend), with every product's factors
  // commuting: (r, c) and (c, r) of a diagonal block round alike, so it is exactly symmetric.
  auto yy = [&](const Matrix3d& Sa, const Matrix3d& Ba, const Matrix3d& Sb, const Matrix3d& Bb, int r, int c) {
    return kt * (Sa(0, r) * Sb(0, c) + Sa(1, r) * Sb(1, c) + Sa(2, r) * Sb(2, c)) +
           (k0 * (Ba(0, r) * Bb(0, c)) + k1 * (Ba(1, r) * Bb(1, c) + Ba(2, r) * Bb(2, c)));
  };
  // [[σ_p² A, ±σ_p σ_y C], [·, σ_y² (k_t SᵀS + BᵀKB)]] from its upper triangle.
  auto diagonal = [&](Matrix6& D, BlockScale sc, const Matrix3d& C, double c_sign, const Matrix3d& S,
                      const Matrix3d& B) {
    const double pp = sc.p * sc.p, py = c_sign * sc.p * sc.y, ys = sc.y * sc.y;
    for (int c = 0; c < 3; ++c) {
      for (int r = 0; r <= c; ++r) {
        D(r, c) = pp * A(r, c);
        D(3 + r, 3 + c) = ys * yy(S, B, S, B, r, c);
      }
      for (int r = 0; r < 3; ++r) D(r, 3 + c) = py * C(r, c);
    }
    D.triangularView<Eigen::StrictlyLower>() = D.transpose();
  };
  diagonal(out.aa, sa, Ci, -1.0, J.shear_yi, J.bend_yi);
  diagonal(out.bb, sb, Cj, 1.0, J.shear_yj, J.bend_yj);
  const double pp = -sa.p * sb.p, py = -sa.p * sb.y, yp = sa.y * sb.p, ys = sa.y * sb.y;
  for (int c = 0; c < 3; ++c)
    for (int r = 0; r < 3; ++r) {
      out.ab(r, c) = pp * A(r, c);
      out.ab(r, 3 + c) = py * Cj(r, c);
      out.ab(3 + r, c) = yp * Ci(c, r);
      out.ab(3 + r, 3 + c) = ys * yy(J.shear_yi, J.bend_yi, J.shear_yj, J.bend_yj, r, c);
    }
}

double bond_gauss_newton(const Eigen::Vector3d& pi, const quat::Quat& qi, const Eigen::Vector3d& pj,
                         const quat::Quat& qj, const BondRest& rest, const ReducedAt& at, BlockScale sa,
                         BlockScale sb, Reduced12& gradient, BondBlocks& blocks) {
  BondReduced out;  // its Hessian stays unset
  const detail::BondFirstOrder f = detail::bond_energy_gradient(pi, qi, pj, qj, rest, at, out);
  gradient = out.gradient;
  gauss_newton_blocks(f, qi, rest, at, sa, sb, blocks);
  return out.energy;
}

BondReduced bond_reduced_gauss_newton(const Eigen::Vector3d& pi, const quat::Quat& qi,
                                      const Eigen::Vector3d& pj, const quat::Quat& qj,
                                      const BondRest& rest, const ReducedAt& at) {
  BondReduced out;
  BondBlocks b;
  out.energy = bond_gauss_newton(pi, qi, pj, qj, rest, at, {}, {}, out.gradient, b);
  out.hessian.topLeftCorner<6, 6>() = b.aa;
  out.hessian.topRightCorner<6, 6>() = b.ab;
  out.hessian.bottomLeftCorner<6, 6>() = b.ab.transpose();
  out.hessian.bottomRightCorner<6, 6>() = b.bb;
  return out;
}

BondReduced bond_reduced_gauss_newton(const Eigen::Vector3d& pi, const quat::Quat& qi,
                                      const Eigen::Vector3d& pj, const quat::Quat& qj,
                                      const BondRest& rest) {
  return bond_reduced_gauss_newton(pi, qi, pj, qj, rest, {qi, qj, 1.0});
}

}  // namespace percussion::physics
