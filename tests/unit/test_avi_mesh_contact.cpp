// Asynchronous contact between triangle-mesh primitives: closest points of point–triangle and segment–segment
// against the IPC distance kernels; a vertex against a free triangle and two crossing edges keep momentum and
// angular momentum to round-off and bounce apart; a cloth patch dropped on a fixed floor never goes through it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "percussion/core/error.hpp"
#include "percussion/geometry/closest_points.hpp"
#include "percussion/geometry/distance/edge_edge.hpp"
#include "percussion/geometry/distance/point_triangle.hpp"
#include "percussion/methods/avi/asynchronous_integrator.hpp"

namespace test_avi_mesh_contact {

using percussion::avi::AsynchronousIntegrator;
using percussion::avi::ContactSettings;
using percussion::avi::Vec3;
namespace geometry = percussion::geometry;

TEST(AviClosestPoints, AgreeWithTheDistanceKernels) {
  std::mt19937_64 random(11);
  std::uniform_real_distribution<double> u(-1, 1);
  const auto r = [&] { return Vec3(u(random), u(random), u(random)); };
  for (int trial = 0; trial < 2000; ++trial) {
    const Vec3 p = 2 * r(), t0 = r(), t1 = r(), t2 = trial % 10 == 0 ? Vec3(0.5 * (t0 + t1)) : r();  // some flat
    const auto w = geometry::point_triangle_closest(p, t0, t1, t2);
    EXPECT_NEAR(w[0] + w[1] + w[2], 1.0, 1e-14);
    EXPECT_GE(*std::min_element(w.begin(), w.end()), 0.0);
    const double d2 = (p - (w[0] * t0 + w[1] * t1 + w[2] * t2)).squaredNorm();
    if (trial % 10 != 0) {
      const auto region = geometry::point_triangle_case(p, t0, t1, t2);
      const double kernel = geometry::point_triangle_distance(p, t0, t1, t2, region);
      EXPECT_NEAR(d2, kernel, 1e-12 * (1 + kernel)) << trial;
    }
    // No sampled triangle point is closer.
    for (double a = 0; a <= 1; a += 0.125)
      for (double b = 0; a + b <= 1; b += 0.125)
        EXPECT_LE(d2, (p - ((1 - a - b) * t0 + a * t1 + b * t2)).squaredNorm() + 1e-12);

    const Vec3 a0 = r(), a1 = trial % 7 == 0 ? Vec3(a0 + 1e-9 * r()) : r(), b0 = r();
    const Vec3 b1 = trial % 5 == 0 ? Vec3(b0 + 0.7 * (a1 - a0)) : r();  // some parallel
    const auto st = geometry::segment_segment_closest(a0, a1, b0, b1);
    EXPECT_TRUE(st[0] >= 0 && st[0] <= 1 && st[1] >= 0 && st[1] <= 1);
    const double e2 = ((a0 + st[0] * (a1 - a0)) - (b0 + st[1] * (b1 - b0))).squaredNorm();
    for (double s = 0; s <= 1; s += 0.0625)
      for (double t = 0; t <= 1; t += 0.0625)
        EXPECT_LE(e2, ((a0 + s * (a1 - a0)) - (b0 + t * (b1 - b0))).squaredNorm() + 1e-12) << trial;
    if (trial % 35 != 0) {
      const double kernel = geometry::edge_edge_distance(a0, a1, b0, b1, geometry::edge_edge_case(a0, a1, b0, b1));
      EXPECT_NEAR(e2, kernel, 1e-10 * (1 + kernel)) << trial;
    }
  }
}

void expect_momenta_kept(AsynchronousIntegrator& avi, double end, double scale) {
  avi.start();
  const Vec3 p0 = avi.momentum(), l0 = avi.angular_momentum();
  const double e0 = avi.kinetic_energy() + avi.potential_energy();
  avi.advance_to(end);
  EXPECT_GT(avi.counters().layer_events, 100);
  EXPECT_GT(avi.counters().min_distance, 0.0);
  EXPECT_EQ(avi.active_layers(0), 0);  // apart again, every layer dropped
  EXPECT_LE((avi.momentum() - p0).norm(), 1e-12 * scale);
  EXPECT_LE((avi.angular_momentum() - l0).norm(), 1e-12 * scale);
  EXPECT_NEAR(avi.kinetic_energy() + avi.potential_energy(), e0, 0.02 * e0);
}

TEST(AviMeshContact, VertexAgainstAFreeTriangleKeepsMomenta) {
  AsynchronousIntegrator avi(ContactSettings{{0.02, 100}, 0.05});
  const int p = avi.add_vertex({0.2, 0.25, 0.2}, {0.1, 0, -1}, 2.0);
  const int t0 = avi.add_vertex({0, 0, 0}, Vec3::Zero(), 1.0), t1 = avi.add_vertex({1, 0, 0.1}, Vec3::Zero(), 1.5);
  const int t2 = avi.add_vertex({0, 1, 0}, {0, 0, 0.2}, 1.0);
  avi.add_vertex_triangle_pair(p, t0, t1, t2);
  expect_momenta_kept(avi, 0.6, 2.5);
  EXPECT_GT(avi.velocity(p).z(), 0.0);  // bounced
}

TEST(AviMeshContact, CrossingEdgesKeepMomenta) {
  AsynchronousIntegrator avi(ContactSettings{{0.02, 100}, 0.05});
  const int a0 = avi.add_vertex({-0.5, 0.1, 0.3}, {0, 0, -1}, 1.0), a1 = avi.add_vertex({0.5, 0, 0.3}, {0, 0, -1}, 2.0);
  const int b0 = avi.add_vertex({0.1, -0.5, 0}, {0, 0, 0.5}, 1.0);
  const int b1 = avi.add_vertex({0, 0.5, 0.05}, Vec3::Zero(), 1.0);
  avi.add_spring(a0, a1, 1e3, 1.0, 1e-3);  // the edges keep their lengths, roughly
  avi.add_spring(b0, b1, 1e3, 1.0, 1e-3);
  avi.add_edge_edge_pair(a0, a1, b0, b1);
  expect_momenta_kept(avi, 0.6, 4.0);
  EXPECT_GT(avi.distance(0), 0.1);
}

TEST(AviMeshContact, ClothPatchDroppedOnAFloorNeverGoesThrough) {
  ContactSettings s{{0.01, 1000}, 0.05};
  s.restitution = 0.3;
  AsynchronousIntegrator avi(s);
  const double inf = std::numeric_limits<double>::infinity();
  // The floor: two fixed triangles over [−1, 1]², with their five edges.
  const int f0 = avi.add_vertex({-1, -1, 0}, Vec3::Zero(), inf), f1 = avi.add_vertex({1, -1, 0}, Vec3::Zero(), inf);
  const int f2 = avi.add_vertex({1, 1, 0}, Vec3::Zero(), inf), f3 = avi.add_vertex({-1, 1, 0}, Vec3::Zero(), inf);
  const int floor_edges[5][2] = {{f0, f1}, {f1, f2}, {f2, f3}, {f3, f0}, {f0, f2}};
  // The cloth: 5 × 5 vertices 0.1 apart at height 0.1, tilted a little, 1 kg in all, structural springs.
  const int n = 5;
  std::vector<int> cloth;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      cloth.push_back(avi.add_vertex({-0.2 + 0.1 * i, -0.2 + 0.1 * j, 0.1 + 0.02 * i}, {0.3, 0, 0}, 1.0 / (n * n)));
  std::vector<std::array<int, 2>> edges;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (i + 1 < n) edges.push_back({cloth[i * n + j], cloth[(i + 1) * n + j]});
      if (j + 1 < n) edges.push_back({cloth[i * n + j], cloth[i * n + j + 1]});
    }
  for (const auto& e : edges) avi.add_spring(e[0], e[1], 200, 0.1, 5e-4);
  avi.set_gravity({0, 0, -9.81}, 5e-4);
  for (int v : cloth) {
    avi.add_vertex_triangle_pair(v, f0, f1, f2);
    avi.add_vertex_triangle_pair(v, f0, f2, f3);
  }
  for (const auto& e : edges)
    for (const auto& f : floor_edges) avi.add_edge_edge_pair(e[0], e[1], f[0], f[1]);
  double lowest = 1;
  for (int k = 1; k <= 100; ++k) {
    avi.advance_to(0.01 * k);
    for (int v : cloth) lowest = std::min(lowest, avi.position(v).z());
  }
  const auto& c = avi.counters();
  std::printf("cloth: lowest vertex %.3g m, smallest gap %.3g m, %lld layer / %lld certificate / %lld stale events, "
              "deepest layer %lld\n", lowest, c.min_distance, static_cast<long long>(c.layer_events),
              static_cast<long long>(c.certificate_events), static_cast<long long>(c.stale_events),
              static_cast<long long>(c.deepest_layer));
  EXPECT_GT(lowest, 0.0);
  EXPECT_GT(avi.counters().min_distance, 0.0);
  EXPECT_GT(avi.counters().layer_events, 1000);
  // It has landed: resting within the first layers' reach, nearly still.
  for (int v : cloth) EXPECT_LT(avi.position(v).z(), 2 * 0.01);
  EXPECT_LT(avi.kinetic_energy(), 0.05 * 9.81 * 0.14);
}

