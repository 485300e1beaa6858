// HCP generator (notes 001 §4, test T15) and the bond finder on its output.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "percussion/core/error.hpp"
#include "percussion/geometry/bonding.hpp"
#include "percussion/geometry/cell_list.hpp"
#include "percussion/geometry/hcp.hpp"

namespace test_hcp {

using namespace percussion;
using geometry::hcp_fill;
using geometry::touching_pairs;

namespace {

constexpr double kR = 1e-3;  // particle radius; not 1 so that missing factors of r show up

Generator box(Eigen::Vector3d min, Eigen::Vector3d max) {
  Generator g;
  g.shape = Generator::Shape::Box;
  g.particle_radius = kR;
  g.min = min;
  g.max = max;
  return g;
}

Generator sphere(Eigen::Vector3d c, double R) {
  Generator g;
  g.shape = Generator::Shape::Sphere;
  g.particle_radius = kR;
  g.center = c;
  g.radius = R;
  return g;
}

Generator cylinder(Eigen::Vector3d base, Eigen::Vector3d axis, double R, double h) {
  Generator g;
  g.shape = Generator::Shape::Cylinder;
  g.particle_radius = kR;
  g.center = base;
  g.axis = axis.normalized();
  g.radius = R;
  g.height = h;
  return g;
}

// A 12 × 12 × 12-site block: 24r along x, 12 rows of √3 r (+ the odd layers' √3/3 r), 12 layers of 2√6/3 r.
Generator block12() {
  const Eigen::Vector3d min(-0.0137, 0.0021, 0.35);
  return box(min, min + kR * Eigen::Vector3d(24.0, 22.0, 20.0));
}

std::vector<double> radii(std::size_t n) { return std::vector<double>(n, kR); }

// No two spheres overlap: nothing closer than 2r (1 − 1e-12).
void expect_no_overlap(const std::vector<Eigen::Vector3d>& p) {
  geometry::CellList cells;
  cells.build(p, 2.0 * kR);
  long overlaps = 0;
  cells.for_each_pair(2.0 * kR * (1.0 - 1e-12), [&](std::size_t, std::size_t, double) { ++overlaps; });
  EXPECT_EQ(overlaps, 0);
}

}  // namespace

TEST(Hcp, InteriorParticlesHaveTwelveTouchingNeighbours) {
  const Generator g = block12();
  const auto p = hcp_fill(g);
  ASSERT_GT(p.size(), 1000u);
  const auto pairs = touching_pairs(p, radii(p.size()), 0.02);
  std::vector<int> degree(p.size(), 0);
  for (const auto& [i, j] : pairs) {
    // Every bond of the lattice is an exact contact; the next shell (2√2 r) is far outside 2r·1.02.
    EXPECT_NEAR((p[j] - p[i]).norm() / (2.0 * kR), 1.0, 1e-12);
    ++degree[i];
    ++degree[j];
  }
  long interior = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double to_face = std::min((p[i] - g.min).minCoeff(), (g.max - p[i]).minCoeff());
    EXPECT_LE(degree[i], 12);
    if (to_face >= 4.0 * kR) {  // two spacings from every face
      EXPECT_EQ(degree[i], 12) << "particle " << i;
      ++interior;
    }
  }
  EXPECT_GT(interior, 200);
}

