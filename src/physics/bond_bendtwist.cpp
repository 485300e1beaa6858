// Bodies of bond_bendtwist.hpp's energy, gradient and Hessian on 14-vectors, compiled once here instead of
// in every translation unit that includes the header.
#include "percussion/physics/bond_bendtwist.hpp"

#include <Eigen/Core>
#include <Eigen/Geometry>  // cross()

#include "percussion/physics/bond_rest.hpp"
#include "percussion/physics/quaternion.hpp"

namespace percussion::physics::bendtwist {
namespace {

// What the gradient and the Hessian share: q_i, the hemisphere sign, q_j' = sign · q_j and c = s_b R0ᵀ K t.
struct FlippedTerms {
  Eigen::Vector4d qi;
  double sign;
  Eigen::Vector4d qj;
  Eigen::Vector3d c;
};

FlippedTerms flipped_terms(const BondDofs& x, const BondRest& b) {
  FlippedTerms f;
  f.qi = x.segment<4>(kRotI);
  f.sign = hemisphere_sign(f.qi, x.segment<4>(kRotJ));
  f.qj = f.sign * x.segment<4>(kRotJ);
  const Eigen::Vector3d t = b.bend_scale * (b.R0 * relative_vec(f.qj, f.qi));
  f.c = b.bend_scale * (b.R0.transpose() * stiffness_times(t, b));
  return f;
}

}  // namespace

double energy(const BondDofs& x, const BondRest& b) {
  const Eigen::Vector3d t = local_rotation(x.segment<4>(kRotI), x.segment<4>(kRotJ), b);
  return 0.5 * t.dot(stiffness_times(t, b));
}

BondDofs gradient(const BondDofs& x, const BondRest& b) {
  const auto [qi, sign, qj, c] = flipped_terms(x, b);
  BondDofs g = BondDofs::Zero();
  g.segment<4>(kRotI) = gl_transpose_times(qj, c);
  g.segment<4>(kRotJ) = -sign * gl_transpose_times(qi, c);
  return g;
}

BondHessian hessian(const BondDofs& x, const BondRest& b) {
  const auto [qi, sign, qj, c] = flipped_terms(x, b);
  const Eigen::Matrix<double, 3, 4> Ji = b.bend_scale * (b.R0 * quat::Gl(qj));
  const Eigen::Matrix<double, 3, 4> Jj = (-sign * b.bend_scale) * (b.R0 * quat::Gl(qi));
  const Eigen::Vector3d kdiag(b.k_twist, b.k_bend, b.k_bend);
  const Eigen::Matrix<double, 3, 4> KJi = kdiag.asDiagonal() * Ji, KJj = kdiag.asDiagonal() * Jj;
  const Eigen::Matrix4d cross = sign * quat::Qr(Eigen::Vector4d(c[0], c[1], c[2], 0.0));
  BondHessian h = BondHessian::Zero();
  h.block<4, 4>(kRotI, kRotI) = Ji.transpose() * KJi;
  h.block<4, 4>(kRotJ, kRotJ) = Jj.transpose() * KJj;
  h.block<4, 4>(kRotI, kRotJ) = Ji.transpose() * KJj + cross;
  h.block<4, 4>(kRotJ, kRotI) = h.block<4, 4>(kRotI, kRotJ).transpose();
  return h;
}

}  // namespace percussion::physics::bendtwist
