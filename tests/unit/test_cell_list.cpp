// Hash-grid cell list against O(n²) brute force, on awkward point sets.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "percussion/geometry/cell_list.hpp"
#include "percussion/geometry/hcp.hpp"

// Counting global allocations lets the test prove that rebuilding and enumerating reuse storage.
namespace {
std::atomic<long> g_allocations{0};
}
void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
// The nothrow form too: otherwise a library's nothrow allocation (the sanitizer's own) would reach our delete.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n == 0 ? 1 : n);
}
// Out of line, so GCC does not pair the inlined malloc/free across the replaced operators and warn.
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }

using percussion::geometry::CellList;

namespace {

using Pair = std::tuple<std::size_t, std::size_t, double>;

std::vector<Pair> brute_pairs(const std::vector<Eigen::Vector3d>& p, double cutoff) {
  std::vector<Pair> out;
  for (std::size_t i = 0; i < p.size(); ++i) {
    for (std::size_t j = i + 1; j < p.size(); ++j) {
      const double d2 = (p[j] - p[i]).squaredNorm();
      if (d2 < cutoff * cutoff) out.emplace_back(i, j, d2);
    }
  }
  return out;
}

std::vector<Pair> grid_pairs(const CellList& cells, double cutoff) {
  std::vector<Pair> out;
  cells.for_each_pair(cutoff, [&](std::size_t i, std::size_t j, double d2) {
    EXPECT_LT(i, j);
    out.emplace_back(i, j, d2);
  });
  return out;
}

std::vector<Eigen::Vector3d> cloud(std::uint64_t seed, std::size_t n, Eigen::Vector3d centre, double half_width) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-half_width, half_width);
  std::vector<Eigen::Vector3d> p(n);
  for (auto& x : p) x = centre + Eigen::Vector3d(u(rng), u(rng), u(rng));
  return p;
}

struct Case {
  std::string name;
  std::vector<Eigen::Vector3d> points;
  double cell, cutoff;
};

std::vector<Case> cases() {
  std::vector<Case> c;
  c.push_back({"uniform", cloud(1, 2000, Eigen::Vector3d::Zero(), 10.0), 1.5, 1.5});
  c.push_back({"negative, cutoff below cell", cloud(2, 2000, Eigen::Vector3d(-300, -7, -1e3), 8.0), 2.0, 1.2});
  c.push_back({"cutoff spans 3 cells", cloud(3, 1500, Eigen::Vector3d(5, -5, 5), 6.0), 0.4, 1.1});
  c.push_back({"large coordinates", cloud(4, 2000, Eigen::Vector3d(3e7, -2e7, 1e7), 12.0), 1.3, 1.3});
  // A dense cluster plus far-flung fragments: a bounding-box grid would collapse into a few cells here.
  auto far = cloud(5, 1800, Eigen::Vector3d::Zero(), 5.0);
  for (auto& x : cloud(6, 200, Eigen::Vector3d::Zero(), 1e9)) far.push_back(x);
  far.push_back(Eigen::Vector3d(1e15, 1e15, -1e15));
  far.push_back(Eigen::Vector3d(1e15, 1e15, -1e15) + Eigen::Vector3d(0.1, 0, 0));  // a pair out there too
  c.push_back({"far outliers", far, 1.0, 1.0});
  // Many coincident points (one crowded cell) and exact lattice spacing.
  std::vector<Eigen::Vector3d> dup(300, Eigen::Vector3d(1, 2, 3));
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < 10; ++j)
      for (int k = 0; k < 10; ++k) dup.emplace_back(i, j, k);
  c.push_back({"duplicates and lattice", dup, 1.0, 1.01});
  return c;
}

}  // namespace

TEST(CellList, PairsEqualBruteForce) {
  CellList cells;
  for (const Case& c : cases()) {
    cells.build(c.points, c.cell);
    auto got = grid_pairs(cells, c.cutoff);
    auto want = brute_pairs(c.points, c.cutoff);
    ASSERT_GT(want.size(), 50u) << c.name;
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got.size(), want.size()) << c.name;
    EXPECT_TRUE(got == want) << c.name;  // same pairs, each once, with the same squared distances
  }
}

