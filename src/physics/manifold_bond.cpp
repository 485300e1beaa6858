// Bodies of manifold_bond.hpp's per-bond kernels (energy, reduced gradient and Hessian, PSD projection), compiled
// once here instead of in every translation unit that includes the header.
#include "percussion/physics/manifold_bond.hpp"

#include <Eigen/Core>
#include <Eigen/Eigenvalues>

#include "percussion/physics/bond_bendtwist.hpp"
#include "percussion/physics/bond_rest.hpp"
#include "percussion/physics/bond_shear.hpp"
#include "percussion/physics/bond_stretch.hpp"
#include "percussion/physics/quaternion.hpp"

namespace percussion::physics {

Eigen::Matrix<double, 12, 14> reduction_operator(const quat::Quat& qi, const quat::Quat& qj) {
  Eigen::Matrix<double, 12, 14> G = Eigen::Matrix<double, 12, 14>::Zero();
  G.block<3, 3>(0, kPosI).setIdentity();
  G.block<3, 4>(3, kRotI) = quat::Gl(qi);
  G.block<3, 3>(6, kPosJ).setIdentity();
  G.block<3, 4>(9, kRotJ) = quat::Gl(qj);
  return G;
}

Reduced12 reduce_gradient(const BondDofs& g, const quat::Quat& qi, const quat::Quat& qj) {
  Reduced12 r;
  r.segment<3>(0) = g.segment<3>(kPosI);
  r.segment<3>(3) = quat::Gl(qi) * g.segment<4>(kRotI);
  r.segment<3>(6) = g.segment<3>(kPosJ);
  r.segment<3>(9) = quat::Gl(qj) * g.segment<4>(kRotJ);
  return r;
}

Hessian12 reduce_hessian(const BondHessian& H, const quat::Quat& qi, const quat::Quat& qj) {
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

void project_psd_bond(Hessian12& H) {
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

double bond_energy(const Eigen::Vector3d& pi, const quat::Quat& qi, const Eigen::Vector3d& pj,
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
BondFirstOrder bond_geometry(const Eigen::Vector3d& pi, const quat::Quat& qi, const Eigen::Vector3d& pj,
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

BondFirstOrder bond_energy_gradient(const Eigen::Vector3d& pi, const quat::Quat& qi,
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

void bond_reduced_gradient(const Eigen::Vector3d& pi, const quat::Quat& qi, const Eigen::Vector3d& pj,
                           const quat::Quat& qj, const BondRest& rest, const ReducedAt& at, double& energy,
                           Reduced12& gradient) {
  BondReduced out;  // its Hessian stays unset
  detail::bond_energy_gradient(pi, qi, pj, qj, rest, at, out);
  energy = out.energy;
  gradient = out.gradient;
}

BondReduced bond_reduced(const Eigen::Vector3d& pi, const quat::Quat& qi, const Eigen::Vector3d& pj,
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

BondReduced bond_reduced(const Eigen::Vector3d& pi, const quat::Quat& qi, const Eigen::Vector3d& pj,
                         const quat::Quat& qj, const BondRest& rest, bool project_psd) {
  return bond_reduced(pi, qi, pj, qj, rest, project_psd, {qi, qj, 1.0});
}

}  // namespace percussion::physics
