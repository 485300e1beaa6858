// Implicit equality detection and the anti-locking projection against notes 003 §5 cases 6, 7, 8 and 19: the
// detector's sets and ranks, the wedged ball and the two-ball plug (plain Gauss–Seidel cycles, Algorithm F
// resolves), the mini-geyser's exact result, and Algorithm F as the identity when nothing is jammed.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "../support/impact_cases.hpp"
#include "percussion/physics/impact/anti_locking.hpp"
#include "percussion/physics/impact/gauss_seidel.hpp"
#include "percussion/physics/impact/lineality.hpp"
#include "percussion/physics/impact/lineality_distance.hpp"

namespace test_impact_lineality {

using namespace percussion::impact;
using namespace percussion::impact::testing;

namespace {

constexpr double kEps = 1e-12;

GaussSeidelOptions lex() {
  GaussSeidelOptions o;
  o.resolve.tolerance = kEps;
  return o;
}

ImpactOperator gs(const GaussSeidelOptions& o) {
  return [o](const ImpactSystem& s, std::vector<double>& v) { return gauss_seidel(s, v, o); };
}

// Notes Fig. 2: one ball between walls x = ±1, or two balls at x = ±1 between walls x = ±2, optionally with the
// projectile C at (0, −√3) touching both (the mini-geyser).
ImpactSystem wedged_ball() { return balls2d({0, 0}, {1}, 1.0, {{-1, 0, 1, 0}, {1, 0, -1, 0}}); }
ImpactSystem plug(bool geyser) {
  std::vector<double> centres{-1, 0, 1, 0}, masses{1, 1};
  if (geyser) centres.insert(centres.end(), {0, -std::sqrt(3.0)}), masses.push_back(1);
  return balls2d(centres, masses, 1.0, {{-2, 0, 1, 0}, {2, 0, -1, 0}});
}

// Notes E11: one ball, normals (1,1), (−1,1), (0,1): dependent, not opposing.
ImpactSystem dependent_normals() {
  ImpactSystem s;
  s.add_point_mass(2, 1.0);
  for (const auto& n : {std::vector<double>{1, 1}, {-1, 1}, {0, 1}}) s.add_constraint(0, n);
  s.finish();
  return s;
}

double kinetic(const ImpactSystem& s, const std::vector<double>& v) { return 0.5 * s.energy_norm_squared(v.data()); }

void expect_velocities(const std::vector<double>& v, const std::vector<double>& want, double tol = 1e-14) {
  ASSERT_EQ(v.size(), want.size());
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], want[i], tol) << "component " << i;
}

// The reported multipliers are non-negative and explain the whole change: v = v0 + M⁻¹Nλ.
void expect_impulses_explain(const ImpactSystem& s, const std::vector<double>& v0, const std::vector<double>& v,
                             const std::vector<double>& lambda) {
  ASSERT_EQ(lambda.size(), static_cast<std::size_t>(s.constraints()));
  std::vector<double> w = v0;
  for (int c = 0; c < s.constraints(); ++c) {
    EXPECT_GE(lambda[c], 0.0) << "constraint " << c;
    s.apply(c, lambda[c], w.data());
  }
  expect_velocities(w, v, 1e-13);
}

}  // namespace