TEST(Hcp, BoxFillIsAnchoredAtTheMinCornerAndOrdered) {
  const Generator g = block12();
  const auto p = hcp_fill(g);
  Eigen::Vector3d lo = p[0], hi = p[0];
  for (const auto& x : p) {
    lo = lo.cwiseMin(x);
    hi = hi.cwiseMax(x);
  }
  // First sphere touches the three min faces; the block is 12 spheres wide in x, 12 rows, 12 layers.
  EXPECT_LT((p[0] - (g.min + Eigen::Vector3d::Constant(kR))).norm(), 1e-12);
  EXPECT_LT((lo - (g.min + Eigen::Vector3d::Constant(kR))).norm(), 1e-12);
  EXPECT_NEAR((hi.x() - lo.x()) / kR, 22.0, 1e-9);
  EXPECT_NEAR((hi.y() - lo.y()) / kR, std::sqrt(3.0) * (11.0 + 1.0 / 3.0), 1e-9);
  EXPECT_NEAR((hi.z() - lo.z()) / kR, 11.0 * 2.0 * std::sqrt(6.0) / 3.0, 1e-9);
  // Per layer: 6 rows of 12 and 6 rows of 11 (odd rows shifted by r lose their last sphere).
  EXPECT_EQ(p.size(), 12u * (6u * 12u + 6u * 11u));
  // k outer, j, i inner: z never decreases along the array.
  for (std::size_t i = 1; i < p.size(); ++i) ASSERT_LE(p[i - 1].z(), p[i].z() + 1e-15);
}

TEST(Hcp, BondLaplacianLargestEigenvalueIsSixteen) {
  const auto p = hcp_fill(block12());
  const auto pairs = touching_pairs(p, radii(p.size()), 0.02);
  const std::size_t n = p.size();
  auto apply = [&](const Eigen::VectorXd& x) {
    Eigen::VectorXd y = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(n));
    for (const auto& [i, j] : pairs) {
      const double d = x[i] - x[j];
      y[i] += d;
      y[j] -= d;
    }
    return y;
  };
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::VectorXd x(static_cast<Eigen::Index>(n));
  for (auto& v : x) v = u(rng);
  x.normalize();
  double lambda = 0;
  for (int it = 0; it < 2000; ++it) {
    Eigen::VectorXd y = apply(x);
    lambda = x.dot(y);  // Rayleigh quotient, |x| = 1
    x = y.normalized();
  }
  RecordProperty("lambda_max", std::to_string(lambda));
  EXPECT_NEAR(lambda, 16.0, 0.16);
}

TEST(Hcp, AllSpheresLieInsideTheirShape) {
  const double slack = 1e-9 * kR;
  {
    const Generator g = box(Eigen::Vector3d(-0.01, -0.02, 0.003), Eigen::Vector3d(0.0031, -0.0077, 0.0171));
    const auto p = hcp_fill(g);
    ASSERT_FALSE(p.empty());
    for (const auto& x : p) {
      EXPECT_GE((x - g.min).minCoeff(), kR - slack);
      EXPECT_GE((g.max - x).minCoeff(), kR - slack);
    }
    expect_no_overlap(p);
  }
  {
    const Generator g = sphere(Eigen::Vector3d(0.3, -0.2, 0.1), 7.3 * kR);
    const auto p = hcp_fill(g);
    ASSERT_FALSE(p.empty());
    for (const auto& x : p) EXPECT_LE((x - g.center).norm(), g.radius - kR + slack);
    expect_no_overlap(p);
  }
  {
    const Generator g = cylinder(Eigen::Vector3d(0.01, 0.02, -0.03), Eigen::Vector3d(1.0, -2.0, 3.0), 5.5 * kR,
                                 13.0 * kR);
    const auto p = hcp_fill(g);
    ASSERT_FALSE(p.empty());
    for (const auto& x : p) {
      const double axial = (x - g.center).dot(g.axis);
      const double radial = ((x - g.center) - axial * g.axis).norm();
      EXPECT_LE(radial, g.radius - kR + slack);
      EXPECT_GE(axial, kR - slack);
      EXPECT_LE(axial, g.height - kR + slack);
    }
    expect_no_overlap(p);
  }
}

