#pragma once
// Rest state and stiffnesses of one bond between two spheres (notes 001 §2.5), and the 14-vector of
// degrees of freedom (p_i, q_i, p_j, q_j) that every bond potential takes.
#include <Eigen/Core>
#include <Eigen/Geometry>  // cross()
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "percussion/core/scene_parts.hpp"
#include "percussion/physics/quaternion.hpp"

namespace percussion::physics {

using BondDofs = Eigen::Matrix<double, 14, 1>;  // (p_i, q_i, p_j, q_j)
using BondHessian = Eigen::Matrix<double, 14, 14>;

// Offsets of the four blocks inside BondDofs.
inline constexpr int kPosI = 0, kRotI = 3, kPosJ = 7, kRotJ = 10;

struct BondRest {
  double l0, r0;        // rest length, bond radius (r_i + r_j)/2
  Eigen::Vector3d d0;   // rest direction i → j; body frame = world frame because q = identity at rest
  Eigen::Matrix3d R0;   // rows e0 = d0, e1, e2: bond-local frame for twist (t0) and bending (t1, t2)
  double kn, kt, k_twist, k_bend;  // kt already includes l0² when BondModel::shear_length_scaled
  double area, I, J;    // S = π r0², I = π r0⁴/4, J = π r0⁴/2
  double bend_scale;    // 2 for full-angle (beam-theory) bending, 1 for the paper's half angle
};

// A rest state as a row of numbers (checkpoints, migration), in this column order:
inline constexpr int kBondRestColumns = 22;  // l0 r0 d0[3] R0[9 row-major] kn kt k_twist k_bend area I J bend_scale
inline constexpr const char* kBondRestLayout = "l0 r0 d0x d0y d0z R0(row-major 9) kn kt k_twist k_bend area I J bend_scale";

inline void pack_bond_rest(const BondRest& r, double* c) {
  c[0] = r.l0;
  c[1] = r.r0;
  for (int k = 0; k < 3; ++k) c[2 + k] = r.d0[k];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) c[5 + 3 * i + j] = r.R0(i, j);
  c[14] = r.kn;
  c[15] = r.kt;
  c[16] = r.k_twist;
  c[17] = r.k_bend;
  c[18] = r.area;
  c[19] = r.I;
  c[20] = r.J;
  c[21] = r.bend_scale;
}

inline BondRest unpack_bond_rest(const double* c) {
  BondRest r{};
  r.l0 = c[0];
  r.r0 = c[1];
  for (int k = 0; k < 3; ++k) r.d0[k] = c[2 + k];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.R0(i, j) = c[5 + 3 * i + j];
  r.kn = c[14];
  r.kt = c[15];
  r.k_twist = c[16];
  r.k_bend = c[17];
  r.area = c[18];
  r.I = c[19];
  r.J = c[20];
  r.bend_scale = c[21];
  return r;
}

// Orthonormal right-handed frame with e0 = d0. e1 is built from the coordinate axis least aligned with d0,
// so the frame is well conditioned and the same on every rank for the same d0.
inline Eigen::Matrix3d bond_frame(const Eigen::Vector3d& d0) {
  Eigen::Index k = 0;
  d0.cwiseAbs().minCoeff(&k);
  const Eigen::Vector3d a = Eigen::Vector3d::Unit(k);
  const Eigen::Vector3d e1 = (a - a.dot(d0) * d0).normalized();
  const Eigen::Vector3d e2 = d0.cross(e1);
  Eigen::Matrix3d R0;
  R0.row(0) = d0.transpose();
  R0.row(1) = e1.transpose();
  R0.row(2) = e2.transpose();
  return R0;
}

// Rest state with q_i = q_j = identity. Mixed materials use the harmonic mean of E and of G (springs in
// series, each end contributing half the bond length).
inline BondRest make_bond_rest(const Eigen::Vector3d& pi, const Eigen::Vector3d& pj, double ri, double rj,
                               const Material& mi, const Material& mj, const BondModel& model) {
  const Eigen::Vector3d delta = pj - pi;
  const double l0 = delta.norm();
  if (!(l0 > 0.0)) throw std::invalid_argument("make_bond_rest: coincident particle centres");
  const double E = 2.0 * mi.youngs_modulus * mj.youngs_modulus / (mi.youngs_modulus + mj.youngs_modulus);
  const double Gi = mi.shear_modulus(), Gj = mj.shear_modulus();
  const double G = 2.0 * Gi * Gj / (Gi + Gj);
  constexpr double pi_ = std::numbers::pi;

  BondRest b;
  b.l0 = l0;
  b.r0 = 0.5 * (ri + rj);
  b.d0 = delta / l0;
  b.R0 = bond_frame(b.d0);
  const double r2 = b.r0 * b.r0;
  b.area = pi_ * r2;
  b.I = 0.25 * pi_ * r2 * r2;
  b.J = 0.5 * pi_ * r2 * r2;
  b.kn = E * b.area / l0;
  b.kt = G * b.area / l0 * (model.shear_length_scaled ? l0 * l0 : 1.0);
  b.k_twist = G * b.J / l0;
  b.k_bend = E * b.I / l0;
  b.bend_scale = model.full_angle_bending ? 2.0 : 1.0;
  return b;
}

inline BondDofs pack_bond(const Eigen::Vector3d& pi, const quat::Quat& qi, const Eigen::Vector3d& pj,
                          const quat::Quat& qj) {
  BondDofs x;
  x << pi, qi, pj, qj;
  return x;
}

}  // namespace percussion::physics