TEST(ImpactLineality, DetectorCases) {
  // E11: dependent but not opposing normals.
  const ImpactSystem e11 = dependent_normals();
  ImplicitEqualities f = find_implicit_equalities(e11);
  EXPECT_TRUE(f.solved_lp);
  EXPECT_TRUE(f.constraints.empty());
  // The program's dual certifies it: every slope along the certificate is at least 1.
  for (int c = 0; c < 3; ++c) EXPECT_GE(e11.slope(c, f.certificate.data()), 1.0 - 1e-12);

  // Wedged ball: both walls, E = span{x}.
  const ImpactSystem wedge = wedged_ball();
  f = find_implicit_equalities(wedge);
  EXPECT_EQ(f.constraints, (std::vector<int>{0, 1}));
  EXPECT_EQ(lineality_basis(wedge, f).dimension(), 1);

  // Two-ball plug (case 7): all three, rank 2, one cluster of both balls.
  const ImpactSystem two = plug(false);
  ASSERT_EQ(two.constraints(), 3);
  f = find_implicit_equalities(two);
  EXPECT_EQ(f.constraints, (std::vector<int>{0, 1, 2}));
  for (int c = 0; c < 3; ++c) EXPECT_GE(f.combination[c], 1.0);
  const LinealityBasis e = lineality_basis(two, f);
  ASSERT_EQ(e.clusters.size(), 1u);
  EXPECT_EQ(e.dimension(), 2);
  EXPECT_EQ(e.clusters[0].bodies, (std::vector<int>{0, 1}));
  // M⁻¹-orthonormal, and every n_i of I lies in the span.
  const LinealityCluster& cl = e.clusters[0];
  for (int k = 0; k < 2; ++k)
    for (int l = 0; l < 2; ++l) {
      double dot = 0;
      for (int i = 0; i < cl.dofs; ++i) dot += cl.basis[k * cl.dofs + i] * cl.impulses[l * cl.dofs + i];
      EXPECT_NEAR(dot, k == l ? 1.0 : 0.0, 1e-15);
    }

  // Ball scenes without walls: none; with the centres as witness the program is skipped.
  std::vector<double> centres, masses;
  for (int row = 0; row < 4; ++row)
    for (int k = 0; k <= row; ++k) {
      centres.push_back(row * std::sqrt(3.0));
      centres.push_back((k - row / 2.0) * 2);
      masses.push_back(1.0 + k);
    }
  const ImpactSystem rack = balls2d(centres, masses, 1.0);
  ASSERT_GT(rack.constraints(), 10);
  f = find_implicit_equalities(rack);
  EXPECT_TRUE(f.solved_lp);
  EXPECT_TRUE(f.constraints.empty());
  LinealityOptions with_centres;
  with_centres.witness = centres;
  f = find_implicit_equalities(rack, with_centres);
  EXPECT_FALSE(f.solved_lp);
  EXPECT_TRUE(f.constraints.empty());
  // The rational simplex agrees on every case above.
  LinealityOptions exact;
  exact.exact = true;
  for (const ImpactSystem* sys : {&e11, &wedge, &two, &rack}) {
    const ImplicitEqualities q = find_implicit_equalities(*sys, exact);
    EXPECT_TRUE(q.exact);
    EXPECT_EQ(q.constraints, find_implicit_equalities(*sys).constraints);
  }
  EXPECT_FALSE(find_implicit_equalities(two).exact);
  // A witness that fails (a wall the centres do not clear) falls back to the program, which finds the jam.
  const std::vector<double> still{0, 0};
  with_centres.witness = still;
  f = find_implicit_equalities(wedge, with_centres);
  EXPECT_TRUE(f.solved_lp);
  EXPECT_EQ(f.constraints.size(), 2u);
}

TEST(ImpactLineality, ChainBetweenWallsLosesEveryVelocity) {
  // 1D: walls at both ends of a three-ball chain with masses 1, 2, 3: every constraint is an implicit equality,
  // E spans all three degrees of freedom, and Algorithm F stops everything (and says how much energy that was).
  ImpactSystem s;
  for (double m : {1.0, 2.0, 3.0}) s.add_point_mass(1, m);
  const double plus[] = {1.0}, minus[] = {-1.0};
  s.add_constraint(0, plus);
  s.add_constraint(0, minus, 1, plus);
  s.add_constraint(1, minus, 2, plus);
  s.add_constraint(2, minus);
  s.finish();
  const ImplicitEqualities f = find_implicit_equalities(s);
  EXPECT_EQ(f.constraints, (std::vector<int>{0, 1, 2, 3}));
  std::vector<double> v{1.0, -0.5, 2.0};
  const auto v0 = v;
  AntiLockingReport report;
  const Resolution r = resolve_anti_locked(s, v, gs(lex()), {}, &report);
  EXPECT_TRUE(r.terminated);
  EXPECT_EQ(report.dimension, 3);
  expect_velocities(v, {0, 0, 0});
  EXPECT_NEAR(report.energy_removed, kinetic(s, v0), 1e-14);
  expect_impulses_explain(s, v0, v, r.impulses);
}

