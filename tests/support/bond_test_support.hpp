#pragma once
// Shared by the bond-potential tests: materials, both readings of the notes' [ERRATUM?] switches, and a
// seeded source of random vectors and unit quaternions.
#include <Eigen/Core>
#include <random>
#include <vector>

#include "percussion/core/scene_parts.hpp"
#include "percussion/physics/bond_rest.hpp"
#include "percussion/physics/quaternion.hpp"

namespace percussion::test {

inline Material material(double E, double nu) {
  Material m;
  m.name = "m";
  m.density = 1000.0;
  m.youngs_modulus = E;
  m.poisson_ratio = nu;
  m.tensile_strength = 1.0;
  m.shear_strength = 1.0;
  return m;
}

// The paper's reading, the default (l0² shear units fix, half-angle bending), and full-angle bending.
inline std::vector<BondModel> models() {
  BondModel paper;
  paper.shear_length_scaled = false;
  paper.full_angle_bending = false;
  BondModel fixed;
  BondModel beam;
  beam.full_angle_bending = true;
  return {paper, fixed, beam};
}

// One bond's rest data and the current state of its two ends.
struct BondState {
  physics::BondRest rest;
  Eigen::Vector3d pi, pj;
  quat::Quat qi, qj;
};

// The retraction of the reduced coordinates e = (δp_i, y_i, δp_j, y_j): translate, turn along geodesics.
inline BondState retract(const BondState& s, const Eigen::Matrix<double, 12, 1>& e) {
  BondState m = s;
  m.pi = s.pi + e.segment<3>(0);
  m.qi = quat::exp_body(s.qi, e.segment<3>(3));
  m.pj = s.pj + e.segment<3>(6);
  m.qj = quat::exp_body(s.qj, e.segment<3>(9));
  return m;
}

struct RandomSource {
  explicit RandomSource(unsigned seed) : gen(seed) {}
  std::mt19937_64 gen;
  std::normal_distribution<double> normal{0.0, 1.0};
  std::uniform_real_distribution<double> uniform{-1.0, 1.0};
  Eigen::Vector3d vec() { return Eigen::Vector3d(normal(gen), normal(gen), normal(gen)); }
  quat::Quat unit_quat() {
    quat::Quat q(normal(gen), normal(gen), normal(gen), normal(gen));
    return q / q.norm();
  }
  template <int N>
  Eigen::Matrix<double, N, 1> vector() {
    Eigen::Matrix<double, N, 1> v;
    for (int a = 0; a < N; ++a) v[a] = normal(gen);
    return v;
  }
};

}  // namespace percussion::test
