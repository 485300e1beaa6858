#pragma once
// Bond stretch V = ½ k_n (L − l0)², L = |p_j − p_i| (notes 001 §2.5, eq. 8). Independent of q.
#include <Eigen/Core>

#include "percussion/physics/bond_rest.hpp"

namespace percussion::physics::stretch {

inline double energy(const BondDofs& x, const BondRest& b) {
  const double e = (x.segment<3>(kPosJ) - x.segment<3>(kPosI)).norm() - b.l0;
  return 0.5 * b.kn * e * e;
}

inline BondDofs gradient(const BondDofs& x, const BondRest& b) {
  const Eigen::Vector3d delta = x.segment<3>(kPosJ) - x.segment<3>(kPosI);
  const double L = delta.norm();
  const Eigen::Vector3d gj = (b.kn * (L - b.l0) / L) * delta;  // k_n (L − l0) d
  BondDofs g = BondDofs::Zero();
  g.segment<3>(kPosI) = -gj;
  g.segment<3>(kPosJ) = gj;
  return g;
}

// H = k_n [d dᵀ + ((L − l0)/L)(I − d dᵀ)] in [[H, −H], [−H, H]] on the positions; indefinite when L < l0.
inline BondHessian hessian(const BondDofs& x, const BondRest& b) {
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
