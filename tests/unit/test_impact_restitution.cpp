// Energetic restitution (notes 003 Alg. J2, §5 cases 12 and 17), the one-way friction post-pass (Alg. J3) and the
// impact QP they share: its objective and gradient against finite differences, its KKT conditions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "../support/impact_cases.hpp"
#include "percussion/physics/impact/contact_qp.hpp"
#include "percussion/physics/impact/friction.hpp"
#include "percussion/physics/impact/gauss_seidel.hpp"
#include "percussion/physics/impact/generalized_reflections.hpp"
#include "percussion/physics/impact/restitution.hpp"

namespace test_impact_restitution {

using namespace percussion::impact;
using namespace percussion::impact::testing;

namespace {

constexpr double kEps = 1e-12;

ElasticResolver gr_resolver() {
  return [](const ImpactSystem& s, std::vector<double>& v) {
    ResolveOptions o;
    o.tolerance = kEps;
    return generalized_reflections(s, v, o);
  };
}

ElasticResolver gs_resolver() {
  return [](const ImpactSystem& s, std::vector<double>& v) {
    GaussSeidelOptions o;
    o.resolve.tolerance = kEps;
    return gauss_seidel(s, v, o);
  };
}

double energy(const ImpactSystem& s, const std::vector<double>& v) { return 0.5 * s.energy_norm_squared(v.data()); }

// A unit tangent basis orthogonal to the unit vector u (3D).
void tangents_of(const double u[3], double t1[3], double t2[3]) {
  const double e[3] = {std::abs(u[0]) < 0.6 ? 1.0 : 0.0, std::abs(u[0]) < 0.6 ? 0.0 : 1.0, 0.0};
  double c[3] = {u[1] * e[2] - u[2] * e[1], u[2] * e[0] - u[0] * e[2], u[0] * e[1] - u[1] * e[0]};
  const double n = std::sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
  for (int i = 0; i < 3; ++i) t1[i] = c[i] / n;
  t2[0] = u[1] * t1[2] - u[2] * t1[1];
  t2[1] = u[2] * t1[0] - u[0] * t1[2];
  t2[2] = u[0] * t1[1] - u[1] * t1[0];
}

// 3D balls of unit radius with contacts for every touching pair and a floor z = 0, the matching friction contacts.
struct Scene3 {
  ImpactSystem system;
  std::vector<FrictionContact> friction;
};
Scene3 balls3d(const std::vector<double>& x, const std::vector<double>& masses, const std::vector<double>& mu) {
  Scene3 sc;
  const int n = static_cast<int>(masses.size());
  for (double m : masses) sc.system.add_point_mass(3, m);
  const auto add = [&](int a, const double u[3], int b) {
    double t1[3], t2[3];
    tangents_of(u, t1, t2);
    FrictionContact f;
    f.mu = mu[sc.friction.size() % mu.size()];
    if (b < 0) {
      f.constraint = sc.system.add_constraint(a, std::vector<double>(u, u + 3));
      f.t1_a.assign(t1, t1 + 3);
      f.t2_a.assign(t2, t2 + 3);
    } else {
      const double m[3] = {-u[0], -u[1], -u[2]};
      f.constraint = sc.system.add_constraint(a, std::vector<double>(m, m + 3), b, std::vector<double>(u, u + 3));
      f.t1_a = {-t1[0], -t1[1], -t1[2]};
      f.t1_b.assign(t1, t1 + 3);
      f.t2_a = {-t2[0], -t2[1], -t2[2]};
      f.t2_b.assign(t2, t2 + 3);
    }
    sc.friction.push_back(f);
  };
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      double u[3], d = 0;
      for (int i = 0; i < 3; ++i) u[i] = x[3 * b + i] - x[3 * a + i], d += u[i] * u[i];
      d = std::sqrt(d);
      if (d > 2 + 1e-9) continue;
      for (double& c : u) c /= d;
      add(a, u, b);
    }
    if (x[3 * a + 2] <= 1 + 1e-9) {
      const double up[3] = {0, 0, 1};
      add(a, up, -1);
    }
  }
  sc.system.finish();
  return sc;
}

