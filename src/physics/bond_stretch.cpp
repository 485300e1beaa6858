// Bodies of bond_stretch.hpp's energy, gradient and Hessian on 14-vectors, compiled once here instead of in
// every translation unit that includes the header.
#include "percussion/physics/bond_stretch.hpp"

#include <Eigen/Core>

#include "percussion/physics/bond_rest.hpp"

namespace percussion::physics::stretch {

double energy(const BondDofs& x, const BondRest& b) {
  const double e = (x.segment<3>(kPosJ) - x.segment<3>(kPosI)).norm() - b.l0;
  return 0.5 * b.kn * e * e;
}

BondDofs gradient(const BondDofs& x, const BondRest& b) {
  const Eigen::Vector3d delta = x.segment<3>(kPosJ) - x.segment<3>(kPosI);
  const double L = delta.norm();
  const Eigen::Vector3d gj = (b.kn * (L - b.l0) / L) * delta;  // k_n (L − l0) d
  BondDofs g = BondDofs::Zero();
  g.segment<3>(kPosI) = -gj;
  g.segment<3>(kPosJ) = gj;
  return g;
}

BondHessian hessian(const BondDofs& x, const BondRest& b) {
  const Eigen::Vector3d delta = x.segment<3>(kPosJ) - x.segment<3>(kPosI);
  const double L = delta.norm();
  const Eigen::Vector3d d = delta / L;
  const Eigen::Matrix3d ddT = d * d.transpose();
  const Eigen::Matrix3d H = b.kn * (ddT + ((L - b.l0) / L) * (Eigen::Matrix3d::Identity() - ddT));
  BondHessian h = BondHessian::Zero();
  h.block<3, 3>(kPosI, kPosI) = H;
  h.block<3, 3>(kPosJ, kPosJ) = H;
  h.block<3, 3>(kPosI, kPosJ) = -H;
  h.block<3, 3>(kPosJ, kPosI) = -H;
  return h;
}

}  // namespace percussion::physics::stretch