TEST(CellList, NearEqualsBruteForce) {
  CellList cells;
  std::mt19937_64 rng(9);
  for (const Case& c : cases()) {
    cells.build(c.points, c.cell);
    // Queries at the points themselves, near them, and far outside the bounding box.
    std::vector<Eigen::Vector3d> queries;
    for (std::size_t i = 0; i < c.points.size(); i += 37) queries.push_back(c.points[i]);
    for (const auto& q : cloud(rng(), 50, c.points[0], 5.0)) queries.push_back(q);
    queries.push_back(c.points[0] + Eigen::Vector3d(1e12, -1e12, 0));
    queries.push_back(Eigen::Vector3d::Constant(-1e18));
    long total = 0;
    for (const auto& q : queries) {
      std::vector<std::pair<std::size_t, double>> got, want;
      cells.for_each_near(q, c.cutoff, [&](std::size_t i, double d2) { got.emplace_back(i, d2); });
      for (std::size_t i = 0; i < c.points.size(); ++i) {
        const double d2 = (c.points[i] - q).squaredNorm();
        if (d2 < c.cutoff * c.cutoff) want.emplace_back(i, d2);
      }
      std::sort(got.begin(), got.end());
      ASSERT_TRUE(got == want) << c.name;
      total += static_cast<long>(want.size());
    }
    EXPECT_GT(total, 0) << c.name;
  }
}

TEST(CellList, VisitingOrderIsDeterministic) {
  const auto p = cloud(21, 3000, Eigen::Vector3d(1, 1, 1), 9.0);
  CellList a, b;
  a.build(p, 1.4);
  b.build(cloud(22, 500, Eigen::Vector3d::Zero(), 3.0), 0.7);  // different history, same final input
  b.build(p, 1.4);
  std::vector<Pair> va, vb;
  a.for_each_pair(1.4, [&](std::size_t i, std::size_t j, double d2) { va.emplace_back(i, j, d2); });
  b.for_each_pair(1.4, [&](std::size_t i, std::size_t j, double d2) { vb.emplace_back(i, j, d2); });
  ASSERT_FALSE(va.empty());
  EXPECT_TRUE(va == vb);
}

TEST(CellList, RebuildAndEnumerationDoNotAllocate) {
  const auto p = cloud(31, 4000, Eigen::Vector3d::Zero(), 10.0);
  const auto q = cloud(32, 3000, Eigen::Vector3d(50, 0, 0), 10.0);
  CellList cells;
  cells.build(p, 1.0);
  long pairs = 0;
  const long before = g_allocations.load();
  cells.build(p, 1.0);
  cells.build(q, 1.0);  // fewer points: storage is reused
  cells.for_each_pair(1.0, [&](std::size_t, std::size_t, double) { ++pairs; });
  cells.for_each_near(q[0], 2.5, [&](std::size_t, double) { ++pairs; });
  EXPECT_EQ(g_allocations.load() - before, 0);
  EXPECT_GT(pairs, 0);
}

TEST(CellList, EdgeCases) {
  CellList cells;
  cells.build(std::vector<Eigen::Vector3d>{}, 1.0);
  long calls = 0;
  cells.for_each_pair(1.0, [&](std::size_t, std::size_t, double) { ++calls; });
  cells.for_each_near(Eigen::Vector3d::Zero(), 1.0, [&](std::size_t, double) { ++calls; });
  EXPECT_EQ(calls, 0);
  const std::vector<Eigen::Vector3d> two{Eigen::Vector3d::Zero(), Eigen::Vector3d(0.5, 0, 0)};
  cells.build(two, 1.0);
  cells.for_each_pair(0.0, [&](std::size_t, std::size_t, double) { ++calls; });
  EXPECT_EQ(calls, 0);
  cells.for_each_pair(0.5, [&](std::size_t, std::size_t, double) { ++calls; });  // strict: 0.5 is not < 0.5
  EXPECT_EQ(calls, 0);
  cells.for_each_pair(0.5000001, [&](std::size_t i, std::size_t j, double d2) {
    EXPECT_EQ(i, 0u);
    EXPECT_EQ(j, 1u);
    EXPECT_DOUBLE_EQ(d2, 0.25);
    ++calls;
  });
  EXPECT_EQ(calls, 1);
  EXPECT_THROW(cells.build(two, 0.0), std::invalid_argument);
  EXPECT_THROW(cells.build(two, -1.0), std::invalid_argument);
}

TEST(CellList, TwentyThousandHcpPointsGiveTheHcpPairCount) {
  // Speed is measured in scripts/bench/, not here; this checks the large case is complete.
  percussion::Generator g;
  g.particle_radius = 1.0;
  g.max = Eigen::Vector3d(56.0, 48.0, 46.0);
  const auto p = percussion::geometry::hcp_fill(g);
  ASSERT_GT(p.size(), 18000u);
  ASSERT_LT(p.size(), 24000u);
  CellList cells;
  const double cutoff = 2.0 * 1.02;
  cells.build(p, cutoff);
  long pairs = 0;
  cells.for_each_pair(cutoff, [&](std::size_t, std::size_t, double) { ++pairs; });
  // HCP: 6 bonds per particle minus the surface deficit.
  EXPECT_GT(pairs, static_cast<long>(5 * p.size()));
  EXPECT_LT(pairs, static_cast<long>(6 * p.size()));
}
