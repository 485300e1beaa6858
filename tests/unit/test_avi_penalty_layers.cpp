// Nested penalty layers: each layer's force against a central difference of its energy, the reach 2η/l, the barrier
// (Σ of the active layers, closed form past 64 layers) against the plain sum, the energy of n fully compressed layers
// 2kη²n(n+1) that makes the family a barrier, time steps ∝ l^(−3/2); and a separating slab's exit time.
#include <gtest/gtest.h>

#include <cmath>

#include "percussion/geometry/separating_slab.hpp"
#include "percussion/physics/avi/penalty_layers.hpp"

namespace test_avi_penalty_layers {

using percussion::avi::PenaltyLayers;

TEST(AviPenaltyLayers, ForceIsTheEnergysDerivative) {
  const PenaltyLayers layers{0.1, 1000.0};
  for (std::int64_t l : {1, 2, 3, 7, 40}) {
    for (double fraction : {0.05, 0.3, 0.77, 0.999}) {
      const double d = fraction * layers.reach(l), h = 1e-7 * layers.reach(l);
      const double fd = (layers.energy(l, d + h) - layers.energy(l, d - h)) / (2 * h);
      EXPECT_NEAR(layers.derivative(l, d), fd, 1e-6 * std::abs(fd) + 1e-12) << l << " " << d;
      EXPECT_LT(layers.derivative(l, d), 0.0);
    }
    EXPECT_EQ(layers.energy(l, layers.reach(l)), 0.0);
    EXPECT_EQ(layers.derivative(l, 1.0001 * layers.reach(l)), 0.0);
    // Fully compressed, layer l stores 4kη²·l.
    EXPECT_NEAR(layers.energy(l, 0.0), 4 * 1000.0 * 0.01 * static_cast<double>(l), 1e-9 * static_cast<double>(l));
  }
}

TEST(AviPenaltyLayers, DeepestActiveLayerAndBarrier) {
  const PenaltyLayers layers{0.1, 2.5};
  EXPECT_EQ(layers.deepest_active(0.2), 0);
  EXPECT_EQ(layers.deepest_active(0.19999), 1);
  EXPECT_EQ(layers.deepest_active(0.1), 1);  // layer 2 acts below 2η/2 = 0.1, not at it
  EXPECT_EQ(layers.deepest_active(0.0999), 2);
  for (double d : {0.15, 0.05, 0.013, 2.1e-3, 7.7e-4, 1.3e-5}) {
    const std::int64_t n = layers.deepest_active(d);
    EXPECT_TRUE(layers.active(n, d));
    EXPECT_FALSE(layers.active(n + 1, d));
    double sum = 0;
    for (std::int64_t l = 1; l <= n; ++l) sum += layers.energy(l, d);
    EXPECT_NEAR(layers.barrier_energy(d), sum, 1e-10 * sum) << d << " " << n;
  }
  // The first n layers fully compressed store 2kη² n(n+1): unbounded, so no k lets the gap close.
  for (double n : {1.0, 10.0, 1000.0}) {
    double sum = 0;
    for (std::int64_t l = 1; l <= static_cast<std::int64_t>(n); ++l) sum += layers.energy(l, 0.0);
    EXPECT_NEAR(sum, 2 * 2.5 * 0.01 * n * (n + 1), 1e-9 * sum);
  }
  // Deep in the barrier (2·10⁶ layers) the closed form agrees with Σ l(ld − 2η)² ≈ kη²N²/3 (notes §2.10).
  const double n = static_cast<double>(layers.deepest_active(1e-7));
  EXPECT_NEAR(n, 2e6, 1.0);
  EXPECT_NEAR(layers.barrier_energy(1e-7), 2.5 * 0.01 * n * n / 3, 1e-5 * 2.5 * 0.01 * n * n / 3);
}

TEST(AviPenaltyLayers, StepsScaleWithTheLayersStiffness) {
  const PenaltyLayers layers{0.1, 8.0};
  const double h1 = layers.step(1, 2.0, 0.1);
  EXPECT_NEAR(h1, 0.1 * std::sqrt(2.0 / 16.0), 1e-15);
  for (std::int64_t l : {2, 5, 100}) EXPECT_NEAR(layers.step(l, 2.0, 0.1), h1 * std::pow(double(l), -1.5), 1e-15);
  // Deepest layer estimate (notes §2.10): N = (v/η) sqrt(3μ/(2k)).
  EXPECT_NEAR(layers.deepest_layer_estimate(1.0, 10.0), 100.0 * std::sqrt(3.0 / 16.0), 1e-12);
}

TEST(AviSeparatingSlab, ExitTimeOfMovingSpheres) {
  percussion::geometry::SeparatingSlab slab;
  slab.normal = Eigen::Vector3d(0, 0, 1);
  slab.offset = 1.0;
  slab.half = 0.1;
  const Eigen::Vector3d above(0.3, -2, 2.0), below(5, 5, 0.5);
  EXPECT_DOUBLE_EQ(slab.clearance(+1, above, 0.4), 2.0 - 1.0 - 0.4 - 0.1);
  EXPECT_DOUBLE_EQ(slab.clearance(-1, below, 0.2), 1.0 - 0.5 - 0.2 - 0.1);
  // Approaching at 2 along −z: the surface reaches the face after clearance / 2.
  EXPECT_DOUBLE_EQ(slab.exit_time(+1, above, 0.4, Eigen::Vector3d(7, 1, -2)), 0.5 / 2);
  EXPECT_TRUE(std::isinf(slab.exit_time(+1, above, 0.4, Eigen::Vector3d(1, 0, 0))));
  EXPECT_TRUE(std::isinf(slab.exit_time(-1, below, 0.2, Eigen::Vector3d(0, 0, -1))));
  EXPECT_DOUBLE_EQ(slab.exit_time(-1, below, 0.2, Eigen::Vector3d(0, 0, 0.8)), 0.2 / 0.8);
  EXPECT_EQ(slab.exit_time(+1, Eigen::Vector3d(0, 0, 1.2), 0.4, Eigen::Vector3d(0, 0, 1)), 0.0);  // already inside
}

}  // namespace test_avi_penalty_layers
