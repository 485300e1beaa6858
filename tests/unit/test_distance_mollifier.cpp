// Edge–edge mollifier: c = ‖a × b‖² and m(c(x)) with gradient and Hessian against central differences, the
// threshold ε×, and m's continuity (value and slope) at c = ε×.
#include <gtest/gtest.h>

#include <cmath>

#include "../support/finite_difference.hpp"
#include "percussion/geometry/distance/edge_edge_mollifier.hpp"

namespace test_distance_mollifier {

using namespace percussion::geometry;
using percussion::test::expect_derivatives;

namespace {
Vec<3> at(const Vec<12>& x, int i) { return percussion::test::point<3>(x, i); }
}  // namespace

TEST(DistanceMollifier, CrossNormDerivativesMatchFiniteDifferences) {
  percussion::test::RandomPoints rnd;
  auto f = [](const Vec<12>& y) { return edge_edge_cross_squarednorm(at(y, 0), at(y, 1), at(y, 2), at(y, 3)); };
  auto g = [](const Vec<12>& y) {
    return edge_edge_cross_squarednorm_gradient(at(y, 0), at(y, 1), at(y, 2), at(y, 3));
  };
  auto H = [](const Vec<12>& y) {
    return edge_edge_cross_squarednorm_hessian(at(y, 0), at(y, 1), at(y, 2), at(y, 3));
  };
  for (int k = 0; k < 10; ++k) expect_derivatives<12>(f, g, H, rnd.vec<12>(), 1e-6, 1e-8);
}

TEST(DistanceMollifier, ThresholdAndContinuityAtThreshold) {
  const Vec<3> o = Vec<3>::Zero();
  EXPECT_DOUBLE_EQ(edge_edge_mollifier_threshold(o, Vec<3>(2, 0, 0), o, Vec<3>(0, 3, 0)), 1e-3 * 4.0 * 9.0);
  const double eps = 0.036;
  EXPECT_DOUBLE_EQ(mollifier(0.0, eps), 0.0);
  EXPECT_DOUBLE_EQ(mollifier(0.5 * eps, eps), 0.75);
  EXPECT_NEAR(mollifier(eps * (1 - 1e-9), eps), 1.0, 1e-15);
  EXPECT_DOUBLE_EQ(mollifier(eps, eps), 1.0);
  EXPECT_NEAR(mollifier_derivative(eps * (1 - 1e-9), eps), 0.0, 1e-7);
  EXPECT_DOUBLE_EQ(mollifier_derivative(eps, eps), 0.0);
  EXPECT_DOUBLE_EQ(mollifier_derivative(0.0, eps), 2.0 / eps);
  // m' is the derivative of m (central differences inside (0, ε×)).
  for (double c : {0.1 * eps, 0.5 * eps, 0.9 * eps}) {
    const double hh = 1e-7 * eps;
    EXPECT_NEAR(mollifier_derivative(c, eps), (mollifier(c + hh, eps) - mollifier(c - hh, eps)) / (2 * hh),
                1e-6 / eps);
    EXPECT_NEAR(mollifier_second_derivative(c, eps),
                (mollifier_derivative(c + hh, eps) - mollifier_derivative(c - hh, eps)) / (2 * hh),
                1e-6 / (eps * eps));
  }
}

// Nearly parallel edges (c < ε×): the mollifier's derivatives on the 12 dofs.
TEST(DistanceMollifier, MollifierDerivativesMatchFiniteDifferences) {
  const double theta = 0.01;
  Vec<12> x;
  x << 0, 0, 0, 1, 0, 0, 0.2, 0.1, 0.3, 0.2 + std::cos(theta), 0.1 + std::sin(theta), 0.3 + 0.5 * theta;
  const double eps = edge_edge_mollifier_threshold(at(x, 0), at(x, 1), at(x, 2), at(x, 3));
  ASSERT_LT(edge_edge_cross_squarednorm(at(x, 0), at(x, 1), at(x, 2), at(x, 3)), eps);
  auto f = [eps](const Vec<12>& y) { return edge_edge_mollifier(at(y, 0), at(y, 1), at(y, 2), at(y, 3), eps); };
  auto g = [eps](const Vec<12>& y) {
    return edge_edge_mollifier_gradient(at(y, 0), at(y, 1), at(y, 2), at(y, 3), eps);
  };
  EXPECT_GT(f(x), 0.0);
  EXPECT_LT(f(x), 1.0);
  auto H = [eps](const Vec<12>& y) {
    return edge_edge_mollifier_hessian(at(y, 0), at(y, 1), at(y, 2), at(y, 3), eps);
  };
  expect_derivatives<12>(f, g, H, x, 1e-7, 1e-6);
  // Far from parallel the mollifier is 1 with zero derivatives.
  Vec<12> y = x;
  y.segment<3>(9) << 0.2, 1.1, 0.3;
  EXPECT_DOUBLE_EQ(f(y), 1.0);
  EXPECT_EQ(g(y).norm(), 0.0);
}

}  // namespace test_distance_mollifier