TEST(Hcp, TiltedCylinderIsTheRotatedUprightOne) {
  const Eigen::Vector3d base(0.01, 0.02, -0.03);
  const Generator up = cylinder(base, Eigen::Vector3d::UnitZ(), 6.2 * kR, 11.0 * kR);
  const Generator tilted = cylinder(base, Eigen::Vector3d(-0.3, 0.5, 0.2), 6.2 * kR, 11.0 * kR);
  const auto a = hcp_fill(up);
  const auto b = hcp_fill(tilted);
  ASSERT_EQ(a.size(), b.size());
  Eigen::Vector3d e1, e2;
  geometry::frame_from_axis(tilted.axis, e1, e2);
  Eigen::Matrix3d F;
  F << e1, e2, tilted.axis;
  EXPECT_LT((F.transpose() * F - Eigen::Matrix3d::Identity()).norm(), 1e-14);
  EXPECT_NEAR(F.determinant(), 1.0, 1e-14);
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_LT((base + F * (a[i] - base) - b[i]).norm(), 1e-12 * (1.0 + base.norm())) << i;
  }
  // The upright base layer rests on the base: its centres sit exactly r above it.
  EXPECT_NEAR(a[0].z() - base.z(), kR, 1e-15);
}

TEST(Hcp, SphereFillHasClosePackingDensity) {
  // Centres are confined to the ball of radius R − r, so the expected count is the HCP fraction
  // π/(3√2) ≈ 0.7405 of that ball's volume over one sphere's volume.
  for (const double R_over_r : {10.0, 20.0}) {
    const auto p = hcp_fill(sphere(Eigen::Vector3d(1.0, 2.0, 3.0), R_over_r * kR));
    const double expected = std::numbers::pi / (3.0 * std::sqrt(2.0)) * std::pow(R_over_r - 1.0, 3);
    RecordProperty("count_R" + std::to_string(static_cast<int>(R_over_r)), static_cast<int>(p.size()));
    EXPECT_NEAR(static_cast<double>(p.size()) / expected, 1.0, 0.05) << "R/r = " << R_over_r;
  }
}

TEST(Hcp, ShapesTooSmallForOneSphereAreInputErrors) {
  auto expect_error = [](const Generator& g, const std::string& prefix) {
    try {
      (void)hcp_fill(g);
      ADD_FAILURE() << "no error for " << prefix;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
    }
  };
  expect_error(box(Eigen::Vector3d::Zero(), kR * Eigen::Vector3d(10.0, 1.99, 10.0)), "box: no particle fits");
  expect_error(sphere(Eigen::Vector3d::Zero(), 0.99 * kR), "sphere: no particle fits");
  expect_error(cylinder(Eigen::Vector3d::Zero(), Eigen::Vector3d::UnitX(), 5.0 * kR, 1.5 * kR),
               "cylinder: no particle fits");
  expect_error(cylinder(Eigen::Vector3d::Zero(), Eigen::Vector3d::UnitY(), 0.9 * kR, 5.0 * kR),
               "cylinder: no particle fits");
  // Exactly one sphere's size fits exactly one sphere.
  EXPECT_EQ(hcp_fill(box(Eigen::Vector3d::Zero(), Eigen::Vector3d::Constant(2.0 * kR))).size(), 1u);
  EXPECT_EQ(hcp_fill(sphere(Eigen::Vector3d::Zero(), kR)).size(), 1u);
}

TEST(Bonding, TouchingPairsMatchBruteForceWithMixedRadii) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> pos(-0.02, 0.02), rad(0.5e-3, 2e-3);
  std::vector<Eigen::Vector3d> p(1500);
  std::vector<double> r(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    p[i] = Eigen::Vector3d(pos(rng), pos(rng), pos(rng));
    r[i] = rad(rng);
  }
  const double tol = 0.03;
  std::vector<std::array<std::int64_t, 2>> brute;
  for (std::size_t i = 0; i < p.size(); ++i) {
    for (std::size_t j = i + 1; j < p.size(); ++j) {
      const double s = (r[i] + r[j]) * (1.0 + tol);
      if ((p[j] - p[i]).squaredNorm() <= s * s) brute.push_back({std::int64_t(i), std::int64_t(j)});
    }
  }
  ASSERT_GT(brute.size(), 100u);
  EXPECT_EQ(touching_pairs(p, r, tol), brute);  // brute force is generated sorted by (i, j)
  EXPECT_THROW(touching_pairs(p, std::span<const double>(r).first(3), tol), std::invalid_argument);
}

}  // namespace test_hcp