// Physical normal impulse of constraint c from a normalised multiplier.
double physical(const ImpactSystem& s, int c, double lambda) { return lambda / std::sqrt(s.raw_metric(c)); }

}  // namespace

TEST(ImpactRestitution, CradleInterpolatesBetweenInelasticAndElastic) {
  const ImpactSystem s = chain({1, 1, 1, 1, 1});
  struct Case {
    double c;
    std::vector<double> want;
    double energy;
  };
  const Case cases[] = {{0.0, {0.2, 0.2, 0.2, 0.2, 0.2}, 0.1},
                        {0.5, {0.1, 0.1, 0.1, 0.1, 0.6}, 0.2},
                        {1.0, {0, 0, 0, 0, 1}, 0.5}};
  for (const Case& k : cases) {
    for (const ElasticResolver& elastic : {gr_resolver(), gs_resolver()}) {
      std::vector<double> v{1, 0, 0, 0, 0};
      RestitutionOptions o;
      o.restitution = k.c;
      const RestitutionResult r = energetic_restitution(s, v, elastic, o);
      EXPECT_TRUE(r.terminated) << r.reason;
      for (int i = 0; i < 5; ++i) EXPECT_NEAR(v[i], k.want[i], 1e-13) << "c " << k.c << " ball " << i;
      EXPECT_NEAR(energy(s, v), k.energy, 1e-13) << "c " << k.c;
      EXPECT_NEAR(momentum(s, v, 1)[0], 1.0, 1e-13);
      for (int c = 0; c < 4; ++c) EXPECT_GE(s.slope(c, v.data()), -kEps);
      // The inelastic end is one QP (notes §5 case 12: the collapse that restitution inside R never finishes).
      EXPECT_EQ(r.inelastic.iterations, k.c < 1 ? 1 : 0);
      EXPECT_EQ(r.elastic.reflections + r.elastic.iterations > 0, k.c > 0);
      // Normal impulses: the inelastic chain passes 4/5, 3/5, 2/5, 1/5 (physical), the elastic one 1 at each contact.
      for (int c = 0; c < 4; ++c) {
        const double want = (1 - k.c) * (4 - c) / 5.0 + k.c * 1.0;
        EXPECT_NEAR(physical(s, c, r.impulses[c]), want, 1e-13) << "c " << k.c << " contact " << c;
      }
    }
  }
}

TEST(ImpactRestitution, FeasibleVelocityIsLeftAlone) {
  const ImpactSystem s = chain({1, 2, 1});
  std::vector<double> v{-1, 0, 1};
  RestitutionOptions o;
  o.restitution = 0.3;
  const RestitutionResult r = energetic_restitution(s, v, gr_resolver(), o);
  EXPECT_TRUE(r.terminated);
  EXPECT_EQ(v, (std::vector<double>{-1, 0, 1}));
  EXPECT_EQ(r.inelastic.iterations, 0);
}

TEST(ImpactFriction, BallHittingAWallObliquely2d) {
  // Unit ball, wall y = 0 below it, v = (1, −1): frictionless, v = (1, 1) with normal impulse 2.
  const ImpactSystem s = balls2d({0, 1}, {1}, 1.0, {{0, 0, 0, 1}});
  ASSERT_EQ(s.constraints(), 1);
  for (const double mu : {0.1, 0.3, 0.5, 10.0}) {
    std::vector<double> v{1, -1};
    const Resolution r = generalized_reflections(s, v, ResolveOptions{});
    ASSERT_TRUE(r.terminated);
    const double alpha = physical(s, 0, r.impulses[0]);
    ASSERT_NEAR(alpha, 2.0, 1e-14);
    const double e_before = energy(s, v);
    FrictionContact f;
    f.constraint = 0;
    f.mu = mu;
    f.t1_a = {1, 0};
    const FrictionResult fr = friction_post_pass(s, std::span(&f, 1), r.impulses, v);
    ASSERT_TRUE(fr.converged) << fr.reason;
    EXPECT_NEAR(v[1], 1.0, 1e-15);  // the normal velocity is not touched
    if (mu * alpha >= 1.0) {
      EXPECT_NEAR(v[0], 0.0, 1e-13) << "mu " << mu;  // sticks: the tangential velocity is removed
      EXPECT_NEAR(fr.tangential[0], -1.0, 1e-13);
    } else {
      EXPECT_NEAR(v[0], 1.0 - mu * alpha, 1e-13) << "mu " << mu;  // slides: exactly μ × the normal impulse
      EXPECT_NEAR(fr.tangential[0], -mu * alpha, 1e-13);
    }
    EXPECT_LE(energy(s, v), e_before);
  }
}