TEST(ImpactLineality, WedgedBallCyclesUntilProjected) {
  // Case 6: plain Gauss–Seidel flips v_x = ±0.3 until the cap; Algorithm F projects to (0, 1) and is done.
  const ImpactSystem s = wedged_ball();
  std::vector<double> v{0.3, 1.0};
  GaussSeidelOptions capped = lex();
  capped.resolve.max_reflections = 50;
  const Resolution plain = gauss_seidel(s, v, capped);
  EXPECT_FALSE(plain.terminated);
  EXPECT_EQ(plain.reflections, 50);
  EXPECT_NEAR(std::abs(v[0]), 0.3, 1e-15);

  v = {0.3, 1.0};
  const auto v0 = v;
  AntiLockingReport report;
  const Resolution r = resolve_anti_locked(s, v, gs(capped), {}, &report);
  EXPECT_TRUE(r.terminated);
  EXPECT_EQ(r.iterations, 0);
  EXPECT_EQ(r.reflections, 0);
  expect_velocities(v, {0.0, 1.0});
  EXPECT_EQ(report.implicit, (std::vector<int>{0, 1}));
  EXPECT_NEAR(kinetic(s, v0), 0.545, 1e-15);
  EXPECT_NEAR(kinetic(s, v), 0.5, 1e-15);
  EXPECT_NEAR(report.energy_removed, 0.045, 1e-15);
  expect_impulses_explain(s, v0, v, r.impulses);
}

TEST(ImpactLineality, TwoBallPlugKeepsOnlyTheFreeDirections) {
  // Case 7: v0 = (0.5, 0.2, −0.1, 0.3) → (0, 0.2, 0, 0.3): nothing is left to resolve.
  const ImpactSystem s = plug(false);
  std::vector<double> v{0.5, 0.2, -0.1, 0.3};
  const auto v0 = v;
  AntiLockingReport report;
  const Resolution r = resolve_anti_locked(s, v, gs(lex()), {}, &report);
  EXPECT_TRUE(r.terminated);
  EXPECT_EQ(r.reflections, 0);
  EXPECT_EQ(report.dimension, 2);
  expect_velocities(v, {0, 0.2, 0, 0.3});
  EXPECT_NEAR(report.energy_removed, 0.5 * (0.25 + 0.01), 1e-15);
  expect_impulses_explain(s, v0, v, r.impulses);
  const AntiLocking lock(s, find_implicit_equalities(s));
  EXPECT_EQ(lock.system().constraints(), 0);
  EXPECT_EQ(lock.system().bodies(), 1);  // the two balls merged into one jammed cluster
}

