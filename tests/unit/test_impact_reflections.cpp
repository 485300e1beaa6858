// Generalized Reflections (notes 003 Alg. C, H) on the notes' §5 cases: the cradle, the (1,0,−1) chain in one QP,
// the 3-ball counterexample that naive Jacobi gets wrong, invariants on random packings with mass ratios to 1e3,
// and symmetry on a symmetric rack.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "../support/impact_cases.hpp"
#include "percussion/physics/impact/gauss_seidel.hpp"
#include "percussion/physics/impact/generalized_reflections.hpp"

namespace test_impact_reflections {

using namespace percussion::impact;
using namespace percussion::impact::testing;

namespace {

ResolveOptions options(double eps = 1e-12) {
  ResolveOptions o;
  o.tolerance = eps;
  return o;
}

void expect_velocities(const std::vector<double>& v, const std::vector<double>& want, double tol = 1e-13) {
  ASSERT_EQ(v.size(), want.size());
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], want[i], tol) << "component " << i;
}

double energy(const ImpactSystem& s, const std::vector<double>& v) { return 0.5 * s.energy_norm_squared(v.data()); }

// The 15-ball rack of the billiard break (rows along x, mirror-symmetric about y = 0) and a cue ball on the axis.
std::vector<double> rack_centres() {
  std::vector<double> c{-2.0, 0.0};  // the cue ball, touching the apex
  for (int row = 0; row < 5; ++row)
    for (int k = 0; k <= row; ++k) {
      c.push_back(row * std::sqrt(3.0));
      c.push_back((k - row / 2.0) * 2.0);
    }
  return c;
}

// Index of ball (row, k) in rack_centres().
int rack_ball(int row, int k) { return 1 + row * (row + 1) / 2 + k; }

// How far the rack's velocities are from the mirror image y → −y: ball (row, k) against ball (row, row − k).
double rack_asymmetry(const std::vector<double>& v) {
  double worst = 0.0;
  for (int row = 0; row < 5; ++row)
    for (int k = 0; k <= row; ++k) {
      const int a = rack_ball(row, k), b = rack_ball(row, row - k);
      worst = std::max({worst, std::abs(v[2 * a] - v[2 * b]), std::abs(v[2 * a + 1] + v[2 * b + 1])});
    }
  return worst;
}

}  // namespace

TEST(ImpactReflections, CradlePassesTheMomentumThrough) {
  const ImpactSystem s = chain({1, 1, 1, 1, 1});
  std::vector<double> v{1, 0, 0, 0, 0};
  const auto v0 = v;
  const Resolution r = generalized_reflections(s, v, options());
  expect_resolved(s, v0, v, r, 1e-12);
  expect_velocities(v, {0, 0, 0, 0, 1});
  EXPECT_EQ(r.iterations, 4);  // one contact violated at a time: GR is pairwise GS here
  for (int c = 0; c < 4; ++c) EXPECT_NEAR(r.impulses[c], std::sqrt(2.0), 1e-13);
}

TEST(ImpactReflections, OneQpReversesBothContacts) {
  const ImpactSystem s = chain({1, 1, 1});
  std::vector<double> v{1, 0, -1};
  const auto v0 = v;
  const Resolution r = generalized_reflections(s, v, options());
  expect_resolved(s, v0, v, r, 1e-12);
  EXPECT_EQ(r.iterations, 1);
  expect_velocities(v, {-1, 0, 1});
  // α = −A⁻¹b with A = [[1, −½], [−½, 1]], b = −(1, 1)/√2: α = √2 (1, 1), and the impulses are 2α.
  EXPECT_NEAR(r.impulses[0], 2 * std::sqrt(2.0), 1e-13);
  EXPECT_NEAR(r.impulses[1], 2 * std::sqrt(2.0), 1e-13);
}