TEST(ImpactFriction, BallHittingAFloorObliquely3d) {
  // The slip (1, 0.5) lies along no basis vector: the polygon's vertex is turned onto it.
  for (const double mu : {0.1, 0.2, 5.0}) {
    Scene3 sc = balls3d({0, 0, 1}, {2}, {mu});
    const ImpactSystem& s = sc.system;
    ASSERT_EQ(s.constraints(), 1);
    std::vector<double> v{1, 0.5, -1};
    const Resolution r = generalized_reflections(s, v, ResolveOptions{});
    ASSERT_TRUE(r.terminated);
    const double alpha = physical(s, 0, r.impulses[0]);
    ASSERT_NEAR(alpha, 4.0, 1e-14);
    const double e_before = energy(s, v);
    const FrictionResult fr = friction_post_pass(s, sc.friction, r.impulses, v);
    ASSERT_TRUE(fr.converged) << fr.reason;
    EXPECT_NEAR(v[2], 1.0, 1e-15);
    const double slip = std::hypot(1.0, 0.5), stop = 2.0 * slip;  // impulse that stops the slip: m |v_t|
    const double beta = std::hypot(fr.tangential[0], fr.tangential[1]);
    EXPECT_LE(beta, mu * alpha * (1 + 1e-12));
    if (mu * alpha >= stop) {
      EXPECT_NEAR(v[0], 0.0, 1e-12) << "mu " << mu;
      EXPECT_NEAR(v[1], 0.0, 1e-12) << "mu " << mu;
    } else {
      const double keep = 1.0 - mu * alpha / stop;  // slides on, slowed by exactly μα/m along the slip
      EXPECT_NEAR(v[0], keep * 1.0, 1e-12) << "mu " << mu;
      EXPECT_NEAR(v[1], keep * 0.5, 1e-12) << "mu " << mu;
      EXPECT_NEAR(beta, mu * alpha, 1e-12);
    }
    EXPECT_LE(energy(s, v), e_before);
  }
}