TEST(ImpactLineality, MiniGeyserResolvesAfterTheProjection) {
  // Case 8: the plug with projectile C at (0, −√3) moving up. Plain GS never ends; after Algorithm F the reduced
  // constraints are A–C and B–C, and lexicographic GS gives the notes' exact result in two reflections.
  const ImpactSystem s = plug(true);
  ASSERT_EQ(s.constraints(), 5);  // A–B, A–C, A–wall, B–C, B–wall
  std::vector<double> v{0, 0, 0, 0, 0, 1};
  GaussSeidelOptions capped = lex();
  capped.resolve.max_reflections = 2000;
  const Resolution plain = gauss_seidel(s, v, capped);
  EXPECT_FALSE(plain.terminated);

  v = {0, 0, 0, 0, 0, 1};
  const auto v0 = v;
  AntiLockingReport report;
  const Resolution r = resolve_anti_locked(s, v, gs(capped), {}, &report);
  EXPECT_TRUE(r.terminated) << r.reason;
  EXPECT_EQ(report.implicit, (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(report.dimension, 2);
  EXPECT_EQ(r.reflections, 2);
  const double r3 = std::sqrt(3.0);
  expect_velocities(v, {0, 6.0 / 7, 0, 18.0 / 49, 8 * r3 / 49, -11.0 / 49});
  EXPECT_NEAR(report.energy_removed, 0.0, 1e-30);
  EXPECT_NEAR(kinetic(s, v), 0.5, 1e-14);
  expect_impulses_explain(s, v0, v, r.impulses);
  for (int c = 0; c < s.constraints(); ++c) EXPECT_GE(s.slope(c, v.data()), -kEps);
  const AntiLocking lock(s, find_implicit_equalities(s));
  EXPECT_EQ(std::vector<int>(lock.original_constraint().begin(), lock.original_constraint().end()),
            (std::vector<int>{1, 3}));
}

TEST(ImpactLineality, IdentityWithoutImplicitEqualities) {
  // Theorem T10: with I empty Algorithm F is Algorithm A, bit for bit (same system, same velocities, same
  // impulses), on a random rack with unequal masses.
  std::vector<double> centres, masses;
  for (int row = 0; row < 5; ++row)
    for (int k = 0; k <= row; ++k) {
      centres.push_back(row * std::sqrt(3.0));
      centres.push_back((k - row / 2.0) * 2);
      masses.push_back(1.0 + (row * 7 + k * 3) % 5);
    }
  const ImpactSystem s = balls2d(centres, masses, 1.0, {{-1, 0, 1, 0}});
  std::mt19937_64 rng(9);
  std::normal_distribution<double> normal;
  std::vector<double> v(s.dofs());
  for (double& x : v) x = normal(rng);
  auto plain_v = v;
  const Resolution plain = gauss_seidel(s, plain_v, lex());
  AntiLockingReport report;
  const Resolution r = resolve_anti_locked(s, v, gs(lex()), {}, &report);
  EXPECT_TRUE(report.solved_lp);
  EXPECT_TRUE(report.implicit.empty());
  EXPECT_EQ(report.energy_removed, 0.0);
  EXPECT_EQ(v, plain_v);
  EXPECT_EQ(r.impulses, plain.impulses);
  EXPECT_EQ(r.reflections, plain.reflections);
  const AntiLocking lock(s, find_implicit_equalities(s));
  EXPECT_TRUE(lock.identity());
  EXPECT_EQ(&lock.system(), &s);
  std::vector<double> projected;
  EXPECT_EQ(lock.project(v, projected), 0.0);
  EXPECT_EQ(projected, v);
}

namespace {

// The mini-geyser with the plug tilted by φ: B sits at A + 2(cos φ, sin φ) and the right wall is tangent to B with
// normal −(cos φ, sin φ); C touches both from below. φ = 0 is case 8.
ImpactSystem tilted_geyser(double phi) {
  const double c = std::cos(phi), s = std::sin(phi), r3 = std::sqrt(3.0);
  const std::vector<double> centres{-1, 0, -1 + 2 * c, 2 * s, -1 + c + r3 * s, s - r3 * c};
  return balls2d(centres, {1, 1, 1}, 1.0, {{-2, 0, 1, 0}, {-1 + 3 * c, 3 * s, -c, -s}});
}

}  // namespace

TEST(ImpactLineality, DistanceToTheHullOfTheNormals) {
  // E11: the hull of (1,1)/√2, (−1,1)/√2, (0,1) is closest to the origin at (0, 1/√2).
  const ImpactSystem e11 = dependent_normals();
  LinealityDistance d = lineality_distance(e11);
  EXPECT_TRUE(d.converged) << d.reason;
  EXPECT_NEAR(d.delta, std::sqrt(0.5), 1e-12);
  EXPECT_NEAR(d.lower_bound, std::sqrt(0.5), 1e-12);
  EXPECT_NEAR(d.weights[0], 0.5, 1e-10);
  EXPECT_NEAR(d.weights[2], 0.0, 1e-10);
  // Jammed: δ = 0.
  d = lineality_distance(wedged_ball());
  EXPECT_LT(d.delta, 1e-7);
  EXPECT_EQ(d.lower_bound, 0.0);
}

TEST(ImpactLineality, TiltedGeyserIsNearlyJammed) {
  // Case 19 / T28: tilting the plug removes the implicit equalities, δ grows linearly with the tilt, and plain
  // Gauss–Seidel terminates, after more reflections the smaller δ is.
  ASSERT_EQ(tilted_geyser(0.0).constraints(), 5);
  EXPECT_EQ(find_implicit_equalities(tilted_geyser(0.0)).constraints, (std::vector<int>{0, 2, 4}));
  std::vector<double> ratio;
  std::int64_t previous = 0;
  for (const double phi : {0.08, 0.04, 0.02, 0.01}) {
    const ImpactSystem s = tilted_geyser(phi);
    ASSERT_EQ(s.constraints(), 5) << phi;
    const ImplicitEqualities f = find_implicit_equalities(s);
    EXPECT_TRUE(f.solved_lp);
    EXPECT_TRUE(f.constraints.empty()) << phi;
    const LinealityDistance d = lineality_distance(s);
    EXPECT_TRUE(d.converged) << d.reason;
    EXPECT_GT(d.lower_bound, 0.0) << phi;
    EXPECT_LE(d.delta - d.lower_bound, 1e-6 * d.delta) << phi;
    ratio.push_back(d.delta / phi);
    std::vector<double> v{0, 0, 0, 0, 0, 1};
    const auto v0 = v;
    const Resolution r = gauss_seidel(s, v, lex());
    expect_resolved(s, v0, v, r, kEps);
    EXPECT_GT(r.reflections, previous) << phi;
    previous = r.reflections;
  }
  for (double q : ratio) EXPECT_NEAR(q / ratio.front(), 1.0, 0.05) << "δ/φ " << q;
}

TEST(ImpactLineality, ApproximateLinealityRemovesANearlyJammedPlug) {
  // Tilted by 1e-12 (δ ≈ 2e-13) the plug is jammed to the program's tolerance of 1e-9. Tilted by 1e-7 (δ ≈ 2e-8)
  // it is not, but plain GS would need ~10⁸ reflections; with eps = 1e-6 Algorithm I removes the plug's three
  // constraints and GS resolves in two reflections to case 8's result, eps-feasible for every original constraint.
  EXPECT_EQ(find_implicit_equalities(tilted_geyser(1e-12)).constraints, (std::vector<int>{0, 2, 4}));
  const ImpactSystem s = tilted_geyser(1e-7);
  EXPECT_TRUE(find_implicit_equalities(s).constraints.empty());
  GaussSeidelOptions capped = lex();
  capped.resolve.tolerance = 1e-6;
  capped.resolve.max_reflections = 10000;
  std::vector<double> v{0, 0, 0, 0, 0, 1};
  EXPECT_FALSE(gauss_seidel(s, v, capped).terminated);

  v = {0, 0, 0, 0, 0, 1};
  const auto v0 = v;
  ApproximateLinealityOptions approximate;
  approximate.eps = 1e-6;
  AntiLockingReport report;
  const Resolution r = resolve_anti_locked(s, v, gs(capped), {}, &report, &approximate);
  EXPECT_TRUE(r.terminated) << r.reason;
  EXPECT_EQ(report.implicit, (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(report.approximate, (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(report.dimension, 2);
  EXPECT_EQ(r.reflections, 2);
  // What is left, A–C and B–C restricted, is far from jammed.
  EXPECT_GT(report.delta_lower, 0.1) << report.delta;
  EXPECT_LE(report.delta_lower, report.delta);
  const double r3 = std::sqrt(3.0);
  expect_velocities(v, {0, 6.0 / 7, 0, 18.0 / 49, 8 * r3 / 49, -11.0 / 49}, 1e-6);
  expect_resolved(s, v0, v, r, 1e-6);

  // The exact case asks for no δ at all: the program's dual bounds the reduced cone's δ away from eps.
  ApproximateLinealityReport exact;
  const ImplicitEqualities f = find_approximate_implicit_equalities(tilted_geyser(0.0), approximate, {}, &exact);
  EXPECT_EQ(f.constraints, (std::vector<int>{0, 2, 4}));
  EXPECT_TRUE(exact.approximate.empty());
  EXPECT_EQ(exact.rounds, 0);
  // A clearly tilted plug is left alone, with a certified δ above eps.
  ApproximateLinealityReport tilted;
  EXPECT_TRUE(find_approximate_implicit_equalities(tilted_geyser(0.01), approximate, {}, &tilted).constraints.empty());
  EXPECT_GT(tilted.delta_lower, 1e-3);
}

TEST(ImpactLineality, RigidBodyWithAFullInertiaBlock) {
  // Algorithm F with a 6×6 mass block (mass 2, a full inertia tensor): a 3D body pinned between walls x = ±1 at
  // contact points on one line along x (r = (∓1, 0.3, 0.2)), resting on a floor at r = (0.2, −0.4, −0.5). The two
  // wall gradients (ν, r×ν) are opposite: I = both walls, dim E = 1; the floor is restricted and renormalised.
  ImpactSystem s;
  const double block[36] = {2, 0, 0, 0,    0,    0,    0, 2, 0, 0,    0,    0,    0, 0, 2, 0,   0,    0,
                            0, 0, 0, 1.0,  0.1,  0.05, 0, 0, 0, 0.1,  0.8,  0.02, 0, 0, 0, 0.05, 0.02, 0.6};
  s.add_body(6, block);
  const auto gradient = [](const double nu[3], const double r[3]) {
    return std::vector<double>{nu[0], nu[1], nu[2], r[1] * nu[2] - r[2] * nu[1], r[2] * nu[0] - r[0] * nu[2],
                               r[0] * nu[1] - r[1] * nu[0]};
  };
  const double left[3] = {1, 0, 0}, right[3] = {-1, 0, 0}, up[3] = {0, 0, 1};
  const double r_left[3] = {-1, 0.3, 0.2}, r_right[3] = {1, 0.3, 0.2}, r_floor[3] = {0.2, -0.4, -0.5};
  s.add_constraint(0, gradient(left, r_left));
  s.add_constraint(0, gradient(right, r_right));
  s.add_constraint(0, gradient(up, r_floor));
  s.finish();
  const ImplicitEqualities f = find_implicit_equalities(s);
  EXPECT_EQ(f.constraints, (std::vector<int>{0, 1}));
  const AntiLocking lock(s, f);
  EXPECT_EQ(lock.dimension(), 1);
  ASSERT_EQ(lock.system().constraints(), 1);

  // The covector formulas: the restricted floor gradient n' has n'ᵀM⁻¹n_wall = 0 and, on {n_wallᵀv = 0}, the
  // same slope as the original up to its renormalisation.
  const std::vector<double> wall = s.gradient(0), floor = s.gradient(2);
  const std::vector<double> restricted = lock.system().gradient(0), direction = lock.system().impulse_direction(0);
  double coupled = 0;
  for (int i = 0; i < 6; ++i) coupled += direction[i] * wall[i];
  EXPECT_NEAR(coupled, 0.0, 1e-15);
  std::vector<double> v{0.3, -0.2, -1.0, 0.5, -0.4, 0.7}, tangent;
  const auto v0 = v;
  const double removed = lock.project(v, tangent);
  double along = 0, wall_slope = 0;
  for (int i = 0; i < 6; ++i) along += tangent[i] * wall[i], wall_slope += v0[i] * wall[i];
  EXPECT_NEAR(along, 0.0, 1e-15);
  // n_wall is M⁻¹-normalised, so the projection removes ½ (n_wallᵀv)².
  EXPECT_NEAR(removed, 0.5 * wall_slope * wall_slope, 1e-15);
  EXPECT_NEAR(0.5 * s.energy_norm_squared(v0.data()) - 0.5 * s.energy_norm_squared(tangent.data()), removed, 1e-14);
  double original_slope = 0, restricted_slope = 0;
  for (int i = 0; i < 6; ++i) original_slope += floor[i] * tangent[i], restricted_slope += restricted[i] * tangent[i];
  EXPECT_NEAR(restricted_slope * std::sqrt(lock.system().raw_metric(0)), original_slope, 1e-14);

  AntiLockingReport report;
  const Resolution r = resolve_anti_locked(s, v, gs(lex()), {}, &report);
  EXPECT_TRUE(r.terminated);
  EXPECT_EQ(r.reflections, 1);  // the floor, violated after the projection too
  EXPECT_NEAR(report.energy_removed, removed, 1e-15);
  EXPECT_NEAR(s.energy_norm_squared(v.data()), s.energy_norm_squared(tangent.data()), 1e-14);
  for (int c = 0; c < 3; ++c) EXPECT_GE(s.slope(c, v.data()), -1e-14) << c;
  EXPECT_NEAR(s.slope(0, v.data()), 0.0, 1e-14);
  expect_impulses_explain(s, v0, v, r.impulses);
}

}  // namespace test_impact_lineality