TEST(AviMeshContact, ImpossibleInputIsRefused) {
  AsynchronousIntegrator avi(ContactSettings{{0.01, 1000}, 0.05});
  const int a = avi.add_vertex({0, 0, 0}, Vec3::Zero(), 1.0), b = avi.add_vertex({1, 0, 0}, Vec3::Zero(), 1.0);
  const int c = avi.add_vertex({0, 1, 0}, Vec3::Zero(), 1.0), d = avi.add_vertex({0, 0, 1}, Vec3::Zero(), 1.0);
  EXPECT_THROW(avi.add_vertex({0, 0, 0}, Vec3::Zero(), -1.0), percussion::InputError);
  EXPECT_THROW(avi.add_vertex({0, 0, std::nan("")}, Vec3::Zero(), 1.0), percussion::InputError);
  EXPECT_THROW(avi.add_spring(a, a, 1, 1, 0.01), percussion::InputError);
  EXPECT_THROW(avi.add_spring(a, b, 1, 1, 0), percussion::InputError);
  EXPECT_THROW(avi.add_vertex_triangle_pair(a, a, b, c), percussion::InputError);  // shares a vertex
  EXPECT_THROW(avi.add_edge_edge_pair(a, b, b, c), percussion::InputError);
  EXPECT_THROW(avi.add_edge_edge_pair(a, b, c, 9), percussion::InputError);
  EXPECT_THROW(avi.add_plane_pair(3, a), percussion::InputError);
  EXPECT_THROW(avi.add_plane({0, 0, 0}, Vec3::Zero()), percussion::InputError);
  avi.add_edge_edge_pair(a, b, c, d);
  avi.add_vertex_triangle_pair(d, a, b, c);
  EXPECT_NO_THROW(avi.start());
  // Spheres that overlap at t = 0 have no barrier to start from.
  AsynchronousIntegrator overlap(ContactSettings{{0.01, 1000}, 0.05});
  overlap.add_pair(overlap.add_vertex({0, 0, 0}, Vec3::Zero(), 1.0, 0.5),
                   overlap.add_vertex({0.9, 0, 0}, Vec3::Zero(), 1.0, 0.5));
  EXPECT_THROW(overlap.start(), percussion::InputError);
}

}  // namespace test_avi_mesh_contact
