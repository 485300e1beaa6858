// Woven-cloth generator: yarn chains of touching spheres, touching at every crossing, nothing overlapping.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "percussion/core/error.hpp"
#include "percussion/methods/bdem/scene.hpp"
#include "percussion/geometry/bonding.hpp"
#include "percussion/geometry/hcp.hpp"
#include "percussion/geometry/woven.hpp"

namespace test_woven {

using namespace percussion;
using geometry::woven_fill;
using geometry::woven_layout;

namespace {

constexpr double kR = 1e-3;  // particle radius; not 1 so that missing factors of r show up

Generator woven(Eigen::Vector3d min, double lx, double ly, double spacing) {
  Generator g;
  g.shape = Generator::Shape::Woven;
  g.particle_radius = kR;
  g.min = min;
  g.size = Eigen::Vector2d(lx, ly);
  g.spacing = spacing;
  return g;
}

// 7 x 5 yarns at the requested spacing 9r.
Generator cloth() {
  const double s = geometry::woven_layout(woven(Eigen::Vector3d::Zero(), 1.0, 1.0, 9.0 * kR)).spacing;
  return woven(Eigen::Vector3d(0.3, -0.2, 0.05), 6.0 * s + 2.0 * kR + 0.5 * kR, 4.0 * s + 2.0 * kR + 0.1 * kR,
               9.0 * kR);
}

// Arc length of the crimp curve r cos(π x / s) over one half-wave, by composite Simpson.
double half_wave_arc(double r, double s) {
  const int n = 20000;
  const double h = s / n;
  auto f = [&](double x) {
    const double dz = -r * std::numbers::pi / s * std::sin(std::numbers::pi * x / s);
    return std::sqrt(1.0 + dz * dz);
  };
  double sum = f(0.0) + f(s);
  for (int i = 1; i < n; ++i) sum += f(i * h) * (i % 2 ? 4.0 : 2.0);
  return sum * h / 3.0;
}

}  // namespace

TEST(Woven, ConsecutiveSpheresAlongEveryYarnTouch) {
  const Generator g = cloth();
  const auto w = woven_layout(g);
  const auto p = woven_fill(g);
  const long warp_len = (w.weft - 1) * w.steps + 1, weft_len = (w.warp - 1) * w.steps + 1;
  long checked = 0;
  auto check_yarn = [&](long first, long len) {
    for (long k = first; k + 1 < first + len; ++k) {
      EXPECT_NEAR((p[k + 1] - p[k]).norm() / (2.0 * kR), 1.0, 1e-9) << "sphere " << k;
      ++checked;
    }
  };
  for (long j = 0; j < w.warp; ++j) check_yarn(j * warp_len, warp_len);
  for (long i = 0; i < w.weft; ++i) check_yarn(w.warp * warp_len + i * weft_len, weft_len);
  EXPECT_EQ(checked, w.warp * (w.weft - 1) * w.steps + w.weft * (w.warp - 1) * w.steps);
}

TEST(Woven, CountsAndExtentMatchTheLayout) {
  const Generator g = cloth();
  const auto w = woven_layout(g);
  EXPECT_EQ(w.weft, 7);
  EXPECT_EQ(w.warp, 5);
  const auto p = woven_fill(g);
  EXPECT_EQ(static_cast<long>(p.size()), 5 * (6 * w.steps + 1) + 7 * (4 * w.steps + 1));
  EXPECT_EQ(static_cast<long>(p.size()), w.particles());
  Eigen::Vector3d lo = p[0], hi = p[0];
  for (const auto& x : p) {
    lo = lo.cwiseMin(x);
    hi = hi.cwiseMax(x);
  }
  // Spheres span [min, min + (6s + 2r, 4s + 2r, 4r)]: centres from min + (r, r, r) to the last crossing.
  const double s = w.spacing;
  EXPECT_LT((lo - (g.min + Eigen::Vector3d::Constant(kR))).norm(), 1e-12);
  EXPECT_LT((hi - (g.min + Eigen::Vector3d(6.0 * s + kR, 4.0 * s + kR, 3.0 * kR))).norm(), 1e-12);
}

TEST(Woven, SpacingIsTheNearestExactChainOfChords) {
  for (double req : {4.0, 5.3, 8.0, 9.0, 12.7, 20.0}) {
    const auto w = woven_layout(woven(Eigen::Vector3d::Zero(), 1.0, 1.0, req * kR));
    const double s = w.spacing;
    SCOPED_TRACE("requested spacing " + std::to_string(req) + " r, realised " + std::to_string(s / kR) + " r");
    ASSERT_GE(w.steps, 3);
    EXPECT_GT(s, 4.0 * kR);
    EXPECT_LT(std::abs(s - req * kR), 2.0 * kR);
    // n inscribed chords of 2r are a bit shorter than the curve: 2rn < arc < 2rn (1 + 1%).
    const double arc = half_wave_arc(kR, s);
    EXPECT_LT(2.0 * kR * w.steps, arc);
    EXPECT_GT(2.0 * kR * w.steps * 1.01, arc);
    // The half wave runs from the top of one crossing to the bottom of the next, along the crimp curve.
    ASSERT_EQ(static_cast<int>(w.half_wave.size()), w.steps + 1);
    EXPECT_EQ(w.half_wave.front(), Eigen::Vector2d(0.0, kR));
    EXPECT_EQ(w.half_wave.back(), Eigen::Vector2d(s, -kR));
    for (const auto& h : w.half_wave) EXPECT_NEAR(h.y(), kR * std::cos(std::numbers::pi * h.x() / s), 1e-15);
    // One realisable spacing per interval (2r(n-1), 2rn); asking for it again returns it.
    EXPECT_GT(s, 2.0 * kR * (w.steps - 1));
    EXPECT_LT(s, 2.0 * kR * w.steps);
    const auto again = woven_layout(woven(Eigen::Vector3d::Zero(), 1.0, 1.0, s));
    EXPECT_EQ(again.steps, w.steps);
    EXPECT_NEAR(again.spacing, s, 1e-15);
  }
}

TEST(Woven, NoTwoSpheresOverlap) {
  const auto p = woven_fill(cloth());
  double closest = INFINITY;
  for (std::size_t i = 0; i < p.size(); ++i)
    for (std::size_t j = i + 1; j < p.size(); ++j) closest = std::min(closest, (p[i] - p[j]).norm());
  EXPECT_GE(closest, 2.0 * kR * (1.0 - 1e-9));
  EXPECT_LE(closest, 2.0 * kR * (1.0 + 1e-9));  // and some do touch
}

TEST(Woven, CrossingYarnsTouchOverAndUnderAlternately) {
  const Generator g = cloth();
  const auto w = woven_layout(g);
  const auto p = woven_fill(g);
  const long warp_len = (w.weft - 1) * w.steps + 1, weft_len = (w.warp - 1) * w.steps + 1;
  for (long i = 0; i < w.weft; ++i) {
    for (long j = 0; j < w.warp; ++j) {
      const Eigen::Vector3d& a = p[j * warp_len + i * w.steps];             // warp j at crossing i
      const Eigen::Vector3d& b = p[w.warp * warp_len + i * weft_len + j * w.steps];  // weft i at crossing j
      EXPECT_NEAR((a - b).norm() / (2.0 * kR), 1.0, 1e-9) << "crossing " << i << ", " << j;
      EXPECT_NEAR(a.x(), b.x(), 1e-12);
      EXPECT_NEAR(a.y(), b.y(), 1e-12);
      // Warp j is on top where i + j is even.
      EXPECT_NEAR((a.z() - b.z()) / (2.0 * kR), (i + j) % 2 == 0 ? 1.0 : -1.0, 1e-9);
    }
  }
}

TEST(Woven, BondFinderBondsExactlyTheChainsAndTheCrossings) {
  const Generator g = cloth();
  const auto w = woven_layout(g);
  const auto p = woven_fill(g);
  const std::vector<double> radii(p.size(), kR);
  const auto pairs = geometry::touching_pairs(p, radii, 0.02);
  const long chain = w.warp * (w.weft - 1) * w.steps + w.weft * (w.warp - 1) * w.steps;
  EXPECT_EQ(static_cast<long>(pairs.size()), chain + w.warp * w.weft);
  // Each crossing pair joins a warp sphere (index below warp * warp_len) to a weft sphere.
  const long warp_end = w.warp * ((w.weft - 1) * w.steps + 1);
  long crossing = 0;
  for (const auto& [i, j] : pairs) crossing += (i < warp_end) != (j < warp_end);
  EXPECT_EQ(crossing, w.warp * w.weft);
}

TEST(Woven, HcpFillDispatchesToTheWeave) {
  const Generator g = cloth();
  EXPECT_EQ(geometry::hcp_fill(g), woven_fill(g));
}

TEST(Woven, RejectsTooTightSpacingAndTooSmallCloth) {
  EXPECT_THROW(woven_layout(woven(Eigen::Vector3d::Zero(), 1.0, 1.0, 3.9 * kR)), InputError);
  EXPECT_THROW(woven_layout(woven(Eigen::Vector3d::Zero(), 1.0, 1.0, 1001.0 * kR)), InputError);
  EXPECT_THROW(woven_layout(woven(Eigen::Vector3d::Zero(), 1e30, 1e30, 8.0 * kR)), InputError);  // 2^31 cap
  const double s = woven_layout(woven(Eigen::Vector3d::Zero(), 1.0, 1.0, 8.0 * kR)).spacing;
  // Two yarns need s + 2r; just below that only one fits.
  EXPECT_THROW(woven_layout(woven(Eigen::Vector3d::Zero(), s + 1.9 * kR, 1.0, 8.0 * kR)), InputError);
  EXPECT_EQ(woven_layout(woven(Eigen::Vector3d::Zero(), s + 2.0 * kR, 1.0, 8.0 * kR)).weft, 2);
  Generator bad = woven(Eigen::Vector3d::Zero(), 1.0, 1.0, 8.0 * kR);
  bad.particle_radius = 0.0;
  EXPECT_THROW(woven_layout(bad), InputError);
}

TEST(Woven, SceneParsesTheWovenShape) {
  const std::string text = R"({"method": "bdem",
    "materials": [{"name": "yarn", "density": 1000, "youngs_modulus": 1e9, "tensile_strength": 1e7}],
    "bodies": [{"material": "yarn", "particle_radius": 0.001,
                "shape": {"type": "woven", "min": [0, 1, 2], "size": [0.1, 0.05], "spacing": 0.008}}],
    "time": {"end": 0.01}, "output": {"frame_interval": 0.001}})";
  const bdem::BdemScene s = bdem::parse_scene_text(text, "w.json");
  const Generator& g = s.bodies[0].generator;
  EXPECT_EQ(g.shape, Generator::Shape::Woven);
  EXPECT_EQ(g.min, Eigen::Vector3d(0, 1, 2));
  EXPECT_EQ(g.size, Eigen::Vector2d(0.1, 0.05));
  EXPECT_EQ(g.spacing, 0.008);
  auto bad = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    try {
      (void)bdem::parse_scene_text(t, "w.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(bad("[0.1, 0.05]", "[0.1, 0.05, 1]"),
            "w.json: /bodies/0/shape/size: expected an array of 2 numbers, got array [0.1,0.05,1]");
  EXPECT_NE(bad("[0.1, 0.05]", "[0.1, -0.05]").find("/bodies/0/shape/size/1"), std::string::npos);
  EXPECT_NE(bad("\"spacing\": 0.008", "\"spacing\": 0").find("/bodies/0/shape/spacing"), std::string::npos);
  EXPECT_NE(bad("\"spacing\": 0.008", "\"max\": [1, 1, 1]").find("/bodies/0/shape/max: unknown key"),
            std::string::npos);
}

}  // namespace test_woven
