// Squared point–point distance, 2D and 3D: a known value, and gradient and Hessian against central differences.
#include <gtest/gtest.h>

#include "../support/finite_difference.hpp"
#include "percussion/geometry/distance/point_point.hpp"

namespace test_distance_point_point {

using namespace percussion::geometry;

namespace {

template <int D>
void check_random(int cases) {
  percussion::test::RandomPoints rnd;
  for (int k = 0; k < cases; ++k) {
    const Vec<2 * D> x = rnd.vec<2 * D>();
    auto f = [](const Vec<2 * D>& y) { return point_point_distance<D>(y.template head<D>(), y.template tail<D>()); };
    auto g = [](const Vec<2 * D>& y) {
      return point_point_distance_gradient<D>(y.template head<D>(), y.template tail<D>());
    };
    auto H = [](const Vec<2 * D>& y) {
      return point_point_distance_hessian<D>(y.template head<D>(), y.template tail<D>());
    };
    percussion::test::expect_derivatives<2 * D>(f, g, H, x, 1e-6, 1e-8);
  }
}

}  // namespace

TEST(DistancePointPoint, KnownValue) {
  EXPECT_DOUBLE_EQ(point_point_distance<2>(Vec<2>(1, 2), Vec<2>(4, 6)), 25.0);
  EXPECT_DOUBLE_EQ(point_point_distance<3>(Vec<3>(1, 2, 3), Vec<3>(2, 4, 5)), 9.0);
}

TEST(DistancePointPoint, DerivativesMatchFiniteDifferences) {
  check_random<2>(20);
  check_random<3>(20);
}

}  // namespace test_distance_point_point
