// Lagged smoothed friction: f0/f1 against finite differences and continuity at η; the per-pair potential's
// gradient and Hessian against finite differences (stick and slip); closest-point weights and tangent bases of
// every pair type and sub-case; the friction force's magnitude γN and direction against sliding.
#include <gtest/gtest.h>

#include <cmath>

#include "../support/finite_difference.hpp"
#include "percussion/geometry/distance/edge_edge.hpp"
#include "percussion/geometry/distance/point_edge.hpp"
#include "percussion/geometry/distance/point_triangle.hpp"
#include "percussion/physics/ipc/barrier.hpp"
#include "percussion/physics/ipc/friction_pair.hpp"

namespace test_ipc_friction {

using namespace percussion::ipc;
using percussion::ipc::Vec;  // not PETSc's Vec, which another file of a unity batch may bring in
using percussion::test::expect_derivatives;
using percussion::test::point;

TEST(IpcFriction, SmoothingFunctions) {
  const double eta = 1e-3;
  for (double y : {1e-5, 3e-4, 7e-4, 0.999e-3, 2e-3, 0.1}) {
    const double h = 1e-6 * y;
    EXPECT_NEAR(friction_f1(y, eta), (friction_f0(y + h, eta) - friction_f0(y - h, eta)) / (2 * h), 1e-7);
    const double f1p = (friction_f1(y + h, eta) - friction_f1(y - h, eta)) / (2 * h);
    EXPECT_NEAR(friction_f2_term(y, eta), (f1p - friction_f1(y, eta) / y) / (y * y), 1e-5 / (y * y * y) * eta);
    EXPECT_NEAR(friction_f1_over_y(y, eta), friction_f1(y, eta) / y, 1e-12 / y);
  }
  // Continuity at η (f0 is C², f1 is C¹) and the limits at 0.
  EXPECT_NEAR(friction_f0(eta * (1 - 1e-12), eta), eta, 1e-14);
  EXPECT_NEAR(friction_f1(eta * (1 - 1e-9), eta), 1.0, 1e-15);
  EXPECT_DOUBLE_EQ(friction_f0(0.0, eta), eta / 3.0);
  EXPECT_DOUBLE_EQ(friction_f1(0.0, eta), 0.0);
  EXPECT_DOUBLE_EQ(friction_f1_over_y(0.0, eta), 2.0 / eta);
}

namespace {

template <int N, int K>
void check_potential(const LaggedFriction<N, K>& pair, const Vec<N>& x, const Vec<N>& x_prev, double mu, double eta,
                     double h) {
  auto e = [&](const Vec<N>& y) { return friction_potential<N, K>(pair, y, x_prev, mu, eta); };
  expect_derivatives<N>([&](const Vec<N>& y) { return e(y).value; }, [&](const Vec<N>& y) { return e(y).gradient; },
                        [&](const Vec<N>& y) { return e(y).hessian; }, x, h, 1e-6, "", 1.0);
}

}  // namespace

// The potential on random lagged operators, sticking (‖τ‖ < η) and sliding (‖τ‖ > η). In 2D sliding the
// potential is linear in τ and its Hessian vanishes, hence errors relative to at least 1 (the Hessians here are
// of order γN/η = 100).
TEST(IpcFriction, PotentialMatchesFiniteDifferences) {
  percussion::test::RandomPoints rnd;
  const double mu = 0.4, eta = 1e-2;
  for (int k = 0; k < 10; ++k) {
    const auto g3 = point_triangle_friction_geometry(rnd.vec<3>(), rnd.vec<3>(), rnd.vec<3>(), rnd.vec<3>());
    const LaggedFriction<12, 2> pair = lagged_friction(g3, 2.5);
    const Vec<12> x_prev = rnd.vec<12>();
    for (double scale : {1e-3, 0.2}) check_potential(pair, Vec<12>(x_prev + scale * rnd.vec<12>()), x_prev, mu, eta, 1e-8);
    const auto g2 = point_edge_friction_geometry_2d(rnd.vec<2>(), rnd.vec<2>(), rnd.vec<2>());
    const LaggedFriction<6, 1> pair2 = lagged_friction(g2, 0.7);
    const Vec<6> y_prev = rnd.vec<6>();
    for (double scale : {1e-3, 0.2}) check_potential(pair2, Vec<6>(y_prev + scale * rnd.vec<6>()), y_prev, mu, eta, 1e-8);
  }
  // At zero slip: no force, Hessian γ N (2/η) T Tᵀ.
  const auto g = point_triangle_friction_geometry(Vec<3>(0.2, 0.2, 0.1), Vec<3>(0, 0, 0), Vec<3>(1, 0, 0), Vec<3>(0, 1, 0));
  const LaggedFriction<12, 2> pair = lagged_friction(g, 3.0);
  const Vec<12> x = Vec<12>::Ones();
  const PairEnergy<12> e = friction_potential<12, 2>(pair, x, x, mu, eta);
  EXPECT_EQ(e.gradient.norm(), 0.0);
  EXPECT_NEAR((e.hessian - mu * 3.0 * (2 / eta) * pair.tangent * pair.tangent.transpose()).norm(), 0.0, 1e-9);
}

namespace {

// Σ w_i x_i is the vector between the closest points: its squared norm is the pair's distance, and it is normal
// to the orthonormal tangent basis.
template <int M, int D>
void check_geometry(const FrictionGeometry<M, D>& g, const Eigen::Matrix<double, D * M, 1>& x, double d2) {
  Eigen::Matrix<double, D, 1> gap = Eigen::Matrix<double, D, 1>::Zero();
  for (int i = 0; i < M; ++i) gap += g.weights(i) * x.template segment<D>(D * i);
  EXPECT_NEAR(gap.squaredNorm(), d2, 1e-12);
  EXPECT_NEAR(g.weights.sum(), 0.0, 1e-14);
  EXPECT_LT((g.basis.transpose() * g.basis - Eigen::Matrix<double, D - 1, D - 1>::Identity()).norm(), 1e-13);
  EXPECT_LT((g.basis.transpose() * gap).norm(), 1e-12 * std::max(1.0, gap.norm()));
}

}  // namespace

TEST(IpcFriction, ClosestPointsAndTangentBasesOfEverySubCase) {
  using percussion::geometry::EdgeEdgeCase;
  using percussion::geometry::PointEdgeCase;
  using percussion::geometry::PointTriangleCase;
  namespace g = percussion::geometry;
  percussion::test::RandomPoints rnd;
  int pe[3] = {}, pt[7] = {}, ee[9] = {};
  for (int k = 0; k < 300; ++k) {
    const Vec<6> y = rnd.vec<6>();
    const PointEdgeCase c2 = g::point_edge_case<2>(point<2>(y, 0), point<2>(y, 1), point<2>(y, 2));
    ++pe[static_cast<int>(c2)];
    check_geometry<3, 2>(point_edge_friction_geometry_2d(point<2>(y, 0), point<2>(y, 1), point<2>(y, 2)), y,
                         g::point_edge_distance<2>(point<2>(y, 0), point<2>(y, 1), point<2>(y, 2), c2));
    const Vec<12> x = rnd.vec<12>();
    const Vec<3> p = point<3>(x, 0), a = point<3>(x, 1), b = point<3>(x, 2), c = point<3>(x, 3);
    const PointTriangleCase ct = g::point_triangle_case(p, a, b, c);
    ++pt[static_cast<int>(ct)];
    check_geometry<4, 3>(point_triangle_friction_geometry(p, a, b, c), x, g::point_triangle_distance(p, a, b, c, ct));
    const EdgeEdgeCase ce = g::edge_edge_case(p, a, b, c);
    ++ee[static_cast<int>(ce)];
    check_geometry<4, 3>(edge_edge_friction_geometry(p, a, b, c), x, g::edge_edge_distance(p, a, b, c, ce));
  }
  for (int n : pe) EXPECT_GT(n, 3);
  for (int n : pt) EXPECT_GT(n, 3);
  for (int n : ee) EXPECT_GT(n, 3);
  // Exactly parallel edges (point–edge or point–point sub-cases).
  const Vec<12> par = (Vec<12>() << 0, 0, 0, 1, 0, 0, 0.5, 0.2, 0.3, 1.5, 0.2, 0.3).finished();
  const Vec<3> pa = point<3>(par, 0), pb = point<3>(par, 1), pc = point<3>(par, 2), pd = point<3>(par, 3);
  check_geometry<4, 3>(edge_edge_friction_geometry(pa, pb, pc, pd), par,
                       g::edge_edge_distance(pa, pb, pc, pd, g::edge_edge_case(pa, pb, pc, pd)));
}

// A point sliding on a fixed triangle beyond η feels a force of magnitude γN opposite to its sliding, and the
// triangle the opposite force; below η the force is smaller, γ N f1(‖τ‖).
TEST(IpcFriction, ForceMagnitudeAndDirection) {
  const Vec<3> t0(0, 0, 0), t1(2, 0, 0), t2(0, 2, 0), p_prev(0.4, 0.5, 0.01);
  const double mu = 0.3, N = 7.0, eta = 1e-3;
  const LaggedFriction<12, 2> pair = lagged_friction(point_triangle_friction_geometry(p_prev, t0, t1, t2), N);
  Vec<12> x_prev;
  x_prev << p_prev, t0, t1, t2;
  for (const Vec<3>& slide : {Vec<3>(0.05, 0.02, 0.0), Vec<3>(-0.01, 0.03, 0.004), Vec<3>(3e-4, -2e-4, 0.0)}) {
    Vec<12> x = x_prev;
    x.segment<3>(0) += slide;
    const Vec<12> force = -friction_potential<12, 2>(pair, x, x_prev, mu, eta).gradient;
    const Vec<3> tangential(slide.x(), slide.y(), 0.0);
    const double y = tangential.norm();
    EXPECT_NEAR(force.segment<3>(0).norm(), mu * N * friction_f1(y, eta), 1e-12);
    EXPECT_NEAR(force.segment<3>(0).normalized().dot(-tangential.normalized()), 1.0, 1e-12);
    EXPECT_LT((force.segment<3>(0) + force.segment<3>(3) + force.segment<3>(6) + force.segment<3>(9)).norm(), 1e-13);
    if (y >= eta) {
      EXPECT_NEAR(force.segment<3>(0).norm(), mu * N, 1e-12);
    }
  }
  // 2D: a point sliding along a fixed edge.
  const Vec<2> q(0.3, 0.05), e0(0, 0), e1(1, 0);
  const LaggedFriction<6, 1> pair2 = lagged_friction(point_edge_friction_geometry_2d(q, e0, e1), N);
  Vec<6> y_prev;
  y_prev << q, e0, e1;
  Vec<6> y = y_prev;
  y(0) -= 0.1;
  const Vec<6> f2 = -friction_potential<6, 1>(pair2, y, y_prev, mu, eta).gradient;
  EXPECT_NEAR(f2(0), mu * N, 1e-12);
  EXPECT_NEAR(f2(1), 0.0, 1e-15);
}

// N = −∂(w b(d²))/∂d, with the edge–edge mollifier as a factor.
TEST(IpcFriction, LaggedNormalForce) {
  const double dhat2 = 0.01, w = 3.0;
  for (double d : {0.01, 0.05, 0.09}) {
    const double h = 1e-7;
    const double fd = -(w * barrier((d + h) * (d + h), dhat2) - w * barrier((d - h) * (d - h), dhat2)) / (2 * h);
    EXPECT_NEAR(lagged_normal_force(d * d, dhat2, w), fd, 1e-6 * std::abs(fd));
    EXPECT_GT(lagged_normal_force(d * d, dhat2, w), 0.0);
    EXPECT_NEAR(lagged_normal_force(d * d, dhat2, w, 0.25), 0.25 * fd, 1e-6 * std::abs(fd));
  }
  EXPECT_EQ(lagged_normal_force(0.02, dhat2, w), 0.0);  // beyond d̂
}

}  // namespace test_ipc_friction
