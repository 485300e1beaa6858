// Squared edge–edge distance: classification against an independent closest-point computation, every sub-case's
// gradient and Hessian against central differences, nearly parallel (1e-6 rad) and exactly parallel edges, and
// zero-length edges.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "../support/finite_difference.hpp"
#include "percussion/geometry/distance/edge_edge.hpp"

namespace test_distance_edge_edge {

using namespace percussion::geometry;
namespace {

Vec<3> at(const Vec<12>& x, int i) { return percussion::test::point<3>(x, i); }

Vec<12> pack(const Vec<3>& a, const Vec<3>& b, const Vec<3>& c, const Vec<3>& d) {
  Vec<12> x;
  x << a, b, c, d;
  return x;
}

double segment_distance(const Vec<3>& p, const Vec<3>& a, const Vec<3>& b) {
  const Vec<3> e = b - a;
  const double L = e.squaredNorm();
  const double t = L == 0.0 ? 0.0 : std::clamp((p - a).dot(e) / L, 0.0, 1.0);
  return (p - a - t * e).squaredNorm();
}

// Reference: the convex quadratic ‖ea0 + s a − eb0 − t b‖² on [0, 1]² has its minimum at the stationary point
// when that lies inside, else on the square's boundary (an endpoint against the other segment).
double reference(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1) {
  double best = std::min({segment_distance(ea0, eb0, eb1), segment_distance(ea1, eb0, eb1),
                          segment_distance(eb0, ea0, ea1), segment_distance(eb1, ea0, ea1)});
  Eigen::Matrix<double, 3, 2> M;
  M << ea1 - ea0, -(eb1 - eb0);
  const Eigen::Matrix2d G = M.transpose() * M;
  if (G.determinant() > 1e-14 * G.trace() * G.trace()) {
    const Eigen::Vector2d st = G.ldlt().solve(-M.transpose() * (ea0 - eb0));
    if (st.minCoeff() >= 0.0 && st.maxCoeff() <= 1.0) best = std::min(best, (ea0 - eb0 + M * st).squaredNorm());
  }
  return best;
}

void check_case(const Vec<12>& x, EdgeEdgeCase c, double h = 1e-6, double tol = 1e-6) {
  auto f = [c](const Vec<12>& y) { return edge_edge_distance(at(y, 0), at(y, 1), at(y, 2), at(y, 3), c); };
  auto g = [c](const Vec<12>& y) { return edge_edge_distance_gradient(at(y, 0), at(y, 1), at(y, 2), at(y, 3), c); };
  auto H = [c](const Vec<12>& y) { return edge_edge_distance_hessian(at(y, 0), at(y, 1), at(y, 2), at(y, 3), c); };
  percussion::test::expect_derivatives<12>(f, g, H, x, h, tol, std::to_string(static_cast<int>(c)));
}

double classified(const Vec<3>& a0, const Vec<3>& a1, const Vec<3>& b0, const Vec<3>& b1) {
  return edge_edge_distance(a0, a1, b0, b1, edge_edge_case(a0, a1, b0, b1));
}

}  // namespace

TEST(DistanceEdgeEdge, KnownValues) {
  const Vec<3> a0(0, 0, 0), a1(1, 0, 0);
  EXPECT_EQ(edge_edge_case(a0, a1, Vec<3>(0.5, -1, 1), Vec<3>(0.5, 1, 1)), EdgeEdgeCase::EA_EB);
  EXPECT_NEAR(classified(a0, a1, Vec<3>(0.5, -1, 1), Vec<3>(0.5, 1, 1)), 1.0, 1e-15);
  EXPECT_EQ(edge_edge_case(a0, a1, Vec<3>(2, -1, 1), Vec<3>(2, 1, 1)), EdgeEdgeCase::EA1_EB);
  EXPECT_NEAR(classified(a0, a1, Vec<3>(2, -1, 1), Vec<3>(2, 1, 1)), 2.0, 1e-15);
  EXPECT_EQ(edge_edge_case(a0, a1, Vec<3>(3, 2, 0), Vec<3>(3, 5, 0)), EdgeEdgeCase::EA1_EB0);
  EXPECT_NEAR(classified(a0, a1, Vec<3>(3, 2, 0), Vec<3>(3, 5, 0)), 8.0, 1e-15);
}

TEST(DistanceEdgeEdge, RandomEdgesMatchReferenceAndFiniteDifferences) {
  percussion::test::RandomPoints rnd;
  int seen[9] = {};
  for (int k = 0; k < 400; ++k) {
    const Vec<12> x = rnd.vec<12>();
    const EdgeEdgeCase c = edge_edge_case(at(x, 0), at(x, 1), at(x, 2), at(x, 3));
    ++seen[static_cast<int>(c)];
    EXPECT_NEAR(edge_edge_distance(at(x, 0), at(x, 1), at(x, 2), at(x, 3), c),
                reference(at(x, 0), at(x, 1), at(x, 2), at(x, 3)), 1e-12);
    if (k % 8 == 0) check_case(x, c);
  }
  for (int n : seen) EXPECT_GT(n, 3);
}

TEST(DistanceEdgeEdge, EverySubCaseFormulaMatchesFiniteDifferences) {
  percussion::test::RandomPoints rnd;
  for (int k = 0; k < 45; ++k) check_case(rnd.vec<12>(), static_cast<EdgeEdgeCase>(k % 9));
}

// Edges 1e-6 rad apart crossing over each other's middle: still line–line, with the exact distance, and its
// derivatives (large, of order 1/angle) still match central differences taken on a step below the angle.
TEST(DistanceEdgeEdge, NearlyParallelEdges) {
  const double theta = 1e-6, h = 0.25;
  const Vec<3> a0(0, 0, 0), a1(1, 0, 0), mid(0.5, 0, h), dir(std::cos(theta), std::sin(theta), 0);
  const Vec<3> b0 = mid - 0.5 * dir, b1 = mid + 0.5 * dir;
  EXPECT_EQ(edge_edge_case(a0, a1, b0, b1), EdgeEdgeCase::EA_EB);
  EXPECT_NEAR(classified(a0, a1, b0, b1), h * h, 1e-12);
  check_case(pack(a0, a1, b0, b1), EdgeEdgeCase::EA_EB, 1e-10, 1e-5);
  // The same edges tilted out of plane by 1e-6 rad instead.
  const Vec<3> tilt(std::cos(theta), 0, std::sin(theta));
  const Vec<3> c0 = Vec<3>(0.5, 0.3, 0) - 0.5 * tilt, c1 = Vec<3>(0.5, 0.3, 0) + 0.5 * tilt;
  EXPECT_NEAR(classified(a0, a1, c0, c1), reference(a0, a1, c0, c1), 1e-12);
  check_case(pack(a0, a1, c0, c1), edge_edge_case(a0, a1, c0, c1), 1e-10, 1e-5);
}

// Exactly parallel edges have no line–line distance: the nearest endpoint–edge distance is used.
TEST(DistanceEdgeEdge, ExactlyParallelEdges) {
  const Vec<3> a0(0, 0, 0), a1(1, 0, 0);
  struct Config {
    Vec<3> b0, b1;
    double d2;
  };
  const Config configs[] = {
      {Vec<3>(0.25, 0.3, 0.4), Vec<3>(0.75, 0.3, 0.4), 0.25},  // b over the inside of a
      {Vec<3>(0.5, 0, 1), Vec<3>(1.5, 0, 1), 1.0},             // overlapping
      {Vec<3>(2, 0, 1), Vec<3>(3, 0, 1), 2.0},                 // end to end
      {Vec<3>(3, 0, 1), Vec<3>(2, 0, 1), 2.0},                 // antiparallel
      {Vec<3>(2, 0, 0), Vec<3>(3, 0, 0), 1.0},                 // collinear
  };
  for (const Config& cfg : configs) {
    const EdgeEdgeCase c = edge_edge_case(a0, a1, cfg.b0, cfg.b1);
    EXPECT_NE(c, EdgeEdgeCase::EA_EB);
    EXPECT_NEAR(edge_edge_distance(a0, a1, cfg.b0, cfg.b1, c), cfg.d2, 1e-15);
    check_case(pack(a0, a1, cfg.b0, cfg.b1), c);
  }
}

TEST(DistanceEdgeEdge, ZeroLengthEdges) {
  const Vec<3> a0(0, 0, 0), a1(1, 0, 0), p(0.5, 1, 1), q(3, 0, 0);
  EXPECT_NEAR(classified(a0, a1, p, p), 2.0, 1e-15);
  EXPECT_NEAR(classified(p, p, a0, a1), 2.0, 1e-15);
  EXPECT_NEAR(classified(p, p, q, q), (p - q).squaredNorm(), 1e-15);
}

}  // namespace test_distance_edge_edge