TEST(ImpactReflections, NaiveJacobiGainsEnergyGrAndGsDoNot) {
  // Notes Alg. D: ball 0 at rest at the origin, ball 1 from the left at unit speed, ball 2 from 255° towards it.
  const double pi = std::acos(-1.0), a = 255.0 * pi / 180.0;
  const std::vector<double> centres{0, 0, -2, 0, 2 * std::cos(a), 2 * std::sin(a)};
  const ImpactSystem s = balls2d(centres, {1, 1, 1}, 1.0);
  ASSERT_EQ(s.constraints(), 2);  // balls 1 and 2 do not touch
  const std::vector<double> v0{0, 0, 1, 0, -std::cos(a), -std::sin(a)};
  ASSERT_NEAR(energy(s, v0), 1.0, 1e-15);

  // Naive Jacobi: every violated contact's reflection from the same v, impulses summed.
  std::vector<double> jacobi = v0, jacobi_impulses(s.constraints(), 0.0);
  for (int c = 0; c < s.constraints(); ++c) {
    const double slope = s.slope(c, v0.data());
    if (slope < 0) jacobi_impulses[c] = -2 * slope;
  }
  for (int c = 0; c < s.constraints(); ++c) s.apply(c, jacobi_impulses[c], jacobi.data());
  const double e_jacobi = energy(s, jacobi);
  EXPECT_NEAR(e_jacobi, 1.2588, 5e-5);
  // The KIN check every resolution passes (on ‖v‖²_M = 2E) rejects it, and only that check: it is feasible, λ ≥ 0.
  Resolution claimed;
  claimed.terminated = true;
  claimed.impulses = jacobi_impulses;
  EXPECT_NONFATAL_FAILURE(expect_resolved(s, v0, jacobi, claimed, 1e-12), "energy 2 -> 2.5176");

  std::vector<double> gr = v0, gs = v0;
  const Resolution r = generalized_reflections(s, gr, options());
  expect_resolved(s, v0, gr, r, 1e-12);
  EXPECT_NEAR(energy(s, gr), 1.0, 1e-14);
  GaussSeidelOptions g;
  g.resolve = options();
  const Resolution q = gauss_seidel(s, gs, g);
  expect_resolved(s, v0, gs, q, 1e-12);
  EXPECT_NEAR(energy(s, gs), 1.0, 1e-14);
  // Momentum: no walls, so GR and GS keep it; Jacobi happens to as well (NORM holds), energy is what it breaks.
  const auto p0 = momentum(s, v0, 2), p1 = momentum(s, gr, 2);
  for (int i = 0; i < 2; ++i) EXPECT_NEAR(p1[i], p0[i], 1e-14);
}

TEST(ImpactReflections, InvariantsOnRandomPackingsWithMassRatios) {
  // Notes 003 §5 case 18: random 2D hexagonal patches, masses 1 to 1e3, eps 1e-12, 1e-10, 1e-8. Each resolution runs
  // once in full and once a QP at a time, to check that impulses only go to the constraints violated at that step.
  std::mt19937_64 rng(23);
  for (int trial = 0; trial < 6; ++trial) {
    const Packing pack = random_hex_patch(6, rng);
    const ImpactSystem& s = pack.system;
    const std::vector<double>& v0 = pack.v0;
    const double eps = trial % 3 == 0 ? 1e-12 : trial % 3 == 1 ? 1e-10 : 1e-8;

    std::vector<double> v = v0;
    const Resolution r = generalized_reflections(s, v, options(eps));
    expect_resolved(s, v0, v, r, eps);
    EXPECT_GT(r.iterations, 1) << "trial " << trial;
    const double norm0 = std::sqrt(s.energy_norm_squared(v0.data()));
    const auto p0 = momentum(s, v0, 2), p1 = momentum(s, v, 2);
    for (int i = 0; i < 2; ++i) EXPECT_NEAR(p1[i], p0[i], 1e-12 * norm0 * 1e3) << "trial " << trial;

    std::vector<double> w = v0;
    std::vector<char> ever(s.constraints(), 0);
    ResolveOptions one = options(eps);
    one.max_iterations = 1;
    for (int step = 0;; ++step) {
      ASSERT_LT(step, 1000);
      const double threshold = -eps * std::sqrt(s.energy_norm_squared(w.data()));
      std::vector<char> violated(s.constraints(), 0);
      for (int c = 0; c < s.constraints(); ++c) violated[c] = s.slope(c, w.data()) < threshold;
      const Resolution k = generalized_reflections(s, w, one);
      ASSERT_EQ(k.iterations, 1) << "step " << step;
      for (int c = 0; c < s.constraints(); ++c) {
        EXPECT_GE(k.impulses[c], 0.0);
        if (!violated[c]) {
          EXPECT_EQ(k.impulses[c], 0.0) << "constraint " << c << " not violated at step " << step;
        }
        ever[c] |= violated[c];
      }
      if (k.terminated) break;
      EXPECT_NE(k.reason.find("diagnostic cap"), std::string::npos) << k.reason;
    }
    for (int c = 0; c < s.constraints(); ++c) {
      if (!ever[c]) {
        EXPECT_EQ(r.impulses[c], 0.0) << "constraint " << c;
      }
    }
  }
}