TEST(ImpactFriction, SpinningUpARigidSphere) {
  // A solid sphere as a rigid body (m = 2, R = ½, I = ⅖mR²) sliding onto the floor, v = (1, 0, −1), ω = 0. The
  // tangent covectors (t, r×t) weigh 1/m + R²/I, the normal 1/m: the bounds convert between the two. Sticking
  // stops the contact point, v_x = 5/7 and Rω_y = 5/7; sliding takes exactly μα off the momentum.
  const double m = 2, R = 0.5, I = 0.4 * m * R * R;
  ImpactSystem s;
  const double block[36] = {m, 0, 0, 0, 0, 0, 0, m, 0, 0, 0, 0, 0, 0, m, 0, 0, 0,
                            0, 0, 0, I, 0, 0, 0, 0, 0, 0, I, 0, 0, 0, 0, 0, 0, I};
  s.add_body(6, block);
  const double normal[6] = {0, 0, 1, 0, 0, 0};  // (ν, r×ν) with r = (0, 0, −R): r×ν = 0
  s.add_constraint(0, normal);
  s.finish();
  FrictionContact f;
  f.constraint = 0;
  f.t1_a = {1, 0, 0, 0, -R, 0};  // (t, r×t)
  f.t2_a = {0, 1, 0, R, 0, 0};
  for (const double mu : {0.05, 1.0}) {
    f.mu = mu;
    std::vector<double> v{1, 0, -1, 0, 0, 0};
    const Resolution r = generalized_reflections(s, v, ResolveOptions{});
    ASSERT_TRUE(r.terminated);
    const double alpha = physical(s, 0, r.impulses[0]);
    ASSERT_NEAR(alpha, 2 * m, 1e-14);
    const double e_before = energy(s, v);
    const FrictionResult fr = friction_post_pass(s, std::span(&f, 1), r.impulses, v);
    ASSERT_TRUE(fr.converged) << fr.reason;
    const double stick = 2.0 / 7.0 * m;  // impulse that stops the contact point
    if (mu * alpha >= stick) {
      EXPECT_NEAR(v[0], 5.0 / 7.0, 1e-12);
      EXPECT_NEAR(R * v[4], 5.0 / 7.0, 1e-12);
      EXPECT_NEAR(v[0] - R * v[4], 0.0, 1e-12);  // the contact point's tangential velocity
      EXPECT_NEAR(fr.tangential[0], -stick, 1e-12);
    } else {
      EXPECT_NEAR(v[0], 1 - mu * alpha / m, 1e-12);
      EXPECT_NEAR(v[4], mu * alpha * R / I, 1e-12);
      EXPECT_NEAR(fr.tangential[0], -mu * alpha, 1e-12);
    }
    EXPECT_NEAR(v[1], 0.0, 1e-12);
    EXPECT_NEAR(v[3], 0.0, 1e-12);
    EXPECT_NEAR(v[2], 1.0, 1e-15);
    EXPECT_LT(energy(s, v), e_before);
  }
}

TEST(ImpactFriction, EnergyNeverIncreasesAndImpulsesStayInTheCone) {
  std::mt19937_64 rng(31);
  std::uniform_real_distribution<double> unit(0, 1);
  std::normal_distribution<double> normal;
  for (int trial = 0; trial < 6; ++trial) {
    // A 3 × 3 × 2 cubic stack on the floor, masses 1 to 1e3, random μ from 0 to 1.
    std::vector<double> x, masses, mu;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 2; ++k) {
          x.insert(x.end(), {2.0 * i, 2.0 * j, 1.0 + 2.0 * k});
          masses.push_back(std::pow(10.0, 3 * unit(rng)));
        }
    for (int c = 0; c < 7; ++c) mu.push_back(unit(rng));
    Scene3 sc = balls3d(x, masses, mu);
    const ImpactSystem& s = sc.system;
    std::vector<double> v(s.dofs());
    for (double& c : v) c = normal(rng);
    RestitutionOptions o;
    o.restitution = trial % 3 / 2.0;
    const RestitutionResult r = energetic_restitution(s, v, trial % 2 ? gs_resolver() : gr_resolver(), o);
    ASSERT_TRUE(r.terminated) << r.reason;
    const double e_before = energy(s, v);
    FrictionOptions fo;
    fo.generators = 3 + trial % 4;
    const FrictionResult fr = friction_post_pass(s, sc.friction, r.impulses, v, fo);
    ASSERT_TRUE(fr.converged) << fr.reason;
    EXPECT_LE(energy(s, v), e_before) << "trial " << trial;
    EXPECT_LT(energy(s, v), e_before * (1 - 1e-6)) << "friction dissipates something";
    for (std::size_t k = 0; k < sc.friction.size(); ++k) {
      const double alpha = physical(s, sc.friction[k].constraint, r.impulses[sc.friction[k].constraint]);
      const double beta = std::hypot(fr.tangential[2 * k], fr.tangential[2 * k + 1]);
      EXPECT_LE(beta, sc.friction[k].mu * alpha * (1 + 1e-12) + 1e-300) << "contact " << k;
    }
  }
}

