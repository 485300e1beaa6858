#pragma once
// The six rigid-body motions in the Newton system's reduced coordinates (δp, y), y the half-angle body-frame
// rotation of exp_body (notes 001 §2.11): an algebraic multigrid's near-nullspace. A translation e_k moves
// every particle by e_k; a small world rotation about e_k through `centre` moves p by e_k × (p − centre) and
// turns each particle by y = ½ R(q)ᵀ e_k. Bonds and contacts store no energy along them.
#include <Eigen/Core>

#include "percussion/physics/quaternion.hpp"

namespace percussion::physics {

// Column k (0-2 translations, 3-5 rotations) holds the particle's six reduced values of mode k.
inline Eigen::Matrix<double, 6, 6> rigid_modes(const Eigen::Vector3d& p, const quat::Quat& q,
                                               const Eigen::Vector3d& centre) {
  Eigen::Matrix<double, 6, 6> modes = Eigen::Matrix<double, 6, 6>::Zero();
  const Eigen::Matrix3d rt = quat::rotation_matrix(q).transpose();
  for (int k = 0; k < 3; ++k) {
    const Eigen::Vector3d e = Eigen::Vector3d::Unit(k);
    modes(k, k) = 1.0;
    modes.col(3 + k).head<3>() = e.cross(p - centre);
    modes.col(3 + k).tail<3>() = 0.5 * rt * e;
  }
  return modes;
}

}  // namespace percussion::physics
