// Pairwise Gauss–Seidel against the exact results of notes 003 §5 (chains, cradle, wedge, corner, VIO, collapse,
// the virial certificate) and the invariants every resolution keeps.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "../support/impact_cases.hpp"
#include "percussion/physics/impact/gauss_seidel.hpp"

namespace test_impact_gauss_seidel {

using namespace percussion::impact;
using namespace percussion::impact::testing;

namespace {

constexpr double kEps = 1e-12;

GaussSeidelOptions options(GaussSeidelOrder order = GaussSeidelOrder::lowest_index, std::uint64_t seed = 0) {
  GaussSeidelOptions o;
  o.order = order;
  o.seed = seed;
  o.resolve.tolerance = kEps;
  return o;
}

void expect_velocities(const std::vector<double>& v, const std::vector<double>& want, double tol = 1e-14) {
  ASSERT_EQ(v.size(), want.size());
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], want[i], tol) << "component " << i;
}

}  // namespace

TEST(ImpactGaussSeidel, TwoBallsOneReflection) {
  const ImpactSystem s = chain({1, 3});
  std::vector<double> v{1, 0};
  const auto v0 = v;
  const Resolution r = gauss_seidel(s, v, options());
  expect_resolved(s, v0, v, r, kEps);
  EXPECT_EQ(r.reflections, 1);
  expect_velocities(v, {-0.5, 0.5});
  // λ = −2 n·v with n = (−1, 1)/sqrt(1 + 1/3): the physical impulse λ/sqrt(metric) is 2 μ Δu = 1.5.
  EXPECT_NEAR(r.impulses[0] / std::sqrt(s.raw_metric(0)), 1.5, 1e-14);
}

TEST(ImpactGaussSeidel, CradleSortsAndCountsInversionsInEveryOrder) {
  const ImpactSystem s = chain({1, 1, 1, 1, 1});
  for (GaussSeidelOrder order :
       {GaussSeidelOrder::lowest_index, GaussSeidelOrder::most_violated, GaussSeidelOrder::random}) {
    std::vector<double> v{1, 0, 0, 0, 0};
    const auto v0 = v;
    const Resolution r = gauss_seidel(s, v, options(order, 7));
    expect_resolved(s, v0, v, r, kEps);
    EXPECT_EQ(r.reflections, 4);
    expect_velocities(v, {0, 0, 0, 0, 1});
  }
  // Random initial velocities: the result is the ascending sort, after exactly #inversions reflections.
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int> value(-3, 3);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<double> v(5);
    for (double& x : v) x = value(rng);
    int inversions = 0;
    for (int i = 0; i < 5; ++i)
      for (int j = i + 1; j < 5; ++j) inversions += v[i] > v[j];
    auto sorted = v;
    std::sort(sorted.begin(), sorted.end());
    const auto v0 = v;
    const auto order = static_cast<GaussSeidelOrder>(trial % 3);
    const Resolution r = gauss_seidel(s, v, options(order, trial));
    expect_resolved(s, v0, v, r, kEps);
    EXPECT_EQ(r.reflections, inversions) << "trial " << trial;
    expect_velocities(v, sorted);
  }
}

TEST(ImpactGaussSeidel, UnequalMassChainsGiveTheExactResults) {
  struct Case {
    std::vector<double> m, want;
    int reflections;
  };
  const Case cases[] = {
      {{1, 2, 3}, {-1.0 / 3, -2.0 / 15, 8.0 / 15}, 2}, {{3, 2, 1}, {1.0 / 5, 2.0 / 5, 8.0 / 5}, 2},
      {{1, 3, 1}, {-1.0 / 2, 1.0 / 4, 3.0 / 4}, 2},    {{2, 1, 2}, {-5.0 / 27, 16.0 / 27, 8.0 / 9}, 3},
      {{1, 1, 2}, {-1.0 / 3, 0, 2.0 / 3}, 3},          {{2, 1, 1}, {1.0 / 9, 4.0 / 9, 4.0 / 3}, 3},
  };
  for (const Case& c : cases) {
    const ImpactSystem s = chain(c.m);
    std::vector<double> v{1, 0, 0};
    const auto v0 = v;
    const Resolution r = gauss_seidel(s, v, options());
    expect_resolved(s, v0, v, r, kEps);
    EXPECT_EQ(r.reflections, c.reflections);
    expect_velocities(v, c.want);
    EXPECT_NEAR(momentum(s, v, 1)[0], c.m[0], 1e-14);
  }
}