TEST(ImpactQp, ObjectiveAndGradientMatchFiniteDifferences) {
  std::mt19937_64 rng(5);
  const Packing pack = random_hex_patch(4, rng);
  const ImpactSystem& s = pack.system;
  std::vector<int> subset;
  for (int c = s.constraints() - 1; c >= 0; c -= 2) subset.push_back(c);  // a subset, in a non-sorted order
  const ImpactQp qp(s, subset, pack.v0.data());
  const int n = qp.size();
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<double> x(n), g(n);
  for (double& xi : x) xi = unit(rng);
  // The objective is the change of kinetic energy ½‖v + M⁻¹N_S x‖²_M − ½‖v‖²_M.
  std::vector<double> w = pack.v0;
  for (int p = 0; p < n; ++p) s.apply(subset[p], x[p], w.data());
  EXPECT_NEAR(qp.objective(x.data()), energy(s, w) - energy(s, pack.v0), 1e-12 * energy(s, pack.v0));
  qp.gradient(x.data(), g.data());
  const double h = 1e-6;
  for (int p = 0; p < n; ++p) {
    auto up = x, down = x;
    up[p] += h;
    down[p] -= h;
    const double fd = (qp.objective(up.data()) - qp.objective(down.data())) / (2 * h);
    EXPECT_NEAR(g[p], fd, 1e-8 * std::max(1.0, std::abs(fd))) << "component " << p;
  }
  // The matrix: unit diagonal, symmetric bit for bit, zero where two constraints share no body.
  for (int p = 0; p < n; ++p) {
    for (int q = 0; q < n; ++q) {
      PetscScalar a = 0, b = 0;
      const PetscInt i = p, j = q;
      MatGetValues(qp.matrix(), 1, &i, 1, &j, &a);
      MatGetValues(qp.matrix(), 1, &j, 1, &i, &b);
      EXPECT_EQ(a, b);
      EXPECT_NEAR(a, s.coupling(subset[p], subset[q]), 1e-15);
      if (p == q) {
        EXPECT_NEAR(a, 1.0, 1e-15);
      }
    }
  }
}

TEST(ImpactQp, SolutionMeetsTheKktConditionsExactlyInSign) {
  std::mt19937_64 rng(9);
  for (int trial = 0; trial < 5; ++trial) {
    const Packing pack = random_hex_patch(6, rng);
    const ImpactSystem& s = pack.system;
    std::vector<int> all(s.constraints());
    for (int c = 0; c < s.constraints(); ++c) all[c] = c;
    const ImpactQp qp(s, all, pack.v0.data());
    const QpResult r = qp.solve_nonnegative();
    ASSERT_TRUE(r.converged) << r.reason;
    EXPECT_LE(r.residual, 1e-13);
    std::vector<double> g(qp.size());
    qp.gradient(r.x.data(), g.data());
    const double scale = std::sqrt(s.energy_norm_squared(pack.v0.data()));
    int active = 0;
    for (int p = 0; p < qp.size(); ++p) {
      EXPECT_GE(r.x[p], 0.0);  // exactly: no tiny negatives
      if (r.x[p] == 0.0) {
        ++active;
        EXPECT_GE(g[p], -1e-13 * scale);
      } else {
        EXPECT_NEAR(g[p], 0.0, 1e-13 * scale);
      }
    }
    EXPECT_GT(active, 0);
    EXPECT_LT(active, qp.size());
    // The projection is feasible and lost energy: v_in = v + M⁻¹Nα.
    std::vector<double> w = pack.v0;
    for (int c = 0; c < s.constraints(); ++c) s.apply(c, r.x[c], w.data());
    for (int c = 0; c < s.constraints(); ++c) EXPECT_GE(s.slope(c, w.data()), -1e-13 * scale);
    EXPECT_LT(energy(s, w), energy(s, pack.v0));
  }
}

}  // namespace test_impact_restitution