TEST(ImpactReflections, SymmetricRackStaysSymmetric) {
  const std::vector<double> centres = rack_centres();
  const ImpactSystem s = balls2d(centres, std::vector<double>(16, 1.0), 1.0);
  std::vector<double> v0(s.dofs(), 0.0);
  v0[0] = 1.0;  // the cue ball along the axis
  std::vector<double> v = v0;
  const Resolution r = generalized_reflections(s, v, options());
  expect_resolved(s, v0, v, r, 1e-12);
  const double asymmetry = rack_asymmetry(v);
  EXPECT_LT(asymmetry, 1e-11);
  EXPECT_NEAR(v[1], 0.0, 1e-12);  // the cue ball stays on the axis
  std::vector<double> again = v0;
  generalized_reflections(s, again, options());
  EXPECT_EQ(again, v);  // deterministic, bit for bit
  // Pairwise Gauss–Seidel in index order reflects the apex's left contact first and breaks the symmetry.
  std::vector<double> u = v0;
  GaussSeidelOptions g;
  g.resolve = options();
  const Resolution q = gauss_seidel(s, u, g);
  expect_resolved(s, v0, u, q, 1e-12);
  EXPECT_GT(rack_asymmetry(u), 1e-3);
}

TEST(ImpactReflections, MiniGeyserLoopsUntilItsLinealityIsRemoved) {
  // Notes §5 case 8: the plug A, B between two walls and the projectile C from below.
  const double r3 = std::sqrt(3.0);
  const std::vector<double> centres{-1, 0, 1, 0, 0, -r3};
  const std::vector<double> v0{0, 0, 0, 0, 0, 1};
  const ImpactSystem plain = balls2d(centres, {1, 1, 1}, 1.0, {{-2, 0, 1, 0}, {2, 0, -1, 0}});
  ASSERT_EQ(plain.constraints(), 5);  // A–B, A–C, A–wall, B–C, B–wall
  std::vector<double> v = v0;
  ResolveOptions capped = options();
  capped.max_iterations = 500;
  const Resolution loop = generalized_reflections(plain, v, capped);
  EXPECT_FALSE(loop.terminated);
  EXPECT_EQ(loop.iterations, 500);
  EXPECT_NEAR(energy(plain, v), 0.5, 1e-13);

  // Algorithm F's result, built by hand: the lineality space of {A–B, A–wall, B–wall} is (A_x, B_x); A–C and B–C
  // lose those components. One QP then resolves it symmetrically.
  ImpactSystem reduced;
  for (int k = 0; k < 3; ++k) reduced.add_point_mass(2, 1.0);
  const double ac_a[] = {0, r3 / 2}, ac_c[] = {0.5, -r3 / 2}, bc_b[] = {0, r3 / 2}, bc_c[] = {-0.5, -r3 / 2};
  reduced.add_constraint(0, ac_a, 2, ac_c);
  reduced.add_constraint(1, bc_b, 2, bc_c);
  reduced.finish();
  v = v0;
  const Resolution r = generalized_reflections(reduced, v, options());
  expect_resolved(reduced, v0, v, r, 1e-12);
  EXPECT_EQ(r.iterations, 1);
  expect_velocities(v, {0, 2.0 / 3, 0, 2.0 / 3, 0, -1.0 / 3});
}

TEST(ImpactReflections, DiagnosticCapIsNeverSilent) {
  // The wedged ball (notes §5 case 6): two opposing walls form an implicit equality and GR cycles forever.
  const ImpactSystem s = balls2d({0, 0}, {1}, 1.0, {{-1, 0, 1, 0}, {1, 0, -1, 0}});
  ASSERT_EQ(s.constraints(), 2);
  std::vector<double> v{0.3, 1.0};
  ResolveOptions o = options();
  o.max_iterations = 50;
  const Resolution r = generalized_reflections(s, v, o);
  EXPECT_FALSE(r.terminated);
  EXPECT_EQ(r.iterations, 50);
  EXPECT_NE(r.reason.find("diagnostic cap of 50 QP solves"), std::string::npos) << r.reason;
  EXPECT_NEAR(std::abs(v[0]), 0.3, 1e-12);  // a 2-cycle ±0.3: the energy is kept, nothing is silently damped
  EXPECT_NEAR(v[1], 1.0, 1e-12);
}

}  // namespace test_impact_reflections
