// Squared point–edge distance, 2D and 3D: classification against the clamped projection, every sub-case's
// gradient and Hessian against central differences, continuity across the region boundaries.
#include <gtest/gtest.h>

#include <algorithm>

#include "../support/finite_difference.hpp"
#include "percussion/geometry/distance/point_edge.hpp"

namespace test_distance_point_edge {

using namespace percussion::geometry;
using percussion::test::relative_error;

namespace {

template <int D>
struct Stencil {
  static Vec<D> p(const Vec<3 * D>& x) { return x.template segment<D>(0); }
  static Vec<D> e0(const Vec<3 * D>& x) { return x.template segment<D>(D); }
  static Vec<D> e1(const Vec<3 * D>& x) { return x.template segment<D>(2 * D); }
};

// Reference: distance to the clamped projection.
template <int D>
double reference(const Vec<D>& p, const Vec<D>& e0, const Vec<D>& e1) {
  const Vec<D> e = e1 - e0;
  const double t = std::clamp((p - e0).dot(e) / e.squaredNorm(), 0.0, 1.0);
  return (p - e0 - t * e).squaredNorm();
}

template <int D>
void check_case(const Vec<3 * D>& x, PointEdgeCase c) {
  using S = Stencil<D>;
  auto f = [c](const Vec<3 * D>& y) { return point_edge_distance<D>(S::p(y), S::e0(y), S::e1(y), c); };
  auto g = [c](const Vec<3 * D>& y) { return point_edge_distance_gradient<D>(S::p(y), S::e0(y), S::e1(y), c); };
  auto H = [c](const Vec<3 * D>& y) { return point_edge_distance_hessian<D>(S::p(y), S::e0(y), S::e1(y), c); };
  percussion::test::expect_derivatives<3 * D>(f, g, H, x, 1e-6, 1e-7);
}

template <int D>
void check_random() {
  using S = Stencil<D>;
  percussion::test::RandomPoints rnd;
  int seen[3] = {0, 0, 0};
  for (int k = 0; k < 60; ++k) {
    const Vec<3 * D> x = rnd.vec<3 * D>();
    const PointEdgeCase c = point_edge_case<D>(S::p(x), S::e0(x), S::e1(x));
    ++seen[static_cast<int>(c)];
    EXPECT_NEAR(point_edge_distance<D>(S::p(x), S::e0(x), S::e1(x)), reference<D>(S::p(x), S::e0(x), S::e1(x)),
                1e-13);
    check_case<D>(x, c);
    // The point–line formula itself, away from its singular e0 = e1, everywhere.
    check_case<D>(x, PointEdgeCase::P_E);
  }
  for (int n : seen) EXPECT_GT(n, 5);
}

}  // namespace

TEST(DistancePointEdge, KnownValues) {
  // 3-4-5 triangle: the point (0, 3) over the edge from (−1, 0) to (4, 0) is 3 away; beyond the end, 5 away.
  EXPECT_DOUBLE_EQ(point_edge_distance<2>(Vec<2>(0, 3), Vec<2>(-1, 0), Vec<2>(4, 0)), 9.0);
  EXPECT_DOUBLE_EQ(point_edge_distance<2>(Vec<2>(8, 3), Vec<2>(-1, 0), Vec<2>(4, 0)), 25.0);
  EXPECT_EQ(point_edge_case<2>(Vec<2>(8, 3), Vec<2>(-1, 0), Vec<2>(4, 0)), PointEdgeCase::P_E1);
  EXPECT_EQ(point_edge_case<2>(Vec<2>(-2, 3), Vec<2>(-1, 0), Vec<2>(4, 0)), PointEdgeCase::P_E0);
  EXPECT_NEAR(point_edge_distance<3>(Vec<3>(1, 1, 1), Vec<3>(0, 0, 0), Vec<3>(2, 2, 2)), 0.0, 1e-15);
  EXPECT_NEAR(point_edge_distance<3>(Vec<3>(1, 1, 1), Vec<3>(0, 0, 0), Vec<3>(2, 0, 0)), 2.0, 1e-15);
}

TEST(DistancePointEdge, DerivativesMatchFiniteDifferences2D) { check_random<2>(); }
TEST(DistancePointEdge, DerivativesMatchFiniteDifferences3D) { check_random<3>(); }

// Over an end of the edge the point–line and point–point distances agree in value and gradient (C¹).
TEST(DistancePointEdge, ContinuousAcrossRegionBoundary) {
  const Vec<3> e0(0.3, -0.2, 0.1), e1(1.4, 0.5, -0.6);
  const Vec<3> e = e1 - e0;
  const Vec<3> n = e.cross(Vec<3>(0, 0, 1)).normalized();
  for (const auto& [end, c] : {std::pair{e0, PointEdgeCase::P_E0}, std::pair{e1, PointEdgeCase::P_E1}}) {
    const Vec<3> p = end + 0.7 * n;
    EXPECT_NEAR(point_edge_distance<3>(p, e0, e1, c), point_edge_distance<3>(p, e0, e1, PointEdgeCase::P_E), 1e-14);
    EXPECT_LT(relative_error(point_edge_distance_gradient<3>(p, e0, e1, c),
                             point_edge_distance_gradient<3>(p, e0, e1, PointEdgeCase::P_E)),
              1e-12);
  }
}

// A zero-length edge is its end point.
TEST(DistancePointEdge, DegenerateEdgeIsAPoint) {
  const Vec<2> p(0.5, 0.25), e(0.1, 0.1);
  EXPECT_EQ(point_edge_case<2>(p, e, e), PointEdgeCase::P_E0);
  EXPECT_DOUBLE_EQ(point_edge_distance<2>(p, e, e), (p - e).squaredNorm());
}

}  // namespace test_distance_point_edge
