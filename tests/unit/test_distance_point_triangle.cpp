// Squared point–triangle distance: classification against an independent closest-point computation, every
// sub-case's gradient and Hessian against central differences, points exactly over an edge or a vertex, and a
// degenerate triangle.
#include <gtest/gtest.h>

#include <algorithm>

#include "../support/finite_difference.hpp"
#include "percussion/geometry/distance/point_triangle.hpp"

namespace test_distance_point_triangle {

using namespace percussion::geometry;
using percussion::test::relative_error;

namespace {

Vec<3> at(const Vec<12>& x, int i) { return percussion::test::point<3>(x, i); }

double segment_distance(const Vec<3>& p, const Vec<3>& a, const Vec<3>& b) {
  const Vec<3> e = b - a;
  const double t = std::clamp((p - a).dot(e) / e.squaredNorm(), 0.0, 1.0);
  return (p - a - t * e).squaredNorm();
}

// Reference: projection onto the plane if its barycentric coordinates are all non-negative, else the nearest
// edge.
double reference(const Vec<3>& p, const Vec<3>& t0, const Vec<3>& t1, const Vec<3>& t2) {
  Eigen::Matrix<double, 3, 2> B;
  B << t1 - t0, t2 - t0;
  const Eigen::Vector2d uv = (B.transpose() * B).ldlt().solve(B.transpose() * (p - t0));
  if (uv(0) >= 0 && uv(1) >= 0 && uv.sum() <= 1) return (p - t0 - B * uv).squaredNorm();
  return std::min({segment_distance(p, t0, t1), segment_distance(p, t1, t2), segment_distance(p, t2, t0)});
}

void check_case(const Vec<12>& x, PointTriangleCase c, double tol = 1e-6) {
  auto f = [c](const Vec<12>& y) { return point_triangle_distance(at(y, 0), at(y, 1), at(y, 2), at(y, 3), c); };
  auto g = [c](const Vec<12>& y) {
    return point_triangle_distance_gradient(at(y, 0), at(y, 1), at(y, 2), at(y, 3), c);
  };
  auto H = [c](const Vec<12>& y) {
    return point_triangle_distance_hessian(at(y, 0), at(y, 1), at(y, 2), at(y, 3), c);
  };
  percussion::test::expect_derivatives<12>(f, g, H, x, 1e-6, tol, std::to_string(static_cast<int>(c)));
}

Vec<12> pack(const Vec<3>& p, const Vec<3>& t0, const Vec<3>& t1, const Vec<3>& t2) {
  Vec<12> x;
  x << p, t0, t1, t2;
  return x;
}

}  // namespace

TEST(DistancePointTriangle, KnownValues) {
  const Vec<3> t0(0, 0, 0), t1(1, 0, 0), t2(0, 1, 0);
  EXPECT_DOUBLE_EQ(point_triangle_distance(Vec<3>(0.2, 0.2, 3), t0, t1, t2, PointTriangleCase::P_T), 9.0);
  EXPECT_EQ(point_triangle_case(Vec<3>(0.2, 0.2, 3), t0, t1, t2), PointTriangleCase::P_T);
  EXPECT_EQ(point_triangle_case(Vec<3>(2, -1, 1), t0, t1, t2), PointTriangleCase::P_T1);
  EXPECT_EQ(point_triangle_case(Vec<3>(0.5, -1, 1), t0, t1, t2), PointTriangleCase::P_E0);
  EXPECT_EQ(point_triangle_case(Vec<3>(1, 1, 1), t0, t1, t2), PointTriangleCase::P_E1);
  EXPECT_EQ(point_triangle_case(Vec<3>(-1, 0.5, 1), t0, t1, t2), PointTriangleCase::P_E2);
  EXPECT_DOUBLE_EQ(point_triangle_distance(Vec<3>(1, 1, 1), t0, t1, t2, PointTriangleCase::P_E1), 1.5);
}

// Random points in every region of random triangles: the classified distance is the reference distance, and
// each sub-case's derivatives match central differences.
TEST(DistancePointTriangle, EveryRegionMatchesReferenceAndFiniteDifferences) {
  percussion::test::RandomPoints rnd;
  int seen[7] = {};
  for (int k = 0; k < 200; ++k) {
    const Vec<3> t0 = rnd.vec<3>(), t1 = rnd.vec<3>(), t2 = rnd.vec<3>();
    const Vec<3> n = (t1 - t0).cross(t2 - t0).normalized();
    const double a = rnd.uniform(-1.0, 2.0), b = rnd.uniform(-1.0, 2.0);
    const Vec<3> p = t0 + a * (t1 - t0) + b * (t2 - t0) + rnd.uniform(-0.5, 0.5) * n;
    const PointTriangleCase c = point_triangle_case(p, t0, t1, t2);
    ++seen[static_cast<int>(c)];
    EXPECT_NEAR(point_triangle_distance(p, t0, t1, t2, c), reference(p, t0, t1, t2), 1e-12);
    if (k % 4 == 0) check_case(pack(p, t0, t1, t2), c);
  }
  for (int n : seen) EXPECT_GT(n, 5);
}

// Every sub-case formula is smooth on its own, whichever region the point is in.
TEST(DistancePointTriangle, EverySubCaseFormulaMatchesFiniteDifferences) {
  percussion::test::RandomPoints rnd;
  for (int k = 0; k < 35; ++k) check_case(rnd.vec<12>(), static_cast<PointTriangleCase>(k % 7));
}

// Exactly over an edge or a vertex, the neighbouring sub-cases agree in value and gradient (C¹ across regions).
TEST(DistancePointTriangle, PointOverEdgeOrVertexIsContinuous) {
  const Vec<3> t0(0.1, 0.0, 0.2), t1(1.2, 0.1, -0.1), t2(0.3, 0.9, 0.4);
  const Vec<3> n = (t1 - t0).cross(t2 - t0).normalized();
  struct Probe {
    Vec<3> p;
    std::vector<PointTriangleCase> cases;
  };
  const std::vector<Probe> probes = {
      {0.5 * (t0 + t1) + 0.3 * n, {PointTriangleCase::P_T, PointTriangleCase::P_E0}},
      {0.5 * (t1 + t2) + 0.3 * n, {PointTriangleCase::P_T, PointTriangleCase::P_E1}},
      {t2 + 0.3 * n, {PointTriangleCase::P_T, PointTriangleCase::P_E1, PointTriangleCase::P_E2, PointTriangleCase::P_T2}},
      {t0 - 0.2 * n, {PointTriangleCase::P_T, PointTriangleCase::P_E0, PointTriangleCase::P_E2, PointTriangleCase::P_T0}},
  };
  for (const Probe& probe : probes) {
    const double ref = reference(probe.p, t0, t1, t2);
    const PointTriangleCase c = point_triangle_case(probe.p, t0, t1, t2);
    EXPECT_NEAR(point_triangle_distance(probe.p, t0, t1, t2, c), ref, 1e-14);
    const Vec<12> g0 = point_triangle_distance_gradient(probe.p, t0, t1, t2, probe.cases[0]);
    for (PointTriangleCase other : probe.cases) {
      EXPECT_NEAR(point_triangle_distance(probe.p, t0, t1, t2, other), ref, 1e-14);
      EXPECT_LT(relative_error(point_triangle_distance_gradient(probe.p, t0, t1, t2, other), g0), 1e-12);
      check_case(pack(probe.p, t0, t1, t2), other);
    }
  }
}

// A zero-area triangle has no plane: the nearest edge decides.
TEST(DistancePointTriangle, DegenerateTriangleUsesNearestEdge) {
  const Vec<3> t0(0, 0, 0), t1(1, 0, 0), t2(2, 0, 0), p(1.5, 0.5, 0.5);
  const PointTriangleCase c = point_triangle_case(p, t0, t1, t2);
  EXPECT_NE(c, PointTriangleCase::P_T);
  EXPECT_NEAR(point_triangle_distance(p, t0, t1, t2, c), 0.5, 1e-15);
  const Vec<3> q(-1, 0, 1);  // beyond t0
  EXPECT_EQ(point_triangle_case(q, t0, t1, t2), PointTriangleCase::P_T0);
}

}  // namespace test_distance_point_triangle
