// Gauss–Newton bond Hessian (notes 001 §2.9): same energy and gradient as bond_reduced, residual Jacobians
// against central differences along the exp_body retraction, PSD and symmetric JᵀWJ, equality with the exact
// reduced Hessian where every residual vanishes, and a Newton model that descends and converges.
#include <gtest/gtest.h>

#include "../support/bond_test_support.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "percussion/physics/bond_rest.hpp"
#include "percussion/physics/manifold_bond.hpp"
#include "percussion/physics/manifold_bond_gn.hpp"
#include "percussion/physics/quaternion.hpp"
#include "percussion/physics/rigid_modes.hpp"

namespace test_manifold_gn {

namespace {

using percussion::test::material;
using percussion::test::models;

using namespace percussion;
using namespace percussion::physics;
using quat::Quat;
using Eigen::Vector3d;

using State = percussion::test::BondState;
using percussion::test::retract;

struct Rng : percussion::test::RandomSource {
  Rng() : RandomSource(4711) {}
  Reduced12 vector12() {
    Reduced12 v;
    for (int a = 0; a < 12; ++a) v[a] = normal(gen);
    return v;
  }
  // Bond between unequal spheres (l0 ≈ 1, stiffnesses O(1..100)) in its rest state moved rigidly by a random
  // rotation and translation; `flip` stores q_j in the opposite hemisphere.
  State rigid_rest(const BondModel& model, bool flip) {
    const double ri = 0.5 + 0.1 * uniform(gen), rj = 0.5 + 0.1 * uniform(gen);
    const Vector3d p0 = vec(), d0 = vec().normalized();
    State s;
    s.rest = make_bond_rest(p0, p0 + (ri + rj) * d0, ri, rj, material(100.0, 0.3), material(60.0, 0.2), model);
    const Quat qR = unit_quat();
    s.pi = vec();
    s.pj = s.pi + s.rest.l0 * quat::rotate(qR, d0);
    s.qi = qR;
    s.qj = flip ? Quat(-qR) : qR;
    return s;
  }
  // Deformed: strain in [lo, hi], direction tilted, both ends rotated by up to `rotation`.
  State deformed(const BondModel& model, double rotation, double lo, double hi, bool flip) {
    State s = rigid_rest(model, flip);
    const double strain = lo + 0.5 * (uniform(gen) + 1.0) * (hi - lo);
    const Vector3d d = (s.pj - s.pi).normalized();
    s.pj = s.pi + s.rest.l0 * (1.0 + strain) * (d + 0.15 * vec()).normalized();
    s.qi = quat::exp_body(s.qi, 0.5 * rotation * vec());
    s.qj = quat::exp_body(s.qj, 0.5 * rotation * vec());
    return s;
  }
};

BondReduced gn_of(const State& s) { return bond_reduced_gauss_newton(s.pi, s.qi, s.pj, s.qj, s.rest); }
BondReduced exact_of(const State& s) { return bond_reduced(s.pi, s.qi, s.pj, s.qj, s.rest, false); }
BondResidual residuals_of(const State& s) { return bond_residuals(s.pi, s.qi, s.pj, s.qj, s.rest); }
BondResidualJacobian jacobian_of(const State& s) { return bond_residual_jacobian(s.pi, s.qi, s.pj, s.qj, s.rest); }
double energy_of(const State& s) { return bond_energy(s.pi, s.qi, s.pj, s.qj, s.rest); }

// A mix of mild, compressed and strongly rotated states, both hemispheres.
std::vector<State> sample_states(Rng& rng) {
  std::vector<State> out;
  for (const BondModel& model : models()) {
    for (int k = 0; k < 8; ++k) {
      out.push_back(rng.deformed(model, 0.6, -0.1, 0.1, k % 2 == 1));
      out.push_back(rng.deformed(model, 1.2, -0.3, 0.05, k % 2 == 0));
    }
  }
  return out;
}

TEST(GaussNewtonBond, EnergyAndGradientAreBondReducedsAndEqualHalfRtWrAndJtWr) {
  Rng rng;
  for (const State& s : sample_states(rng)) {
    const BondReduced gn = gn_of(s), ex = exact_of(s);
    EXPECT_EQ(gn.energy, ex.energy);
    EXPECT_EQ((gn.gradient - ex.gradient).lpNorm<Eigen::Infinity>(), 0.0);
    // The residual form reproduces both independently: V = ½ rᵀWr, 𝒢∇V = JᵀWr.
    const BondResidual r = residuals_of(s);
    const BondResidual Wr = bond_residual_weights(s.rest).cwiseProduct(r);
    EXPECT_NEAR(0.5 * r.dot(Wr), gn.energy, 1e-13 * std::max(1.0, gn.energy));
    const Reduced12 JtWr = jacobian_of(s).transpose() * Wr;
    EXPECT_LE((JtWr - gn.gradient).lpNorm<Eigen::Infinity>(), 1e-12 * std::max(1.0, gn.gradient.norm()));
  }
}

TEST(GaussNewtonBond, HessianIsSymmetricPsdAndEqualsJtWJ) {
  Rng rng;
  int exact_indefinite = 0;
  for (const State& s : sample_states(rng)) {
    const BondReduced gn = gn_of(s);
    EXPECT_EQ((gn.hessian - gn.hessian.transpose()).lpNorm<Eigen::Infinity>(), 0.0);
    const Eigen::SelfAdjointEigenSolver<Hessian12> es(gn.hessian, Eigen::EigenvaluesOnly);
    const double lmax = es.eigenvalues().cwiseAbs().maxCoeff();
    EXPECT_GE(es.eigenvalues()[0], -1e-12 * lmax);
    // Six rigid-body modes (3 translations, 3 rotations) are always in the null space; the other six are
    // positive (the seven residuals constrain six relative dofs).
    EXPECT_GT(es.eigenvalues()[6], 1e-6 * lmax);

    const BondResidualJacobian J = jacobian_of(s);
    const Hessian12 dense = J.transpose() * bond_residual_weights(s.rest).asDiagonal() * J;
    EXPECT_LE((gn.hessian - dense).lpNorm<Eigen::Infinity>(), 1e-13 * lmax);

    const Eigen::SelfAdjointEigenSolver<Hessian12> ex(exact_of(s).hessian, Eigen::EigenvaluesOnly);
    if (ex.eigenvalues()[0] < -1e-9 * lmax) ++exact_indefinite;
  }
  EXPECT_GE(exact_indefinite, 20);  // the states are ones where the exact Hessian needs projecting
}

// The multigrid's near-nullspace: the bond energy is invariant under the six rigid modes, so the gradient is
// orthogonal to them and moving along one by the retraction leaves the energy unchanged to second order
// (central differences). The Gauss–Newton Hessian annihilates translations at any state and all six modes
// at rest; a stressed bond's residual vector turns with a rotation, so there rotations are only nearly null.
TEST(GaussNewtonBond, RigidModesAreItsNullSpace) {
  Rng rng;
  auto modes_of = [](const State& s, const Vector3d& centre) {
    Eigen::Matrix<double, 12, 6> m;
    m.topRows<6>() = rigid_modes(s.pi, s.qi, centre);
    m.bottomRows<6>() = rigid_modes(s.pj, s.qj, centre);
    return m;
  };
  for (const State& s : sample_states(rng)) {
    const Eigen::Matrix<double, 12, 6> modes = modes_of(s, rng.vec());
    const BondReduced gn = gn_of(s);
    const double lmax = gn.hessian.lpNorm<Eigen::Infinity>();
    EXPECT_LE((gn.hessian * modes.leftCols<3>()).lpNorm<Eigen::Infinity>(), 1e-12 * lmax);
    const double gscale = std::max(1.0, gn.gradient.norm());
    EXPECT_LE((gn.gradient.transpose() * modes).lpNorm<Eigen::Infinity>(), 1e-12 * gscale);
    const double h = 1e-5;
    for (int k = 0; k < 6; ++k) {
      const Reduced12 e = h * modes.col(k);
      const double slope = (energy_of(retract(s, e)) - energy_of(retract(s, -e))) / (2.0 * h);
      EXPECT_LE(std::abs(slope), 1e-7 * gscale) << "mode " << k;
    }
    // Not a vacuous check: a non-rigid perturbation does change the energy.
    EXPECT_GT((gn.hessian * rng.vector12()).norm(), 1e-3 * lmax);
  }
  for (const BondModel& model : models())
    for (bool flip : {false, true}) {
      const State s = rng.rigid_rest(model, flip);
      const BondReduced gn = gn_of(s);
      EXPECT_LE((gn.hessian * modes_of(s, rng.vec())).lpNorm<Eigen::Infinity>(),
                1e-12 * gn.hessian.lpNorm<Eigen::Infinity>());
    }
}

TEST(GaussNewtonBond, ResidualJacobiansMatchCentralDifferencesAlongRetraction) {
  Rng rng;
  const double h = 1e-6;
  const char* names[] = {"stretch", "shear", "bend/twist"};
  const int first[] = {0, 1, 4}, rows[] = {1, 3, 3};
  for (const State& s : sample_states(rng)) {
    const BondResidualJacobian J = jacobian_of(s);
    BondResidualJacobian fd;
    for (int a = 0; a < 12; ++a) {
      const Reduced12 e = h * Reduced12::Unit(a);
      fd.col(a) = (residuals_of(retract(s, e)) - residuals_of(retract(s, -e))) / (2.0 * h);
    }
    for (int p = 0; p < 3; ++p) {
      const double err = (J.middleRows(first[p], rows[p]) - fd.middleRows(first[p], rows[p])).lpNorm<Eigen::Infinity>();
      const double scale = std::max(1.0, J.middleRows(first[p], rows[p]).lpNorm<Eigen::Infinity>());
      EXPECT_LE(err, 1e-8 * scale) << names[p];
    }
  }
}

TEST(GaussNewtonBond, EqualsExactHessianWhereAllResidualsVanish) {
  Rng rng;
  for (const BondModel& model : models()) {
    for (int k = 0; k < 6; ++k) {
      const State s = rng.rigid_rest(model, k % 2 == 1);
      ASSERT_LE(residuals_of(s).norm(), 1e-14);
      const BondReduced gn = gn_of(s), ex = exact_of(s);
      const double scale = ex.hessian.lpNorm<Eigen::Infinity>();
      EXPECT_LE((gn.hessian - ex.hessian).lpNorm<Eigen::Infinity>(), 1e-9 * scale) << "sample " << k;

      // Away from rest, what Gauss–Newton drops (Σ (Wr)_k ∇²r_k − curvature) is first order in the load:
      // a ten times smaller deformation gives a ten times smaller difference.
      const Reduced12 e = rng.vector12();
      auto dropped = [&](double eps) {
        const State m = retract(s, eps * e);
        return (exact_of(m).hessian - gn_of(m).hessian).lpNorm<Eigen::Infinity>();
      };
      const double ratio = dropped(1e-2) / dropped(1e-3);
      EXPECT_GT(ratio, 9.0) << "sample " << k;
      EXPECT_LT(ratio, 11.0) << "sample " << k;
    }
  }
}

TEST(GaussNewtonBond, ModelIsADescentModelAndConvergesOnOneBond) {
  Rng rng;
  for (const State& s : sample_states(rng)) {
    const BondReduced gn = gn_of(s);
    const double mu = 1e-8 * gn.hessian.lpNorm<Eigen::Infinity>();
    const Hessian12 reg = gn.hessian + mu * Hessian12::Identity();
    const Reduced12 y = reg.ldlt().solve(gn.gradient);
    EXPECT_GT(gn.gradient.dot(y), 0.0);
    // g = JᵀWr lies in range(JᵀWJ): no component along the null space, so the unregularised GN step exists.
    const Eigen::SelfAdjointEigenSolver<Hessian12> es(gn.hessian);
    const double lmax = es.eigenvalues().maxCoeff();
    for (int a = 0; a < 12; ++a) {
      if (es.eigenvalues()[a] < 1e-10 * lmax) {
        EXPECT_LE(std::abs(es.eigenvectors().col(a).dot(gn.gradient)), 1e-10 * gn.gradient.norm());
      }
    }
  }
  // A single bond is a zero-residual least-squares problem, so Gauss–Newton converges quadratically to
  // V = 0 (V_{k+1} ≈ C V_k²): each step's reduction ratio V_{k+1}/V_k is itself ≥ 10× smaller than the last.
  // Measured: 2.1 → 1.7e-2 → 9.5e-8 → 2.1e-17.
  for (const BondModel& model : models()) {
    State s = rng.deformed(model, 0.3, -0.05, 0.05, false);
    std::vector<double> V{energy_of(s)};
    for (int it = 0; it < 3; ++it) {
      const BondReduced gn = gn_of(s);
      const Eigen::SelfAdjointEigenSolver<Hessian12> es(gn.hessian);
      const double lmax = es.eigenvalues().maxCoeff();
      Reduced12 y = Reduced12::Zero();
      for (int a = 0; a < 12; ++a) {
        const double l = es.eigenvalues()[a];
        if (l > 1e-10 * lmax) y -= (es.eigenvectors().col(a).dot(gn.gradient) / l) * es.eigenvectors().col(a);
      }
      s = retract(s, y);
      V.push_back(energy_of(s));
    }
    EXPECT_LT(V[1], 1e-2 * V[0]);
    EXPECT_LT(V[2] / V[1], 1e-1 * V[1] / V[0]);
    EXPECT_LT(V[3] / V[2], 1e-1 * V[2] / V[1]);
    EXPECT_LT(V[3], 1e-15 * V[0]);
  }
}

// The assembly's path: the scaled blocks S_a H S_b (S = diag(σ_p I3, σ_y I3) per particle) against the dense JᵀWJ
// scaled, at the iterate and along another point's retraction (the midpoint form's), and the blocks taken from the
// geometry alone (an assembly at a state whose gradient is current) equal to those taken with the gradient.
TEST(GaussNewtonBond, ScaledBlocksAreTheScaledDenseHessian) {
  Rng rng;
  for (const State& s : sample_states(rng)) {
    const BlockScale sa{1.0 + 0.5 * rng.uniform(rng.gen), 2.0 + rng.uniform(rng.gen)};
    const BlockScale sb{1.5 + rng.uniform(rng.gen), 0.7 + 0.5 * rng.uniform(rng.gen)};
    Eigen::Matrix<double, 12, 1> scale;
    scale << Vector3d::Constant(sa.p), Vector3d::Constant(sa.y), Vector3d::Constant(sb.p), Vector3d::Constant(sb.y);
    const BondResidualJacobian J = jacobian_of(s);
    const Hessian12 dense = scale.asDiagonal() * (J.transpose() * bond_residual_weights(s.rest).asDiagonal() * J) *
                            scale.asDiagonal();
    Reduced12 gradient;
    BondBlocks blocks;
    const double energy = bond_gauss_newton(s.pi, s.qi, s.pj, s.qj, s.rest, {s.qi, s.qj, 1.0}, sa, sb, gradient, blocks);
    EXPECT_EQ(energy, gn_of(s).energy);
    EXPECT_EQ((gradient - gn_of(s).gradient).lpNorm<Eigen::Infinity>(), 0.0);
    const double lmax = dense.lpNorm<Eigen::Infinity>();
    EXPECT_LE((blocks.aa - dense.topLeftCorner<6, 6>()).lpNorm<Eigen::Infinity>(), 1e-13 * lmax);
    EXPECT_LE((blocks.ab - dense.topRightCorner<6, 6>()).lpNorm<Eigen::Infinity>(), 1e-13 * lmax);
    EXPECT_LE((blocks.bb - dense.bottomRightCorner<6, 6>()).lpNorm<Eigen::Infinity>(), 1e-13 * lmax);
    EXPECT_EQ((blocks.aa - blocks.aa.transpose()).lpNorm<Eigen::Infinity>(), 0.0);
    EXPECT_EQ((blocks.bb - blocks.bb.transpose()).lpNorm<Eigen::Infinity>(), 0.0);

    BondBlocks from_geometry;
    gauss_newton_blocks(detail::bond_geometry(s.pi, s.qi, s.pj, s.qj), s.qi, s.rest, {s.qi, s.qj, 1.0}, sa, sb,
                        from_geometry);
    EXPECT_EQ((from_geometry.aa - blocks.aa).lpNorm<Eigen::Infinity>(), 0.0);
    EXPECT_EQ((from_geometry.ab - blocks.ab).lpNorm<Eigen::Infinity>(), 0.0);
    EXPECT_EQ((from_geometry.bb - blocks.bb).lpNorm<Eigen::Infinity>(), 0.0);

    // Along another point's retraction, scaled by s = ½ (the midpoint form): s² times the blocks there.
    const State other = rng.deformed(models().front(), 0.3, -0.05, 0.05, false);
    BondBlocks mid, unit;
    Reduced12 g2;
    bond_gauss_newton(s.pi, s.qi, s.pj, s.qj, s.rest, {other.qi, other.qj, 0.5}, sa, sb, g2, mid);
    bond_gauss_newton(s.pi, s.qi, s.pj, s.qj, s.rest, {other.qi, other.qj, 1.0}, sa, sb, g2, unit);
    EXPECT_LE((mid.ab - 0.25 * unit.ab).lpNorm<Eigen::Infinity>(), 1e-14 * unit.ab.lpNorm<Eigen::Infinity>());
    EXPECT_GT((unit.ab - blocks.ab).lpNorm<Eigen::Infinity>(), 1e-6 * lmax);  // the retraction's point matters
  }
}

}  // namespace

}  // namespace test_manifold_gn
