// Asynchronous variational contact on its own (notes 000 §6): with one step for every clock it is the synchronous
// kick–drift integrator bit for bit (T1); a colliding cloud keeps momentum and angular momentum to round-off (T2);
// the spring on a plane keeps its energy without drift while a layer's clock restarted at activation gains energy
// (T3, T4); head-on impacts never cross and reach the depth §2.10 predicts (T5); restitution returns √e of the
// speed (T7); Coulomb friction stops a sliding vertex where μ and g say (T8).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <vector>

#include "percussion/methods/avi/asynchronous_integrator.hpp"

namespace test_avi_integrator {

using percussion::avi::AsynchronousIntegrator;
using percussion::avi::ContactSettings;
using percussion::avi::Vec3;

TEST(AviIntegrator, OneStepForEveryClockIsTheSynchronousIntegrator) {
  const double h = 0.01;
  const int steps = 10000;
  const std::vector<Vec3> x0{{0, 0, 0}, {1.1, 0.2, 0}, {2.0, -0.1, 0.3}};
  const std::vector<Vec3> v0{{0.1, 0, 0.2}, {0, -0.3, 0}, {-0.2, 0.1, 0}};
  const std::vector<double> m{1, 2, 3};
  struct S {
    int a, b;
    double k, rest;
  };
  const std::vector<S> springs{{0, 1, 50, 1.0}, {1, 2, 30, 1.2}, {0, 2, 10, 2.0}};
  const Vec3 g(0, 0, -1);

  AsynchronousIntegrator avi(ContactSettings{{0.1, 1}, 0.1});
  for (int i = 0; i < 3; ++i) avi.add_vertex(x0[i], v0[i], m[i]);
  for (const S& s : springs) avi.add_spring(s.a, s.b, s.k, s.rest, h);
  avi.set_gravity(g, h);
  avi.advance_to(steps * h);

  // Kick–drift with the same kicks in the same order (springs, then gravity) and the same drift intervals.
  std::vector<Vec3> x = x0, v = v0;
  for (int n = 1; n <= steps; ++n) {
    const double dt = n * h - (n - 1) * h;
    for (int i = 0; i < 3; ++i) x[i] += dt * v[i];
    for (const S& s : springs) {
      const Vec3 d = x[s.b] - x[s.a];
      const Vec3 f = s.k * (d.norm() - s.rest) / d.norm() * d;
      v[s.a] += h * (1.0 / m[s.a]) * f;
      v[s.b] -= h * (1.0 / m[s.b]) * f;
    }
    for (int i = 0; i < 3; ++i) v[i] += h * g;
  }
  for (int i = 0; i < 3; ++i) {
    EXPECT_LE((avi.position(i) - x[i]).norm(), 1e-12 * x[i].norm()) << i;
    EXPECT_LE((avi.velocity(i) - v[i]).norm(), 1e-12 * (1 + v[i].norm())) << i;
  }
  EXPECT_EQ(avi.counters().spring_events, 3 * steps);
  EXPECT_EQ(avi.counters().gravity_events, steps);
}

// A free cloud of spheres, every pair a candidate: no external force, so P and L stay as they were.
void cloud_keeps_momenta(double restitution, double friction) {
  ContactSettings s{{0.02, 50}, 0.05};
  s.restitution = restitution;
  s.friction = friction;
  AsynchronousIntegrator avi(s);
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<Vec3> centres;
  while (centres.size() < 30) {
    const Vec3 c(0.8 * u(random), 0.8 * u(random), 0.8 * u(random));
    bool free = true;
    for (const Vec3& o : centres) free = free && (c - o).norm() > 0.26;
    if (free) centres.push_back(c);
  }
  double scale = 0;
  for (const Vec3& c : centres) {
    const double mass = 1 + 0.5 * u(random);
    const Vec3 v = -1.5 * c + 0.3 * Vec3(u(random), u(random), u(random));  // inwards: many collisions
    avi.add_vertex(c, v, mass, 0.1);
    scale += mass * v.norm();
  }
  for (int a = 0; a < 30; ++a)
    for (int b = a + 1; b < 30; ++b) avi.add_pair(a, b);
  avi.start();
  const Vec3 p0 = avi.momentum(), l0 = avi.angular_momentum();
  const double e0 = avi.kinetic_energy() + avi.potential_energy();
  avi.advance_to(3.0);
  EXPECT_GT(avi.counters().layer_events, 1000);
  EXPECT_GT(avi.counters().deactivations, 10);
  EXPECT_GT(avi.counters().min_distance, 0.0);
  EXPECT_LE((avi.momentum() - p0).norm(), 1e-10 * scale);
  if (friction == 0) EXPECT_LE((avi.angular_momentum() - l0).norm(), 1e-10 * scale);
  const double e = avi.kinetic_energy() + avi.potential_energy();
  if (restitution == 1 && friction == 0) EXPECT_NEAR(e, e0, 0.05 * e0);
  else EXPECT_LT(e, 0.95 * e0);
}

// A cloud falling into a box corner, with restitution and friction: stopped half-way and continued from its saved
// state in a fresh integrator, it ends bit for bit where the uninterrupted run does.
void restored_state_continues(bool broad_phase) {
  const auto build = [broad_phase] {
    ContactSettings s{{0.02, 50}, 0.05};
    s.restitution = 0.6;
    s.friction = 0.2;
    auto avi = std::make_unique<AsynchronousIntegrator>(s);
    std::mt19937_64 random(3);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<int> planes{avi->add_plane({0, 0, 0}, {0, 0, 1}), avi->add_plane({0, 0, 0}, {1, 0, 0}),
                            avi->add_plane({0, 0, 0}, {0, 1, 0})};
    for (int i = 0; i < 12; ++i) {
      const int v = avi->add_vertex({0.15 + 0.3 * (i % 3), 0.15 + 0.3 * (i / 3 % 2), 0.2 + 0.3 * (i / 6)},
                                    {u(random) - 0.8, u(random) - 0.8, -u(random)}, 1 + u(random), 0.1);
      for (int plane : planes) avi->add_plane_pair(plane, v);
      if (!broad_phase)
        for (int w = 0; w < v; ++w) avi->add_pair(w, v);
    }
    avi->add_spring(0, 1, 20, 0.3, 0.004);
    avi->set_gravity({0, 0, -9.81}, 0.005);
    if (broad_phase) avi->find_sphere_pairs(0.05);
    avi->start();
    return avi;
  };
  auto whole = build();
  whole->advance_to(1.0);
  auto first = build();
  first->advance_to(0.4);
  auto second = build();
  second->restore(first->state());
  second->advance_to(1.0);
  EXPECT_GT(whole->counters().deactivations, 10);
  EXPECT_GT(whole->counters().deepest_layer, 1);
  for (std::size_t i = 0; i < whole->vertex_count(); ++i) {
    const int k = static_cast<int>(i);
    EXPECT_EQ(whole->position(k), second->position(k)) << i;
    EXPECT_EQ(whole->velocity(k), second->velocity(k)) << i;
  }
  EXPECT_EQ(whole->counters().layer_events, second->counters().layer_events);
  EXPECT_EQ(whole->counters().certificate_events, second->counters().certificate_events);
  if (broad_phase) EXPECT_GT(whole->counters().rebuilds, 3);
}

TEST(AviIntegrator, RestoredStateContinuesBitForBit) { restored_state_continues(false); }
TEST(AviIntegrator, RestoredStateWithTheBroadPhaseContinuesBitForBit) { restored_state_continues(true); }

// Pairs found by the broad phase give the trajectory every pair gives: a pair only kicks where its layers act, and
// every pair left out is beyond its first layer's reach until the next rebuild.
TEST(AviIntegrator, BroadPhaseGivesTheAllPairsTrajectory) {
  std::unique_ptr<AsynchronousIntegrator> runs[2];
  for (int broad = 0; broad < 2; ++broad) {
    runs[broad] = std::make_unique<AsynchronousIntegrator>(ContactSettings{{0.01, 200}, 0.05});
    AsynchronousIntegrator& avi = *runs[broad];
    std::mt19937_64 random(5);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<Vec3> centres;
    while (centres.size() < 120) {
      const Vec3 c(u(random), u(random), u(random));
      bool free = true;
      for (const Vec3& o : centres) free = free && (c - o).norm() > 0.13;
      if (free) centres.push_back(c);
    }
    // Equal masses put every pair on the same lattices: simultaneous kicks, ordered by the pairs' vertices.
    for (const Vec3& c : centres) avi.add_vertex(c, -0.8 * c + 0.2 * Vec3(u(random), u(random), u(random)), 1.0, 0.05);
    if (broad) avi.find_sphere_pairs(0.04);
    else
      for (int a = 0; a < 120; ++a)
        for (int b = a + 1; b < 120; ++b) avi.add_pair(a, b);
    avi.advance_to(1.5);
  }
  EXPECT_GT(runs[1]->counters().rebuilds, 5);
  EXPECT_LT(runs[1]->pair_count(), runs[0]->pair_count() / 20);
  EXPECT_GT(runs[0]->counters().layer_events, 1000);
  for (int i = 0; i < 120; ++i) {
    EXPECT_EQ(runs[0]->position(i), runs[1]->position(i)) << i;
    EXPECT_EQ(runs[0]->velocity(i), runs[1]->velocity(i)) << i;
  }
}

TEST(AviIntegrator, CollidingCloudKeepsMomentumAndAngularMomentum) { cloud_keeps_momenta(1.0, 0.0); }
TEST(AviIntegrator, CollidingCloudKeepsMomentaWithRestitution) { cloud_keeps_momenta(0.5, 0.0); }
TEST(AviIntegrator, CollidingCloudKeepsMomentumWithFriction) { cloud_keeps_momenta(1.0, 0.4); }

// The paper's spring on a plane (notes §5.1): endpoints of mass 1 at heights 1 and 2, spring k = 1 and rest length 1,
// gravity 1; pairs plane–bottom, plane–top, bottom–top; η = 0.1, k = 1000. E0 = Σ m g z = 3.
struct EnergyRecord {
  double min, max, drift;  // drift: the fitted line's change over the run, relative to E0
};

EnergyRecord spring_on_plane(bool aligned, double courant, double end) {
  ContactSettings s{{0.1, 1000}, courant};
  s.aligned_clocks = aligned;
  AsynchronousIntegrator avi(s);
  const int bottom = avi.add_vertex({0, 0, 1}, Vec3::Zero(), 1.0);
  const int top = avi.add_vertex({0, 0, 2}, Vec3::Zero(), 1.0);
  avi.add_spring(bottom, top, 1.0, 1.0, 0.01);
  avi.set_gravity({0, 0, -1}, 0.01);
  const int plane = avi.add_plane({0, 0, 0}, {0, 0, 1});
  avi.add_plane_pair(plane, bottom);
  avi.add_plane_pair(plane, top);
  avi.add_pair(top, bottom);
  const int samples = 400;
  std::vector<double> t, e;
  for (int k = 1; k <= samples; ++k) {
    avi.advance_to(end * k / samples);
    t.push_back(avi.time());
    e.push_back(avi.kinetic_energy() + avi.potential_energy());
  }
  EXPECT_GT(avi.counters().min_distance, 0.0);
  EXPECT_GT(avi.counters().layer_events, 1000);
  double st = 0, se = 0, stt = 0, ste = 0;
  for (int k = 0; k < samples; ++k) {
    st += t[k];
    se += e[k];
    stt += t[k] * t[k];
    ste += t[k] * e[k];
  }
  const double slope = (samples * ste - st * se) / (samples * stt - st * st);
  std::printf("spring on a plane, %s clocks, C %g, T %g: energy in [%.4f, %.4f], fitted drift %+.2f %% of E0, "
              "%lld layer "
              "events, deepest layer %lld\n", aligned ? "aligned" : "restarted", courant, end,
              *std::min_element(e.begin(), e.end()), *std::max_element(e.begin(), e.end()), 100 * slope * end / 3.0,
              static_cast<long long>(avi.counters().layer_events),
              static_cast<long long>(avi.counters().deepest_layer));
  return {*std::min_element(e.begin(), e.end()), *std::max_element(e.begin(), e.end()), slope * end / 3.0};
}

TEST(AviIntegrator, SpringOnAPlaneKeepsItsEnergyOnlyWithAlignedLayerClocks) {
  const EnergyRecord aligned = spring_on_plane(true, 0.1, 2000);
  EXPECT_GT(aligned.min, 0.95 * 3);
  EXPECT_LT(aligned.max, 1.05 * 3);
  const EnergyRecord restarted = spring_on_plane(false, 0.1, 2000);
  EXPECT_GT(restarted.drift, 0.10);
  EXPECT_GT(restarted.drift, 10 * std::abs(aligned.drift));
  // At C = 0.1 the fitted drift moves by a few per cent with round-off (+1 % to +3 %); with smaller layer steps the
  // band narrows and the drift stays within the notes' 2 % (checked at C = 0.02, as the notes' prototype).
  const EnergyRecord finer = spring_on_plane(true, 0.02, 2000);
  EXPECT_LT(std::abs(finer.drift), 0.02);
  EXPECT_LT(finer.max - finer.min, aligned.max - aligned.min);
}

// A vertex of mass 1 meets a fixed plane head-on at speed v (no gravity) and comes back.
struct Bounce {
  double speed_out, min_distance;
  std::int64_t deepest;
};

Bounce bounce(double k, double v, double restitution, double courant) {
  ContactSettings s{{0.1, k}, courant};
  s.restitution = restitution;
  AsynchronousIntegrator avi(s);
  const int vertex = avi.add_vertex({0, 0, 0.3}, {0, 0, -v}, 1.0);
  avi.add_plane_pair(avi.add_plane({0, 0, 0}, {0, 0, 1}), vertex);
  double t = 0;
  while (!(avi.position(vertex).z() > 0.25 && avi.velocity(vertex).z() > 0)) {
    t += 0.1 / v;
    avi.advance_to(t);
    if (t > 1000 / v) break;
  }
  return {avi.velocity(vertex).z() / v, avi.counters().min_distance, avi.counters().deepest_layer};
}

TEST(AviIntegrator, HeadOnImpactsNeverCrossAndReachThePredictedDepth) {
  // Fine-step reference (notes T5, η = 0.1, μ = 1): deepest layer and smallest gap.
  struct Row {
    double k, v;
    std::int64_t deepest;
    double gap;
  };
  for (const Row& r : {Row{1000, 1.265, 1, 0.1717}, Row{1, 1.265, 15, 0.0129}, Row{1, 10, 122, 0.00163}}) {
    const Bounce b = bounce(r.k, r.v, 1.0, 0.02);
    std::printf("k %g v %g: deepest layer %lld (reference %lld), smallest gap %.4g (%.4g), out/in %.5f\n", r.k, r.v,
                static_cast<long long>(b.deepest), static_cast<long long>(r.deepest), b.min_distance, r.gap,
                b.speed_out);
    EXPECT_NEAR(static_cast<double>(b.deepest), static_cast<double>(r.deepest), 0.1 * static_cast<double>(r.deepest))
        << r.k << " " << r.v;
    EXPECT_NEAR(b.min_distance, r.gap, 0.1 * r.gap) << r.k << " " << r.v;
    EXPECT_NEAR(b.speed_out, 1.0, 0.01);
  }
  for (double k : {1e-2, 1.0, 1e2, 1e4})
    for (double v : {1.0, 10.0}) {
      const Bounce b = bounce(k, v, 1.0, 0.05);
      EXPECT_GT(b.min_distance, 0.0) << k << " " << v;
      EXPECT_GT(b.speed_out, 0.5) << k << " " << v;
    }
}

TEST(AviIntegrator, RestitutionReturnsTheSquareRootOfItsCoefficient) {
  for (double k : {1000.0, 1.0})
    for (double e : {1.0, 0.9, 0.5, 0.2}) {
      const Bounce b = bounce(k, 1.0, e, 0.02);
      std::printf("k %g e %g: out/in %.5f, sqrt(e) %.5f, deepest layer %lld\n", k, e, b.speed_out, std::sqrt(e),
                  static_cast<long long>(b.deepest));
      EXPECT_NEAR(b.speed_out, std::sqrt(e), 0.01 * std::sqrt(e)) << k << " " << e;
    }
}

TEST(AviIntegrator, FrictionStopsASlidingVertexWhereMuAndGravitySay) {
  ContactSettings s{{0.1, 1000}, 0.05};
  s.friction = 0.3;
  AsynchronousIntegrator avi(s);
  // At rest on layer 1's equilibrium, 2k(2η − d) = m g, sliding at 1.
  const int vertex = avi.add_vertex({0, 0, 0.2 - 1.0 / 2000}, {1, 0, 0}, 1.0);
  avi.add_plane_pair(avi.add_plane({0, 0, 0}, {0, 0, 1}), vertex);
  avi.set_gravity({0, 0, -1}, 0.01);
  avi.advance_to(1.5 / 0.3);
  const double stop = 1.0 / (2 * 0.3 * 1.0);
  EXPECT_NEAR(avi.position(vertex).x(), stop, 0.05 * stop);
  EXPECT_LT(std::abs(avi.velocity(vertex).x()), 1e-6);
  EXPECT_GT(avi.counters().min_distance, 0.0);
}

}  // namespace test_avi_integrator
