// Bodies of bond_shear.hpp's energy, gradient and closed-form Hessian on 14-vectors, compiled once here
// instead of in every translation unit that includes the header.
#include "percussion/physics/bond_shear.hpp"

#include <Eigen/Core>
#include <Eigen/Geometry>  // cross()
#include <cmath>

#include "percussion/physics/bond_rest.hpp"
#include "percussion/physics/quaternion.hpp"

namespace percussion::physics::shear {

double energy(const BondDofs& x, const BondRest& b) {
  const Eigen::Vector4d qi = x.segment<4>(kRotI), qj = x.segment<4>(kRotJ);
  return terms<double>(x.segment<3>(kPosI), qi, x.segment<3>(kPosJ), qj, b, hemisphere_sign(qi, qj)).energy;
}

BondDofs gradient(const BondDofs& x, const BondRest& b) {
  return detail::gradient<double>(x, b, hemisphere_sign(x.segment<4>(kRotI), x.segment<4>(kRotJ)));
}

BondHessian hessian(const BondDofs& x, const BondRest& b) {
  using Eigen::Matrix3d;
  using Eigen::Matrix4d;
  using Eigen::Vector3d;
  using Eigen::Vector4d;
  const Vector4d qi = x.segment<4>(kRotI), qj = x.segment<4>(kRotJ);
  const double sign = hemisphere_sign(qi, qj);
  const Vector3d delta = x.segment<3>(kPosJ) - x.segment<3>(kPosI);
  const double inv_L = 1.0 / delta.norm();
  const Vector3d d = delta * inv_L;

  const Vector4d n = qi + sign * qj;
  const Vector3d t = n.head<3>();
  const double s = n[3];
  const double inv_nu = 1.0 / n.squaredNorm();
  const Vector3d& d0 = b.d0;
  const double td0 = t.dot(d0);
  const Vector3d txd0 = t.cross(d0);
  const Vector3d w = (s * s - t.squaredNorm()) * d0 + (2.0 * td0) * t + (2.0 * s) * txd0;
  const Vector3d dq = w * inv_nu;
  const Vector3d u = d - dq;

  // Position part.
  const Matrix3d P = Matrix3d::Identity() - d * d.transpose();
  const Vector3d Pu = P * u;
  const Matrix3d Hd = -(inv_L * inv_L) * (Pu * d.transpose() + d * Pu.transpose() + d.dot(u) * P);
  const Matrix3d Hpp = b.kt * ((inv_L * inv_L) * P + Hd);

  // Rotation part.
  Eigen::Matrix<double, 3, 4> W;
  W.leftCols<3>() = 2.0 * (t * d0.transpose() - d0 * t.transpose() + td0 * Matrix3d::Identity() -
                           s * quat::cross_matrix(d0));
  W.col(3) = 2.0 * (s * d0 + txd0);
  const Eigen::Matrix<double, 3, 4> Jn = (W - 2.0 * dq * n.transpose()) * inv_nu;
  const double ud0 = u.dot(d0);
  const Vector3d d0xu = d0.cross(u);
  Matrix4d Au;
  Au.topLeftCorner<3, 3>() = d0 * u.transpose() + u * d0.transpose() - ud0 * Matrix3d::Identity();
  Au.topRightCorner<3, 1>() = d0xu;
  Au.bottomLeftCorner<1, 3>() = d0xu.transpose();
  Au(3, 3) = ud0;
  const Vector4d grad_a = W.transpose() * u;
  const double a = u.dot(w);
  const Matrix4d Hf = (2.0 * inv_nu) * Au -
                      (2.0 * inv_nu * inv_nu) * (grad_a * n.transpose() + n * grad_a.transpose()) -
                      (2.0 * a * inv_nu * inv_nu) * Matrix4d::Identity() +
                      (8.0 * a * inv_nu * inv_nu * inv_nu) * (n * n.transpose());
  const Matrix4d Hnn = b.kt * (Jn.transpose() * Jn - Hf);

  // Mixed: (∂u/∂p_j)ᵀ (∂u/∂n) = −(P/L) J_n.
  const Eigen::Matrix<double, 3, 4> C = (-b.kt * inv_L) * (P * Jn);

  BondHessian h;
  h.block<3, 3>(kPosI, kPosI) = Hpp;
  h.block<3, 3>(kPosJ, kPosJ) = Hpp;
  h.block<3, 3>(kPosI, kPosJ) = -Hpp;
  h.block<3, 4>(kPosI, kRotI) = -C;
  h.block<3, 4>(kPosJ, kRotI) = C;
  h.block<3, 4>(kPosI, kRotJ) = -sign * C;
  h.block<3, 4>(kPosJ, kRotJ) = sign * C;
  h.block<4, 4>(kRotI, kRotI) = Hnn;
  h.block<4, 4>(kRotJ, kRotJ) = Hnn;
  h.block<4, 4>(kRotI, kRotJ) = sign * Hnn;
  h.block<3, 3>(kPosJ, kPosI) = -Hpp;
  h.block<4, 3>(kRotI, kPosI) = -C.transpose();
  h.block<4, 3>(kRotI, kPosJ) = C.transpose();
  h.block<4, 3>(kRotJ, kPosI) = -sign * C.transpose();
  h.block<4, 3>(kRotJ, kPosJ) = sign * C.transpose();
  h.block<4, 4>(kRotJ, kRotI) = sign * Hnn;
  return h;
}

}  // namespace percussion::physics::shear
