// The contact pair layer's uniform 12-dof evaluation: derivatives of every pair type against central differences
// of its value, the vertex–plane barrier on the square of the signed offset, and the counting rule (a vertex
// facing a triangle fan's shared vertex is that vertex–vertex contact once per pair, with the pairs' weights).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "percussion/geometry/distance/point_point.hpp"
#include "percussion/physics/ipc/contact_pair.hpp"

namespace test_ipc_contact_pair {

namespace {

using namespace percussion::ipc;

struct Case {
  ContactPair pair;
  int dim;
  std::vector<double> x;
};

std::vector<HalfPlane> planes() { return {HalfPlane{Eigen::Vector3d(0.1, -0.2, 0.05), Eigen::Vector3d(0, 0.6, 0.8)}}; }

std::vector<Case> cases() {
  return {
      {{PairType::PointEdge2D, {0, 1, 2, -1}, 0.3, 0}, 2, {0.31, 0.06, 0.0, 0.0, 1.0, 0.02}},
      {{PairType::PointEdge2D, {0, 1, 2, -1}, 0.3, 0}, 2, {-0.04, 0.05, 0.0, 0.0, 1.0, 0.02}},  // past e0
      {{PairType::PointTriangle, {0, 1, 2, 3}, 0.2, 0}, 3, {0.3, 0.2, 0.07, 0, 0, 0, 1, 0, 0, 0, 1, 0.01}},
      {{PairType::PointTriangle, {0, 1, 2, 3}, 0.2, 0}, 3, {-0.03, -0.02, 0.06, 0, 0, 0, 1, 0, 0, 0, 1, 0.01}},
      {{PairType::EdgeEdge, {0, 1, 2, 3}, 0.25, 1e-3}, 3, {0, 0, 0, 1, 0.1, 0, 0.4, -0.5, 0.05, 0.5, 0.5, 0.08}},
      {{PairType::EdgeEdge, {0, 1, 2, 3}, 0.25, 1e-1}, 3, {0, 0, 0, 1, 0, 0, 0.2, 0.06, 0.05, 1.2, 0.08, 0.05}},
      {{PairType::PointPlane, {0, 0, -1, -1}, 0.4, 0}, 3, {0.3, -0.15, 0.05}},
      {{PairType::PointPlane, {0, 0, -1, -1}, 0.4, 0}, 2, {0.3, -0.13}},
  };
}

TEST(IpcContactPair, DerivativesMatchCentralDifferences) {
  const double dhat2 = 0.1 * 0.1, kappa = 2.5, h = 1e-7;
  for (const Case& c : cases()) {
    const int n = stencil_size(c.pair.type) * c.dim;
    ASSERT_EQ(static_cast<int>(c.x.size()), n);
    const PairEnergy<12> e = pair_barrier(c.pair, c.dim, c.x, planes(), dhat2, kappa);
    ASSERT_GT(e.value, 0) << static_cast<int>(c.pair.type);
    for (int i = 0; i < n; ++i) {
      std::vector<double> p(c.x), m(c.x);
      p[i] += h;
      m[i] -= h;
      const PairEnergy<12> ep = pair_barrier(c.pair, c.dim, p, planes(), dhat2, kappa);
      const PairEnergy<12> em = pair_barrier(c.pair, c.dim, m, planes(), dhat2, kappa);
      EXPECT_NEAR(e.gradient[i], (ep.value - em.value) / (2 * h), 1e-6 * e.gradient.norm())
          << "type " << static_cast<int>(c.pair.type) << " dof " << i;
      for (int j = 0; j < n; ++j)
        EXPECT_NEAR(e.hessian(j, i), (ep.gradient[j] - em.gradient[j]) / (2 * h), 1e-6 * e.hessian.norm())
            << "type " << static_cast<int>(c.pair.type) << " entry " << j << ", " << i;
    }
    for (int i = n; i < 12; ++i) EXPECT_EQ(e.gradient[i], 0.0);
    EXPECT_NEAR(pair_barrier_value(c.pair, c.dim, c.x, planes(), dhat2, kappa), e.value, 1e-15 * e.value);
  }
}

TEST(IpcContactPair, PlaneBarrierIsTheBarrierOfTheSquaredOffset) {
  const Case c = cases()[6];
  const double s = planes()[0].normal.dot(Eigen::Vector3d(0.3, -0.15, 0.05) - planes()[0].point);
  ASSERT_GT(s, 0);
  EXPECT_DOUBLE_EQ(pair_distance2(c.pair, 3, c.x, planes()), s * s);
  EXPECT_DOUBLE_EQ(pair_barrier(c.pair, 3, c.x, planes(), 0.01, 2.0).value, 2.0 * 0.4 * barrier(s * s, 0.01));
  // Behind the plane: negative squared distance and an infinite barrier.
  const std::vector<double> behind{0.1, -0.5, 0.0};
  EXPECT_LT(pair_distance2(c.pair, 3, behind, planes()), 0);
  EXPECT_TRUE(std::isinf(pair_barrier(c.pair, 3, behind, planes(), 0.01, 2.0).value));
}

TEST(IpcContactPair, AFanVertexContactCountsOncePerPairWithItsWeight) {
  // Six triangles around vertex 1 at the origin; the point 0 hovers above it, so every pair is point–point.
  std::vector<double> x{0.0, 0.0, 0.03, 0, 0, 0};
  for (int k = 0; k < 6; ++k) {
    x.push_back(std::cos(k * M_PI / 3));
    x.push_back(std::sin(k * M_PI / 3));
    x.push_back(0.0);
  }
  const double area = 0.8, dhat2 = 0.05 * 0.05;
  double total = 0;
  for (int k = 0; k < 6; ++k) {
    const ContactPair pair{PairType::PointTriangle, {0, 1, 2 + k, 2 + (k + 1) % 6}, area / 4, 0};
    total += pair_barrier(pair, 3, x, {}, dhat2, 1.0).value;
  }
  EXPECT_NEAR(total, 6 * area / 4 * barrier(0.03 * 0.03, dhat2), 1e-14);
}

}  // namespace

}  // namespace test_ipc_contact_pair