TEST(ImpactGaussSeidel, OrderDependence) {
  const ImpactSystem s = chain({1, 2, 3});
  std::vector<double> v{1, 0, -1};
  const auto v0 = v;
  const Resolution r = gauss_seidel(s, v, options());
  expect_resolved(s, v0, v, r, kEps);
  EXPECT_EQ(r.reflections, 3);
  expect_velocities(v, {-5.0 / 3, -2.0 / 3, 1.0 / 3});
  // The most violated first reflects (1,2) first here (relative speed 1 each, tie → lower index... both -1/√(·)):
  // whatever it picks, momentum and energy hold and the result is feasible.
  std::vector<double> w{1, 0, -1};
  const Resolution q = gauss_seidel(s, w, options(GaussSeidelOrder::most_violated));
  expect_resolved(s, v0, w, q, kEps);
  EXPECT_NEAR(momentum(s, w, 1)[0], -2.0, 1e-14);
}

TEST(ImpactGaussSeidel, WedgeTakesAtMostCeilPiOverTheta) {
  const double pi = std::acos(-1.0);
  struct Case {
    double theta;
    int most;
  };
  for (const Case c : {Case{pi / 2, 2}, Case{pi / 3, 3}, Case{0.5, 7}, Case{0.2, 16}, Case{0.1, 32}}) {
    ImpactSystem s;
    s.add_point_mass(2, 1.0);
    const double n1[] = {0, 1}, n2[] = {std::sin(c.theta), -std::cos(c.theta)};
    s.add_constraint(0, n1);
    s.add_constraint(0, n2);
    s.finish();
    int worst = 0;
    for (int k = 0; k < 2000; ++k) {
      const double phi = 2 * pi * (k + 0.5) / 2000;
      std::vector<double> v{std::cos(phi), std::sin(phi)};
      if (s.slope(0, v.data()) >= 0 && s.slope(1, v.data()) >= 0) continue;
      const auto v0 = v;
      const Resolution r = gauss_seidel(s, v, options());
      expect_resolved(s, v0, v, r, kEps);
      worst = std::max<int>(worst, static_cast<int>(r.reflections));
    }
    EXPECT_LE(worst, static_cast<int>(std::ceil(pi / c.theta))) << "theta " << c.theta;
    EXPECT_GE(worst, c.most - 1) << "theta " << c.theta;  // sampling may miss the extreme direction
  }
}

TEST(ImpactGaussSeidel, CornerAndVio) {
  ImpactSystem corner;
  corner.add_point_mass(2, 1.0);
  const double n1[] = {0, 1}, n2[] = {-1, 0};
  corner.add_constraint(0, n1);
  corner.add_constraint(0, n2);
  corner.finish();
  std::vector<double> v{2, -1};
  const auto v0 = v;
  Resolution r = gauss_seidel(corner, v, options());
  expect_resolved(corner, v0, v, r, kEps);
  EXPECT_EQ(r.reflections, 2);
  expect_velocities(v, {-2, 1});

  // Three-ball cradle (0, 1, 0): only the right contact is violated; the left one gets no impulse.
  const ImpactSystem s = chain({1, 1, 1});
  std::vector<double> u{0, 1, 0};
  const auto u0 = u;
  r = gauss_seidel(s, u, options());
  expect_resolved(s, u0, u, r, kEps);
  EXPECT_EQ(r.reflections, 1);
  EXPECT_EQ(r.impulses[0], 0.0);
  expect_velocities(u, {0, 0, 1});
}

