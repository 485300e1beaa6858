// The notes' box of particles (000 §5.2): spheres of radius 0.1 m and 1 kg in a 3 m cube, isotropic velocities of
// magnitude U[0, 10] m/s, η = 0.01 m, k so that a 5 m/s impact reaches about three layers, C = 0.05. Prints one JSON
// object of figures per case: events per second, layer and certificate events, rebuilds, the deepest layer, the energy
// change, and how many pair evaluations a synchronous integrator at the smallest layer step used would need per one
// of the asynchronous run; and the broad phase against every pair on a smaller box, which gives the same trajectory.
// Usage: avi_box [SPHERES [END_TIME]]   (not a test: scripts/bench/avi.sh runs it)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "../support/avi_sphere_box.hpp"
#include "percussion/methods/avi/asynchronous_integrator.hpp"

namespace {

using percussion::avi::AsynchronousIntegrator;
using percussion::avi::ContactSettings;
using percussion::avi::Vec3;

void fill(AsynchronousIntegrator& avi, int spheres, bool gravity, bool every_pair) {
  std::mt19937_64 random(2026);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> g(0, 1);
  percussion::test::sphere_box(avi, spheres, 3.0, 0.1, 1.0, random, [&] {
    const Vec3 direction = Vec3(g(random), g(random), g(random)).normalized();
    return Vec3(10 * u(random) * direction);
  });
  if (every_pair)
    for (int a = 0; a < spheres; ++a)
      for (int b = a + 1; b < spheres; ++b) avi.add_pair(a, b);
  else
    avi.find_sphere_pairs(0.1);
  if (gravity) avi.set_gravity({0, 0, -9.8}, 1e-3);
}

ContactSettings settings(double restitution) {
  ContactSettings s{{0.01, 2e4}, 0.05};
  s.restitution = restitution;
  return s;
}

struct Result {
  double wall, energy0, energy;
  std::vector<Vec3> x;
};

Result run(const char* name, int spheres, double end, bool gravity, double restitution, bool every_pair) {
  AsynchronousIntegrator avi(settings(restitution));
  fill(avi, spheres, gravity, every_pair);
  const auto t0 = std::chrono::steady_clock::now();
  avi.start();
  const double e0 = avi.kinetic_energy() + avi.potential_energy();
  avi.advance_to(end);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double e = avi.kinetic_energy() + avi.potential_energy();
  const auto& c = avi.counters();
  const std::int64_t events = c.spring_events + c.gravity_events + c.layer_events + c.certificate_events;
  // A synchronous penalty integrator steps every candidate pair at the smallest layer step the run needed.
  const double smallest = settings(restitution).layers.step(std::max<std::int64_t>(c.deepest_layer, 1), 0.5, 0.05);
  const double synchronous = end / smallest * static_cast<double>(avi.pair_count());
  std::printf("{\"case\": \"%s\", \"spheres\": %d, \"end\": %g, \"gravity\": %s, \"restitution\": %g, "
              "\"every_pair\": %s, \"wall_s\": %.4f, \"events\": %lld, \"events_per_s\": %.4g, \"layer_events\": %lld, "
              "\"certificate_events\": %lld, \"rebuilds\": %lld, \"pairs\": %zu, \"deepest_layer\": %lld, "
              "\"min_distance\": %.4g, \"energy_change\": %.4g, \"synchronous_per_asynchronous\": %.4g}\n",
              name, spheres, end, gravity ? "true" : "false", restitution, every_pair ? "true" : "false", wall,
              static_cast<long long>(events), static_cast<double>(events) / wall,
              static_cast<long long>(c.layer_events), static_cast<long long>(c.certificate_events),
              static_cast<long long>(c.rebuilds), avi.pair_count(), static_cast<long long>(c.deepest_layer),
              c.min_distance, (e - e0) / e0, synchronous / static_cast<double>(c.layer_events + c.certificate_events));
  std::fflush(stdout);
  Result r{wall, e0, e, {}};
  for (int i = 0; i < spheres; ++i) r.x.push_back(avi.position(i));
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const int spheres = argc > 1 ? std::atoi(argv[1]) : 900;
  const double end = argc > 2 ? std::atof(argv[2]) : 0.5;
  run("box", spheres, end, false, 1.0, false);
  run("box_gravity_e0.5", spheres, end, true, 0.5, false);
  const int small = spheres / 3;
  const Result all = run("small_every_pair", small, end, false, 1.0, true);
  const Result broad = run("small_broad_phase", small, end, false, 1.0, false);
  double difference = 0;
  for (int i = 0; i < small; ++i) difference = std::max(difference, (all.x[i] - broad.x[i]).norm() / 3.0);
  std::printf("{\"case\": \"broad_phase_vs_every_pair\", \"spheres\": %d, \"speedup\": %.4g, "
              "\"max_position_difference\": %.3g}\n", small, all.wall / broad.wall, difference);
  return 0;
}
