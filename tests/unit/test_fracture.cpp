// Fracture criteria (notes 001 §2.6, eqs. 12–17) on hand-computed load cases, and the critical time step
// (§2.10). The bond: two spheres of radius r = 0.01 touching along x, so l0 = 0.02 and r0 = 0.01; with
// E = 1e7 and ν = 0.25 (G = 4e6) every stress below reduces to a number computed by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <numbers>

#include "percussion/physics/bond_forces.hpp"
#include "percussion/physics/bond_rest.hpp"
#include "percussion/physics/critical_step.hpp"
#include "percussion/physics/quaternion.hpp"

namespace test_fracture {

namespace {

using namespace percussion;
using namespace percussion::physics;
using Eigen::Vector3d;

constexpr double kE = 1e7, kNu = 0.25, kG = 4e6, kR = 0.01, kL0 = 0.02;

Material material() {
  Material m;
  m.name = "m";
  m.density = 2000.0;
  m.youngs_modulus = kE;
  m.poisson_ratio = kNu;
  m.tensile_strength = 3e4;
  m.shear_strength = 3e4;
  return m;
}

BondRest rest(const BondModel& model) {
  const Material m = material();
  return make_bond_rest(Vector3d::Zero(), Vector3d(kL0, 0, 0), kR, kR, m, m, model);
}

const Vector3d kOrigin = Vector3d::Zero();
const Vector3d kPjRest(kL0, 0.0, 0.0);

TEST(Fracture, PureAxialStretchGivesStrainTimesModulus) {
  // σ = k_n ΔL / S = E ΔL / l0 = 1e7 · 1e-4 / 0.02 = 5e4; no shear, bending or twist.
  const BondRest b = rest(BondModel{});
  ASSERT_DOUBLE_EQ(b.kn * 1e-4 / b.area, 5e4);
  for (bool tensile_only : {false, true}) {
    const BondForces f = bond_forces(kOrigin, quat::identity(), kPjRest + Vector3d(1e-4, 0, 0), quat::identity(), b,
                                     tensile_only);
    EXPECT_NEAR(f.sigma, 5e4, 5e4 * 1e-12);
    EXPECT_NEAR(f.tau, 0.0, 1e-9);
    EXPECT_NEAR(f.fi.x(), b.kn * 1e-4, 1e-12);  // i is pulled towards j
    EXPECT_NEAR(f.energy, 0.5 * b.kn * 1e-8, 1e-15);
  }
}

TEST(Fracture, CompressionCountsOnlyWithoutTensileOnly) {
  const BondRest b = rest(BondModel{});
  const Vector3d pj = kPjRest - Vector3d(2e-4, 0, 0);  // 1% compression
  EXPECT_NEAR(bond_forces(kOrigin, quat::identity(), pj, quat::identity(), b, false).sigma, 1e5, 1e5 * 1e-12);
  EXPECT_EQ(bond_forces(kOrigin, quat::identity(), pj, quat::identity(), b, true).sigma, 0.0);
}

TEST(Fracture, PureTwistGivesHalfAngleShearStress) {
  // q_j = rotation φ about d0: t_raw = vec(q̄_j) = −sin(φ/2) d0, so t0 = −s_b sin(φ/2), t1 = t2 = 0,
  // and d_q = d0 (no shear). τ = k_twist |t0| r0 / J = (G J / l0) s_b sin(φ/2) r0 / J = G r0 s_b sin(φ/2) / l0.
  // φ = π/3: sin(φ/2) = 1/2, τ = 4e6 · 0.01 · 0.5 / 0.02 = 1e6 (paper's half angle), 2e6 (full angle).
  const double phi = std::numbers::pi / 3.0;
  for (bool full : {false, true}) {
    BondModel model;
    model.full_angle_bending = full;
    const BondRest b = rest(model);
    const quat::Quat qj = quat::from_rotation_vector(phi * b.d0);
    const double t0 = -b.bend_scale * std::sin(0.5 * phi);
    const BondForces f = bond_forces(kOrigin, quat::identity(), kPjRest, qj, b, false);
    EXPECT_NEAR(f.tau, b.k_twist * std::abs(t0) * b.r0 / b.J, 1e-9);
    EXPECT_NEAR(f.tau, full ? 2e6 : 1e6, 1e-6);
    EXPECT_NEAR(f.sigma, 0.0, 1e-6);
    // The twist torque acts about the bond axis, equal and opposite on the two ends.
    // The transmitted torque is dV/dφ = d/dφ [½ k_twist s_b² sin²(φ/2)] = ¼ s_b² k_twist sin φ (about +x on i,
    // since j is twisted positively and drags i along).
    const double torque = 0.25 * b.bend_scale * b.bend_scale * b.k_twist * std::sin(phi);
    EXPECT_NEAR(f.ti.x(), torque, 1e-12 * torque);
    EXPECT_NEAR(f.ti.y(), 0.0, 1e-14 * torque);
    EXPECT_NEAR(f.ti.z(), 0.0, 1e-14 * torque);
    EXPECT_NEAR((f.ti + f.tj).norm(), 0.0, 1e-14 * torque);
  }
}

TEST(Fracture, PureBendingOfOneEndGivesBendingAndShearStress) {
  // q_j = rotation φ about e1 ⟂ d0, positions at rest. Bending: |t1|² + |t2|² = sin²(φ/2), so
  // σ = (E I / l0) sin(φ/2) r0 / I = E r0 sin(φ/2) / l0 = 5e6 sin(φ/2).
  // Shear: q_c rotates d0 by φ/2, |P(d − d_q)| = sin(φ/2), |F_s| = k_t sin(φ/2) / l0 with k_t = G S l0 (l0² fix),
  // so τ = G sin(φ/2) = 4e6 sin(φ/2).
  const double phi = 0.2;
  const BondRest b = rest(BondModel{});
  const Vector3d e1 = b.R0.row(1).transpose();
  const BondForces f = bond_forces(kOrigin, quat::identity(), kPjRest, quat::from_rotation_vector(phi * e1), b, false);
  EXPECT_NEAR(f.sigma, 5e6 * std::sin(0.5 * phi), 1e-6);
  EXPECT_NEAR(f.tau, 4e6 * std::sin(0.5 * phi), 1e-6);
}

TEST(Fracture, BreaksOnlyAboveEitherThreshold) {
  EXPECT_FALSE(bond_breaks(1.0, 1.0, 1.0, 1.0));  // at the threshold: intact
  EXPECT_TRUE(bond_breaks(1.0 + 1e-12, 0.0, 1.0, 1.0));
  EXPECT_TRUE(bond_breaks(0.0, 2.0, 1.0, 1.5));
  EXPECT_FALSE(bond_breaks(0.9, 1.4, 1.0, 1.5));
  EXPECT_DOUBLE_EQ(physics::stress_ratio(0.5, 3.0, 1.0, 2.0), 1.5);
  EXPECT_DOUBLE_EQ(physics::stress_ratio(0.9, 1.2, 0.5, 2.0), 1.8);
  // With the stretch case above: 5e4 > 3e4 breaks, half the stretch (2.5e4) does not.
  const BondRest b = rest(BondModel{});
  const Material m = material();
  const auto sigma = [&](double dL) {
    return bond_forces(kOrigin, quat::identity(), kPjRest + Vector3d(dL, 0, 0), quat::identity(), b, true).sigma;
  };
  EXPECT_TRUE(bond_breaks(sigma(1e-4), 0.0, m.tensile_strength, m.shear_strength));
  EXPECT_FALSE(bond_breaks(sigma(0.5e-4), 0.0, m.tensile_strength, m.shear_strength));
}

// The implicit integrator's fracture test takes the stresses alone (bond_stresses): they must be bond_forces' to the
// bit, or the two integrators would break different bonds in the same state.
TEST(Fracture, StressesAloneAreThoseOfTheForcesToTheBit) {
  const BondRest b = rest(BondModel{});
  std::srand(7);
  auto random = [] { return 2.0 * std::rand() / RAND_MAX - 1.0; };
  for (int trial = 0; trial < 200; ++trial) {
    const Vector3d pj = kPjRest + 2e-3 * Vector3d(random(), random(), random());
    const quat::Quat qi = quat::from_rotation_vector(0.3 * Vector3d(random(), random(), random()));
    quat::Quat qj = quat::from_rotation_vector(0.3 * Vector3d(random(), random(), random()));
    if (trial % 2) qj = -qj;  // the other hemisphere: the same rotation
    for (const bool tensile_only : {false, true}) {
      const BondForces f = bond_forces(kOrigin, qi, pj, qj, b, tensile_only);
      const BondStresses s = bond_stresses(kOrigin, qi, pj, qj, b, tensile_only);
      EXPECT_EQ(s.sigma, f.sigma);
      EXPECT_EQ(s.tau, f.tau);
      EXPECT_GT(f.tau, 0.0);
    }
  }
}

TEST(Fracture, CriticalTimeStepMatchesLatticeEigenvalueFormula) {
  // T = 2 / sqrt(λ_max), λ_max = 16 k_n / m, k_n from the bond of two touching spheres.
  const Material m = material();
  const BondRest b = rest(BondModel{});
  const double mass = m.density * 4.0 / 3.0 * std::numbers::pi * kR * kR * kR;
  EXPECT_DOUBLE_EQ(b.kn, std::numbers::pi / 2.0 * kE * kR);
  const double T = 2.0 / std::sqrt(16.0 * b.kn / mass);
  EXPECT_NEAR(critical_time_step(kR, m.density, kE), T, 1e-15 * T);
  // By hand: r = 1e-3, ρ = 1500, E = 1e9 → 1e-3 · sqrt(3000 / 3e9) = 1e-6.
  EXPECT_NEAR(critical_time_step(1e-3, 1500.0, 1e9), 1e-6, 1e-21);
}

}  // namespace

}  // namespace test_fracture
