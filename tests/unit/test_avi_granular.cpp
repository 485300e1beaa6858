// Asynchronous contact in a box of spheres under gravity (notes §5.2(c), T7, T9): energies after the same time are
// ordered by the restitution coefficient and fall over time for e < 1; a sphere settled on the floor keeps a bounded
// number of active layers and a steady rate of events.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "../support/avi_sphere_box.hpp"
#include "percussion/methods/avi/asynchronous_integrator.hpp"

namespace test_avi_granular {

using percussion::avi::AsynchronousIntegrator;
using percussion::avi::ContactSettings;
using percussion::avi::Vec3;

void box(AsynchronousIntegrator& avi, int spheres) {
  std::mt19937_64 random(17);
  std::uniform_real_distribution<double> u(-1, 1);
  const auto velocity = [&] { return Vec3(u(random), u(random), u(random)); };
  percussion::test::sphere_box(avi, spheres, 1.0, 0.05, 0.1, random, velocity);
  avi.find_sphere_pairs(0.03);
  avi.set_gravity({0, 0, -9.81}, 1e-3);
}

TEST(AviGranular, EnergiesAreOrderedByRestitution) {
  std::vector<double> final_energy;
  for (double e : {1.0, 0.7, 0.3, 0.0}) {
    ContactSettings s{{0.005, 500}, 0.05};
    s.restitution = e;
    AsynchronousIntegrator avi(s);
    box(avi, 60);
    avi.start();
    const double e0 = avi.kinetic_energy() + avi.potential_energy();
    double previous = e0;
    for (int k = 1; k <= 10; ++k) {
      avi.advance_to(0.1 * k);
      const double energy = avi.kinetic_energy() + avi.potential_energy();
      if (e < 1) EXPECT_LT(energy, previous + 0.02 * e0) << e << " " << k;  // falls, up to the O(h) oscillation
      else EXPECT_NEAR(energy, e0, 0.02 * e0);
      previous = energy;
    }
    EXPECT_GT(avi.counters().min_distance, 0.0);
    std::printf("box of 60 spheres, e = %.1f: energy %.4f J of %.4f J after 1 s, %lld layer events, "
                "deepest layer %lld\n",
                e, previous, e0, static_cast<long long>(avi.counters().layer_events),
                static_cast<long long>(avi.counters().deepest_layer));
    final_energy.push_back(previous);
  }
  for (std::size_t i = 1; i < final_energy.size(); ++i) EXPECT_LT(final_energy[i], final_energy[i - 1]) << i;
}

TEST(AviGranular, RestingContactHasBoundedLayersAndASteadyEventRate) {
  ContactSettings s{{0.01, 1000}, 0.05};
  s.restitution = 0.0;
  AsynchronousIntegrator avi(s);
  const int v = avi.add_vertex({0, 0, 0.05}, Vec3::Zero(), 1.0);
  avi.add_plane_pair(avi.add_plane({0, 0, 0}, {0, 0, 1}), v);
  avi.set_gravity({0, 0, -9.81}, 1e-3);
  avi.advance_to(5);
  const std::int64_t events_at_5 = avi.counters().layer_events;
  const std::int64_t deepest_at_5 = avi.counters().deepest_layer;
  avi.advance_to(10);
  const std::int64_t events_5_to_10 = avi.counters().layer_events - events_at_5;
  avi.advance_to(15);
  const std::int64_t events_10_to_15 = avi.counters().layer_events - events_at_5 - events_5_to_10;
  std::printf("resting sphere: %lld and %lld layer events in two 5 s spans, deepest layer %lld, height %.5f m\n",
              static_cast<long long>(events_5_to_10), static_cast<long long>(events_10_to_15),
              static_cast<long long>(deepest_at_5), avi.position(v).z());
  // Resting, the weight m g sits on layers whose force balances it: the same few layers, the same events per second.
  EXPECT_EQ(avi.counters().deepest_layer, deepest_at_5);
  EXPECT_LE(avi.active_layers(0), deepest_at_5);
  EXPECT_GT(events_5_to_10, 0);
  EXPECT_NEAR(static_cast<double>(events_10_to_15), static_cast<double>(events_5_to_10), 0.01 * events_5_to_10);
  EXPECT_NEAR(avi.position(v).z(), 0.0, 2 * 0.01);
  EXPECT_GT(avi.position(v).z(), 0.0);
  EXPECT_LT(std::abs(avi.velocity(v).z()), 0.05);
}

}  // namespace test_avi_granular
