// IPC barrier: b, b', b'' against finite differences and C² at d̂, b → ∞ as d → 0; per-pair barrier potentials
// (2D point–edge, point–triangle, mollified edge–edge) against finite differences; area weights; initial κ.
#include <gtest/gtest.h>

#include <cmath>

#include "../support/finite_difference.hpp"
#include "percussion/geometry/distance/edge_edge_mollifier.hpp"
#include "percussion/physics/ipc/area_weights.hpp"
#include "percussion/physics/ipc/barrier_potential.hpp"
#include "percussion/physics/ipc/barrier_stiffness.hpp"

namespace test_ipc_barrier {

using namespace percussion::ipc;
using percussion::ipc::Vec;  // not PETSc's Vec, which another file of a unity batch may bring in
using percussion::geometry::edge_edge_mollifier_threshold;
using percussion::test::expect_derivatives;
using percussion::test::point;

TEST(IpcBarrier, DerivativesAndSmoothnessAtDhat) {
  const double xhat = 0.04;
  for (double x : {1e-4, 3e-3, 0.01, 0.025, 0.039}) {
    const double h = 1e-7 * x;
    EXPECT_NEAR(barrier_first_derivative(x, xhat), (barrier(x + h, xhat) - barrier(x - h, xhat)) / (2 * h),
                1e-6 * std::abs(barrier_first_derivative(x, xhat)));
    EXPECT_NEAR(barrier_second_derivative(x, xhat),
                (barrier_first_derivative(x + h, xhat) - barrier_first_derivative(x - h, xhat)) / (2 * h),
                1e-6 * std::abs(barrier_second_derivative(x, xhat)));
  }
  // b, b', b'' → 0 at x̂ from below (C²), and are exactly 0 beyond.
  const double below = xhat * (1 - 1e-6);
  EXPECT_LT(barrier(below, xhat), 1e-18);
  EXPECT_LT(std::abs(barrier_first_derivative(below, xhat)), 1e-12);
  EXPECT_LT(std::abs(barrier_second_derivative(below, xhat)), 1e-5);
  EXPECT_EQ(barrier(xhat, xhat), 0.0);
  EXPECT_EQ(barrier_second_derivative(2 * xhat, xhat), 0.0);
  // Known value: b(x̂/e) = (x̂ (1 − 1/e))².
  EXPECT_NEAR(barrier(xhat / std::exp(1.0), xhat), std::pow(xhat * (1 - 1 / std::exp(1.0)), 2), 1e-15);
  // b → ∞ as d → 0, and is infinite at contact.
  EXPECT_GT(barrier(1e-300, xhat), barrier(1e-30, xhat));
  EXPECT_GT(barrier(1e-30, xhat), barrier(1e-10, xhat));
  EXPECT_TRUE(std::isinf(barrier(0.0, xhat)));
}

TEST(IpcBarrier, PointEdge2DPotentialMatchesFiniteDifferences) {
  percussion::test::RandomPoints rnd;
  const double dhat2 = 0.09, w = 2.5;
  int active = 0;
  for (int k = 0; k < 200 && active < 20; ++k) {
    const Vec<6> x = rnd.vec<6>();
    auto e = [&](const Vec<6>& y) { return point_edge_barrier<2>(point<2>(y, 0), point<2>(y, 1), point<2>(y, 2), dhat2, w); };
    if (e(x).value == 0.0) continue;
    ++active;
    expect_derivatives<6>([&](const Vec<6>& y) { return e(y).value; }, [&](const Vec<6>& y) { return e(y).gradient; },
                          [&](const Vec<6>& y) { return e(y).hessian; }, x, 1e-7, 1e-5);
  }
  EXPECT_EQ(active, 20);
}

TEST(IpcBarrier, PointTrianglePotentialMatchesFiniteDifferences) {
  percussion::test::RandomPoints rnd;
  const double dhat2 = 0.04, w = 0.7;
  int active = 0;
  for (int k = 0; k < 1000 && active < 20; ++k) {
    const Vec<3> t0 = rnd.vec<3>(), t1 = rnd.vec<3>(), t2 = rnd.vec<3>();
    const Vec<3> n = (t1 - t0).cross(t2 - t0).normalized();
    Vec<12> x;
    x << t0 + rnd.uniform(-0.3, 1.0) * (t1 - t0) + rnd.uniform(-0.3, 1.0) * (t2 - t0) + rnd.uniform(0.02, 0.2) * n,
        t0, t1, t2;
    auto e = [&](const Vec<12>& y) {
      return point_triangle_barrier(point<3>(y, 0), point<3>(y, 1), point<3>(y, 2), point<3>(y, 3), dhat2, w);
    };
    if (e(x).value == 0.0) continue;
    ++active;
    expect_derivatives<12>([&](const Vec<12>& y) { return e(y).value; },
                           [&](const Vec<12>& y) { return e(y).gradient; },
                           [&](const Vec<12>& y) { return e(y).hessian; }, x, 1e-7, 1e-5);
  }
  EXPECT_EQ(active, 20);
}

// Edge–edge pairs, crossing (unmollified) and nearly parallel (mollified, c < ε×, where the product rule's
// cross terms matter).
TEST(IpcBarrier, EdgeEdgePotentialMatchesFiniteDifferences) {
  const double dhat2 = 0.04, w = 1.3;
  for (double theta : {0.8, 0.02, 1e-3}) {
    Vec<12> x;
    x << 0, 0, 0, 1, 0, 0, 0.45 - 0.5 * std::cos(theta), -0.5 * std::sin(theta), 0.12,
        0.45 + 0.5 * std::cos(theta), 0.5 * std::sin(theta), 0.13;
    const double eps = edge_edge_mollifier_threshold(point<3>(x, 0), point<3>(x, 1), point<3>(x, 2), point<3>(x, 3));
    auto e = [&](const Vec<12>& y) {
      return edge_edge_barrier(point<3>(y, 0), point<3>(y, 1), point<3>(y, 2), point<3>(y, 3), eps, dhat2, w);
    };
    ASSERT_GT(e(x).value, 0.0);
    expect_derivatives<12>([&](const Vec<12>& y) { return e(y).value; },
                           [&](const Vec<12>& y) { return e(y).gradient; },
                           [&](const Vec<12>& y) { return e(y).hessian; }, x, 1e-8, 1e-5, std::to_string(theta));
  }
}

// A mollified edge–edge pair's potential is continuous as c crosses ε× (m → 1).
TEST(IpcBarrier, EdgeEdgeMollifiedPotentialContinuousAtThreshold) {
  const Vec<3> a0(0, 0, 0), a1(1, 0, 0);
  const double eps = 1e-3 * 1.0 * 1.0, dhat2 = 0.04;
  // Edge b of unit length at angle θ in a plane 0.1 above a: c = sin²θ, so c = ε× at sin θ = √ε×.
  auto energy = [&](double sin_theta) {
    const double cos_theta = std::sqrt(1 - sin_theta * sin_theta);
    const Vec<3> b0(0.5 - 0.5 * cos_theta, -0.5 * sin_theta, 0.1), b1(0.5 + 0.5 * cos_theta, 0.5 * sin_theta, 0.1);
    return edge_edge_barrier(a0, a1, b0, b1, eps, dhat2, 1.0).value;
  };
  const double s = std::sqrt(eps);
  EXPECT_NEAR(energy(s * (1 - 1e-9)), energy(s * (1 + 1e-9)), 1e-9 * energy(s));
  EXPECT_LT(energy(0.5 * s), energy(2 * s));  // mollified below the threshold
}

TEST(IpcBarrier, AreaWeights) {
  // Unit square boundary in 2D: each vertex has half of two unit edges.
  const std::vector<Vec<2>> square = {Vec<2>(0, 0), Vec<2>(1, 0), Vec<2>(1, 1), Vec<2>(0, 1)};
  const std::vector<std::array<int, 2>> sides = {{0, 1}, {1, 2}, {2, 3}, {3, 0}};
  for (double a : vertex_areas_2d(square, sides)) EXPECT_DOUBLE_EQ(a, 1.0);
  EXPECT_DOUBLE_EQ(point_edge_weight_2d(1.0), 0.5);
  // A regular tetrahedron's surface: four equilateral triangles of edge 2√2.
  const std::vector<Vec<3>> tet = {Vec<3>(1, 1, 1), Vec<3>(1, -1, -1), Vec<3>(-1, 1, -1), Vec<3>(-1, -1, 1)};
  const std::vector<std::array<int, 3>> faces = {{0, 1, 2}, {0, 3, 1}, {0, 2, 3}, {1, 3, 2}};
  const std::vector<std::array<int, 2>> edges = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
  const double face = 2.0 * std::sqrt(3.0);  // edge length 2√2: area √3/4 · 8
  for (double a : vertex_areas_3d(tet, faces)) EXPECT_NEAR(a, face, 1e-14);          // 3 faces × ⅓
  for (double a : edge_areas_3d(tet, faces, edges)) EXPECT_NEAR(a, 2 * face / 3, 1e-14);  // 2 faces × ⅓
  EXPECT_DOUBLE_EQ(point_triangle_weight(4.0), 1.0);
  EXPECT_DOUBLE_EQ(edge_edge_weight(1.0, 3.0), 1.0);
}

TEST(IpcBarrier, InitialBarrierStiffness) {
  const double diag = 2.0, dhat2 = 1e-6, mass = 0.5;
  const double d0 = 4e-16;
  const double kmin = min_barrier_stiffness(diag, dhat2, mass);
  EXPECT_NEAR(kmin, 1e11 * mass / (4 * d0 * barrier_second_derivative(d0, dhat2)), 1e-12 * kmin);
  // κ = −∇B·∇E/‖∇B‖² inside [κ_min, 100 κ_min], clamped outside.
  Eigen::VectorXd gB(3), gE(3);
  gB << 1.0, -2.0, 0.5;
  gE = -5.0 * kmin * gB;
  EXPECT_NEAR(initial_barrier_stiffness(gB, gE, kmin).kappa, 5.0 * kmin, 1e-12 * kmin);
  EXPECT_DOUBLE_EQ(initial_barrier_stiffness(gB, Eigen::VectorXd(-1e3 * kmin * gB), kmin).kappa, 100 * kmin);
  EXPECT_DOUBLE_EQ(initial_barrier_stiffness(gB, Eigen::VectorXd(gB), kmin).kappa, kmin);
  EXPECT_DOUBLE_EQ(initial_barrier_stiffness(Eigen::VectorXd::Zero(3), gE, kmin).kappa, kmin);
}

}  // namespace test_ipc_barrier