TEST(ImpactGaussSeidel, VirialCertificateNeverDecreases) {
  // Lemma 5.1: for ball-only scenes w = q − z is strictly feasible, so Σ m (x − z)·v never decreases. Checked one
  // reflection at a time (cap = k reflections) on a random 2D rack with unequal masses.
  std::vector<double> centres, masses;
  const double r = 1.0;
  for (int row = 0; row < 5; ++row)
    for (int k = 0; k <= row; ++k) {
      centres.push_back(row * std::sqrt(3.0) * r);
      centres.push_back((k - row / 2.0) * 2 * r);
      masses.push_back(1.0 + (row * 7 + k * 3) % 5);
    }
  const ImpactSystem s = balls2d(centres, masses, r);
  std::mt19937_64 rng(3);
  std::normal_distribution<double> normal;
  std::vector<double> v0(s.dofs());
  for (double& x : v0) x = normal(rng);
  for (const double z : {0.0, 3.0, -5.0}) {
    double previous = -1e300;
    for (int k = 0;; ++k) {
      auto v = v0;
      GaussSeidelOptions o = options(GaussSeidelOrder::random, 5);
      o.resolve.max_reflections = k;
      const Resolution res = gauss_seidel(s, v, o);
      double virial = 0;
      for (int b = 0; b < s.bodies(); ++b)
        virial += masses[b] * ((centres[2 * b] - z) * v[2 * b] + (centres[2 * b + 1] - z) * v[2 * b + 1]);
      EXPECT_GE(virial, previous - 1e-12 * std::abs(previous)) << "reflection " << k;
      previous = virial;
      if (res.terminated) break;
      ASSERT_LT(k, 10000);
    }
  }
}

TEST(ImpactGaussSeidel, RestitutionInsideTheReflectionCollapses) {
  // Notes Fig. 8: c_r = 0 inside R approaches (1/5, ..., 1/5) without end; the diagnostic cap stops it and says so.
  const ImpactSystem s = chain({1, 1, 1, 1, 1});
  std::vector<double> v{1, 0, 0, 0, 0};
  GaussSeidelOptions o = options();
  o.restitution = 0.0;
  o.resolve.tolerance = 1e-9;
  o.resolve.max_reflections = 1000;
  const Resolution r = gauss_seidel(s, v, o);
  EXPECT_FALSE(r.terminated);
  EXPECT_NE(r.reason.find("diagnostic cap"), std::string::npos);
  EXPECT_EQ(r.reflections, 1000);
  for (double x : v) EXPECT_NEAR(x, 0.2, 0.05);
  // With the notes' absolute tolerance of 1e-3 it stops after 110 steps; our tolerance is relative to ‖v‖_M
  // (= 1 at the start, ≈ 0.45 at the end), so it stops in the same range.
  std::vector<double> u{1, 0, 0, 0, 0};
  o.resolve.tolerance = 1e-3;
  o.resolve.max_reflections = 100000;
  const Resolution q = gauss_seidel(s, u, o);
  EXPECT_TRUE(q.terminated);
  EXPECT_GT(q.reflections, 50);
  EXPECT_LT(q.reflections, 400);
}

TEST(ImpactGaussSeidel, InexactOnRandomPackingsWithMassRatios) {
  // Notes 003 §5 case 18 for balls (boxes: test_impact_bodies): random 2D packs, masses 1 to 1e3, eps from 1e-12.
  std::mt19937_64 rng(17);
  for (int trial = 0; trial < 12; ++trial) {
    const Packing pack = random_hex_patch(8, rng);
    const ImpactSystem& s = pack.system;
    std::vector<double> v = pack.v0;
    const auto v0 = v;
    const double eps = trial % 3 == 0 ? 1e-12 : trial % 3 == 1 ? 1e-10 : 1e-8;
    GaussSeidelOptions o = options(static_cast<GaussSeidelOrder>(trial % 3), trial);
    o.resolve.tolerance = eps;
    const Resolution r = gauss_seidel(s, v, o);
    expect_resolved(s, v0, v, r, eps);
    const auto p0 = momentum(s, v0, 2), p1 = momentum(s, v, 2);
    for (int i = 0; i < 2; ++i) EXPECT_NEAR(p1[i], p0[i], 1e-12 * std::sqrt(s.energy_norm_squared(v0.data())) * 1e3);
  }
}

}  // namespace test_impact_gauss_seidel
