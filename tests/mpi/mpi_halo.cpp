// The halo of one cut-off for all items on 1, 2 and 3 ranks (DistributedItems with one reach, half the cut-off):
// every item within the cut-off of another rank's items becomes its ghost, items far from all of them do not (even
// when scattered fragments make every rank's bounding box span the whole domain), and forward() fills the ghost
// slots with the owners' values.
#include <gtest/gtest.h>
#include <mpi.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "percussion/parallel/distributed_items.hpp"

namespace mpi_halo {

using percussion::parallel::DistributedItems;

namespace {

struct Item { Eigen::Vector3d x; int owner; };

// A 1 m cube of items split into slabs by x, one per rank, and a spray of fragments: every 40th item belongs to a
// rank chosen at random, wherever it sits. The same on every rank (fixed seed). With `far_fragment` one of rank 0's
// items flies 100 km off, which makes its range of cells too large for the halo's bitmap of another rank's cells
// (the hash table's path instead).
std::vector<Item> scattered_items(int size, bool far_fragment) {
  std::mt19937_64 rng(20261127);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::uniform_int_distribution<int> pick(0, size - 1);
  std::vector<Item> items(3000);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const Eigen::Vector3d x(u(rng), u(rng), u(rng));
    const int slab = std::min(size - 1, static_cast<int>(x.x() * size));
    items[i] = {x, i % 40 == 0 ? pick(rng) : slab};
  }
  if (far_fragment) items[1] = {Eigen::Vector3d(1e5, 0.5, 0.5), 0};
  return items;
}

void expect_ghosts_exactly_the_items_near_another_ranks_items(bool far_fragment) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double cutoff = 0.05;
  const std::vector<Item> items = scattered_items(size, far_fragment);

  std::vector<Eigen::Vector3d> x;
  std::vector<std::int64_t> gid;
  for (std::size_t i = 0; i < items.size(); ++i)
    if (items[i].owner == rank) {
      x.push_back(items[i].x);
      gid.push_back(static_cast<std::int64_t>(i));
    }
  const std::size_t n_owned = x.size();
  DistributedItems halo(MPI_COMM_WORLD);
  halo.set_owned(gid);
  const double reach = 0.5 * cutoff;
  halo.build_ghosts(x, std::span<const double>(&reach, 1));
  const std::vector<std::int64_t> ghost_gids(halo.gids().begin() + static_cast<std::ptrdiff_t>(n_owned), halo.gids().end());
  const std::set<std::int64_t> ghosts(ghost_gids.begin(), ghost_gids.end());
  ASSERT_EQ(ghosts.size(), halo.ghosts()) << "a ghost arrived twice";

  // Distance from each item to this rank's nearest owned item, by brute force.
  std::size_t needed = 0, within_reach = 0, boxed = 0;
  Eigen::Vector3d lo = Eigen::Vector3d::Constant(1e300), hi = -lo;
  for (const auto& p : x) {
    lo = lo.cwiseMin(p);
    hi = hi.cwiseMax(p);
  }
  for (std::size_t j = 0; j < items.size(); ++j) {
    if (items[j].owner == rank) continue;
    double d = 1e300;
    for (const auto& p : x) d = std::min(d, (items[j].x - p).norm());
    const bool ghost = ghosts.count(static_cast<std::int64_t>(j)) > 0;
    if (d < cutoff) {
      ++needed;
      EXPECT_TRUE(ghost) << "item " << j << " of rank " << items[j].owner << " is " << d
                         << " from an item of rank " << rank << " but not its ghost";
    }
    // A ghost lies within the cut-off of a cell (edge = cut-off) holding one of our items.
    if (ghost) {
      EXPECT_LE(d, cutoff * (1 + std::sqrt(3.0)) + 1e-12) << "item " << j << " ghosted from afar";
    }
    if (d <= cutoff * (1 + std::sqrt(3.0))) ++within_reach;
    const Eigen::Vector3d outside = (lo - items[j].x).cwiseMax(items[j].x - hi).cwiseMax(0.0);
    if (n_owned > 0 && outside.norm() <= cutoff) ++boxed;  // what a bounding-box halo would ghost
  }
  EXPECT_LE(needed, halo.ghosts());
  EXPECT_LE(halo.ghosts(), within_reach);
  if (size > 1) {
    EXPECT_GT(needed, 0u);
    // The spray puts every rank's box around the whole cube: a box halo would ghost nearly everything.
    EXPECT_LT(3 * halo.ghosts(), boxed) << "ghosts " << halo.ghosts() << ", bounding-box halo " << boxed;
  } else {
    EXPECT_EQ(halo.ghosts(), 0u);
  }

  // forward() copies the owners' values into the ghost slots.
  std::vector<double> field(n_owned + halo.ghosts(), -1.0);
  for (std::size_t i = 0; i < n_owned; ++i) field[i] = 0.5 * static_cast<double>(gid[i]) + 3;
  halo.forward(field);
  for (std::size_t k = 0; k < halo.ghosts(); ++k)
    EXPECT_EQ(field[n_owned + k], 0.5 * static_cast<double>(ghost_gids[k]) + 3);
}

}  // namespace

TEST(Halo, GhostsExactlyTheItemsNearAnotherRanksItems) { expect_ghosts_exactly_the_items_near_another_ranks_items(false); }

TEST(Halo, GhostsExactlyTheItemsNearWithAFragmentFarOff) { expect_ghosts_exactly_the_items_near_another_ranks_items(true); }

// A rank that owns nothing neither sends nor receives ghosts, and the others still find each other's.
TEST(Halo, RankWithoutItems) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<Eigen::Vector3d> x;
  std::vector<std::int64_t> gid;
  if (rank != 0)  // rank r > 0 owns one item at x = 0.01 r: each within the cut-off of its neighbours
    for (int k = 0; k < 2; ++k) {
      x.emplace_back(0.01 * rank, 0.001 * k, 0);
      gid.push_back(2 * rank + k);
    }
  DistributedItems halo(MPI_COMM_WORLD);
  halo.set_owned(gid);
  const double reach = 0.0075;
  halo.build_ghosts(x, std::span<const double>(&reach, 1));
  std::size_t expected = 0;  // two items from each item-holding neighbour rank
  for (int r : {rank - 1, rank + 1})
    if (rank != 0 && r > 0 && r < size) expected += 2;
  EXPECT_EQ(halo.ghosts(), expected);
}

}  // namespace mpi_halo
