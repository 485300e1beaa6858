// The items container on 1, 2 and 3 ranks, for items of different reaches: ghost sets equal to a brute-force
// evaluation of the documented criterion (and containing every item within reach), exact values after forward and
// reverse exchanges, partner-ordered sums equal bit for bit to a serial sum in partner order (so equal across rank
// counts), fields intact after migration, and a checkpoint written on one partition read back on another.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include "percussion/io/h5file.hpp"
#include "percussion/parallel/distributed_items.hpp"
#include "percussion/parallel/ghost_search.hpp"
#include "percussion/parallel/ordered_sum.hpp"
#include "../support/mpi_world.hpp"

namespace mpi_distributed_items {

using percussion::parallel::DistributedItems;
using percussion::parallel::OrderedSum;
using Vec3 = Eigen::Vector3d;
using Vec4 = Eigen::Vector4d;
using percussion::test::world_rank;
using percussion::test::world_size;

namespace {

struct Item { Vec3 x; double reach; int owner; };

// A unit cube of items in slabs by x, one per rank, every 40th on a random rank (fragments), reaches between
// 0.03 and 0.06 and every 100th item a big one (0.2). The same on every rank (fixed seed).
std::vector<Item> items_of_different_reaches(int size) {
  std::mt19937_64 rng(20261206);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::uniform_int_distribution<int> pick(0, size - 1);
  std::vector<Item> items(1500);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const Vec3 x(u(rng), u(rng), u(rng));
    const int slab = std::min(size - 1, static_cast<int>(x.x() * size));
    const double reach = i % 100 == 7 ? 0.2 : 0.03 + 0.03 * u(rng);
    items[i] = {x, reach, i % 40 == 0 ? pick(rng) : slab};
  }
  return items;
}

// Field values as functions of the global id, so any rank can check any item.
Vec3 position_value(std::int64_t g) { return Vec3(std::sin(0.1 * g), 1.0 / (g + 1), g * 0.25); }
Vec4 quaternion_value(std::int64_t g) { return Vec4(g, -g, std::sqrt(g + 0.5), 1e-300 * g); }
int int_value(std::int64_t g) { return static_cast<int>(g % 13) - 6; }
std::int64_t wide_value(std::int64_t g) { return (std::int64_t{1} << 40) + 3 * g; }

// A container holding this rank's items of `items` with every field filled from the global id.
struct Filled {
  DistributedItems items{MPI_COMM_WORLD};
  std::vector<Vec3>& x = items.add_field<Vec3>("position");
  std::vector<double>& reach = items.add_field<double>("reach");
  std::vector<Vec4>& q = items.add_field<Vec4>("quaternion");
  std::vector<int>& tag = items.add_field<int>("tag");
  std::vector<std::int64_t>& wide = items.add_field<std::int64_t>("wide");
  std::vector<double>& scratch = items.add_field<double>("scratch", false);  // not checkpointed

  explicit Filled(const std::vector<Item>& all) {
    std::vector<std::int64_t> mine;
    for (std::size_t i = 0; i < all.size(); ++i)
      if (all[i].owner == world_rank()) mine.push_back(static_cast<std::int64_t>(i));
    items.set_owned(mine);
    for (std::size_t k = 0; k < items.owned(); ++k) {
      const std::int64_t g = items.gids()[k];
      x[k] = all[static_cast<std::size_t>(g)].x;
      reach[k] = all[static_cast<std::size_t>(g)].reach;
      q[k] = quaternion_value(g);
      tag[k] = int_value(g);
      wide[k] = wide_value(g);
      scratch[k] = 0.5 * static_cast<double>(g);
    }
  }
  void build(const std::vector<DistributedItems::Request>& requests = {}) {
    items.build_ghosts(std::span<const Vec3>(x.data(), items.owned()),
                       std::span<const double>(reach.data(), items.owned()), requests);
  }
};

double box_distance2(const Vec3& p, const double* lo, const double* hi) {
  double d2 = 0;
  for (int k = 0; k < 3; ++k) {
    const double d = std::max({lo[k] - p[k], 0.0, p[k] - hi[k]});
    d2 += d * d;
  }
  return d2;
}

// Brute force of ghost_search.hpp's criterion: whether the rank whose items are `theirs` gets item j.
bool ghost_by_reach(const std::vector<Item>& all, const std::vector<std::size_t>& theirs, std::size_t j) {
  namespace par = percussion::parallel;
  if (theirs.empty()) return false;
  double base = 1e300;
  for (const Item& it : all) base = std::min(base, it.reach);
  double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300}, rank_reach = 0;
  for (std::size_t i : theirs) {
    for (int k = 0; k < 3; ++k) {
      lo[k] = std::min(lo[k], all[i].x[k]);
      hi[k] = std::max(hi[k], all[i].x[k]);
    }
    rank_reach = std::max(rank_reach, all[i].reach);
  }
  const double to_box = all[j].reach + rank_reach;
  if (box_distance2(all[j].x, lo, hi) > to_box * to_box) return false;
  const auto cell = [&](std::size_t i, int k) {
    return std::floor(all[i].x[k] / par::ghost_cell_edge(base, par::ghost_level(base, all[i].reach)));
  };
  for (std::size_t i : theirs) {
    const int level = par::ghost_level(base, all[i].reach);
    const double h = par::ghost_cell_edge(base, level);
    // The cell's box on level 0, its items' bounding box above; the largest reach in it.
    double clo[3], chi[3], ilo[3] = {1e300, 1e300, 1e300}, ihi[3] = {-1e300, -1e300, -1e300}, cell_reach = 0;
    for (int k = 0; k < 3; ++k) {
      clo[k] = cell(i, k) * h;
      chi[k] = (cell(i, k) + 1) * h;
    }
    for (std::size_t m : theirs) {
      bool same = par::ghost_level(base, all[m].reach) == level;
      for (int k = 0; k < 3 && same; ++k) same = cell(m, k) == cell(i, k);
      if (!same) continue;
      cell_reach = std::max(cell_reach, all[m].reach);
      for (int k = 0; k < 3; ++k) {
        ilo[k] = std::min(ilo[k], all[m].x[k]);
        ihi[k] = std::max(ihi[k], all[m].x[k]);
      }
    }
    if (level > 0)
      for (int k = 0; k < 3; ++k) {
        clo[k] = ilo[k];
        chi[k] = ihi[k];
      }
    const double r = all[j].reach + cell_reach;
    if (box_distance2(all[j].x, clo, chi) <= r * r) return true;
  }
  return false;
}

// Pair contributions of a made-up interaction, different for each end and each pair.
void pair_values(std::int64_t a, std::int64_t b, double* to_a, double* to_b) {
  for (int d = 0; d < 3; ++d) {
    to_a[d] = std::sin(1.3 * a + 0.7 * b + d) * 1e3;
    to_b[d] = std::cos(0.9 * a - 1.1 * b + d) / 7;
  }
}

// Per owned item: the sum of the contributions of every pair within reach, in ascending partner id.
std::vector<double> ordered_sums(Filled& f) {
  const std::size_t owned = f.items.owned(), n = f.items.size();
  const auto& gid = f.items.gids();
  std::vector<std::int32_t> target;
  std::vector<std::int64_t> key;
  std::vector<double> values;
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b) {
      if (gid[a] >= gid[b] || (a >= owned)) continue;  // the owner of the smaller id evaluates the pair
      if ((f.x[a] - f.x[b]).norm() > f.reach[a] + f.reach[b]) continue;
      double va[3], vb[3];
      pair_values(gid[a], gid[b], va, vb);
      target.insert(target.end(), {static_cast<std::int32_t>(a), static_cast<std::int32_t>(b)});
      key.insert(key.end(), {gid[b], gid[a]});
      values.insert(values.end(), va, va + 3);
      values.insert(values.end(), vb, vb + 3);
    }
  OrderedSum sum(f.items);
  sum.set_up(target, key);
  sum.exchange<3>(values);
  std::vector<double> totals(3 * owned, -1);
  sum.total<3>(values, nullptr, [&](std::size_t i, const double* t) { std::copy_n(t, 3, &totals[3 * i]); });
  return totals;
}

std::vector<std::size_t> owned_by(const std::vector<Item>& all, int rank) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i].owner == rank) out.push_back(i);
  return out;
}

void expect_fields_match_ids(Filled& f, bool ghosts_too) {
  const std::size_t n = ghosts_too ? f.items.size() : f.items.owned();
  for (std::size_t k = 0; k < n; ++k) {
    const std::int64_t g = f.items.gids()[k];
    ASSERT_EQ(f.q[k], quaternion_value(g)) << "item " << g << " slot " << k;
    ASSERT_EQ(f.tag[k], int_value(g));
    ASSERT_EQ(f.wide[k], wide_value(g));
    ASSERT_EQ(f.scratch[k], 0.5 * static_cast<double>(g));
  }
}

// The sums of ordered_sums(f) against the serial sum over all pairs in ascending partner id, bit for bit: the
// same on every rank count. Returns how many owned items have partners.
std::size_t expect_serial_sums(Filled& f, const std::vector<Item>& all) {
  const std::vector<double> totals = ordered_sums(f);
  std::size_t with_partners = 0;
  for (std::size_t k = 0; k < f.items.owned(); ++k) {
    const auto i = static_cast<std::size_t>(f.items.gids()[k]);
    double expected[3] = {};
    bool any = false;
    for (std::size_t j = 0; j < all.size(); ++j) {
      if (j == i || (all[i].x - all[j].x).norm() > all[i].reach + all[j].reach) continue;
      double va[3], vb[3];
      pair_values(static_cast<std::int64_t>(std::min(i, j)), static_cast<std::int64_t>(std::max(i, j)), va, vb);
      for (int d = 0; d < 3; ++d) expected[d] += i < j ? va[d] : vb[d];
      any = true;
    }
    with_partners += any ? 1 : 0;
    for (int d = 0; d < 3; ++d) EXPECT_EQ(totals[3 * k + d], expected[d]) << "item " << i << " component " << d;
  }
  return with_partners;
}

// A fresh directory: rank 0 makes it, everyone gets its name, rank 0 removes it.
struct TempDir {
  std::string path;
  TempDir() {
    char name[64] = "/tmp/percussion_items_XXXXXX";
    if (world_rank() == 0 && mkdtemp(name) == nullptr) std::abort();
    MPI_Bcast(name, sizeof(name), MPI_CHAR, 0, MPI_COMM_WORLD);
    path = name;
  }
  ~TempDir() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) std::filesystem::remove_all(path);
  }
};

}  // namespace

TEST(DistributedItems, GhostsAreTheBruteForceSetForDifferentReaches) {
  const int rank = world_rank(), size = world_size();
  const std::vector<Item> all = items_of_different_reaches(size);
  Filled f(all);
  // Explicit requests: every 97th item of another rank, wherever it is.
  std::vector<DistributedItems::Request> requests;
  std::set<std::int64_t> requested;
  for (std::size_t i = static_cast<std::size_t>(rank); i < all.size(); i += 97)
    if (all[i].owner != rank) {
      requests.push_back({static_cast<std::int64_t>(i), all[i].owner});
      requested.insert(static_cast<std::int64_t>(i));
    }
  f.build(requests);
  const std::vector<std::int64_t> ghost_ids(f.items.gids().begin() + static_cast<std::ptrdiff_t>(f.items.owned()),
                                            f.items.gids().end());
  const std::set<std::int64_t> ghosts(ghost_ids.begin(), ghost_ids.end());
  ASSERT_EQ(ghosts.size(), ghost_ids.size()) << "a ghost arrived twice";

  const std::vector<std::size_t> mine = owned_by(all, rank);
  std::set<std::int64_t> expected;
  std::size_t needed = 0;
  for (std::size_t j = 0; j < all.size(); ++j) {
    if (all[j].owner == rank) continue;
    const auto id = static_cast<std::int64_t>(j);
    if (requested.count(id) || ghost_by_reach(all, mine, j)) expected.insert(id);
    bool near = false;
    for (std::size_t i : mine) near = near || (all[j].x - all[i].x).norm() <= all[j].reach + all[i].reach;
    if (near) {
      ++needed;
      EXPECT_TRUE(ghosts.count(static_cast<std::int64_t>(j))) << "item " << j << " within reach but not a ghost";
    }
  }
  EXPECT_EQ(ghosts, expected);
  if (size > 1) {
    EXPECT_GT(needed, 100u);
    // One reach for all (the largest) ghosts more: the criterion uses each item's own.
    Filled uniform(all);
    const double largest = 0.2;
    uniform.items.build_ghosts(std::span<const Vec3>(uniform.x.data(), uniform.items.owned()),
                               std::span<const double>(&largest, 1), requests);
    const auto& ids = uniform.items.gids();
    const std::set<std::int64_t> wider(ids.begin() + static_cast<std::ptrdiff_t>(uniform.items.owned()), ids.end());
    EXPECT_TRUE(std::includes(wider.begin(), wider.end(), ghosts.begin(), ghosts.end()));
    EXPECT_LT(2 * f.items.ghosts(), uniform.items.ghosts());
  } else {
    EXPECT_EQ(f.items.ghosts(), 0u);
  }
  // Ghost slots come by source rank, ascending ids within a source; build_ghosts forwarded every field.
  for (std::size_t k = 1; k < f.items.ghosts(); ++k) {
    const bool same_source = f.items.ghost_owner(k) == f.items.ghost_owner(k - 1);
    EXPECT_TRUE(f.items.ghost_owner(k) >= f.items.ghost_owner(k - 1));
    if (same_source) {
      EXPECT_LT(ghost_ids[k - 1], ghost_ids[k]);
    }
  }
  for (std::size_t k = 0; k < f.items.size(); ++k) {
    EXPECT_EQ(f.x[k], all[static_cast<std::size_t>(f.items.gids()[k])].x);
    EXPECT_EQ(f.items.slot(f.items.gids()[k]), static_cast<std::int32_t>(k));
  }
  expect_fields_match_ids(f, true);
}

TEST(DistributedItems, ForwardAndReverseExchangeExactValues) {
  const int rank = world_rank(), size = world_size();
  const std::vector<Item> all = items_of_different_reaches(size);
  Filled f(all);
  f.build();
  const std::size_t owned = f.items.owned();
  // Forward: new owned values of a registered field and of a free array reach every ghost.
  std::vector<Vec3> free_array(owned);
  for (std::size_t k = 0; k < owned; ++k) {
    f.q[k] = -quaternion_value(f.items.gids()[k]);
    free_array[k] = position_value(f.items.gids()[k]);
  }
  f.items.forward(f.q, free_array);
  ASSERT_EQ(free_array.size(), f.items.size());
  for (std::size_t k = owned; k < f.items.size(); ++k) {
    EXPECT_EQ(f.q[k], -quaternion_value(f.items.gids()[k]));
    EXPECT_EQ(free_array[k], position_value(f.items.gids()[k]));
  }
  // Reverse: every holder (owner or ghost) puts gid + 1000 (its rank + 1); owners end with the sum over holders.
  std::vector<double> count(f.items.size());
  std::vector<std::int64_t> ids(f.items.size());
  for (std::size_t k = 0; k < f.items.size(); ++k) {
    count[k] = static_cast<double>(f.items.gids()[k]) + 1000.0 * (rank + 1);
    ids[k] = 1;
  }
  f.items.reverse_add(count, ids);
  // Which ranks hold which ghosts, gathered (test only).
  const auto& held = f.items.gids();
  std::vector<std::int64_t> mine_ghosts(held.begin() + static_cast<std::ptrdiff_t>(owned), held.end());
  int n_mine = static_cast<int>(mine_ghosts.size());
  std::vector<int> counts(static_cast<std::size_t>(size)), displ(static_cast<std::size_t>(size) + 1, 0);
  MPI_Allgather(&n_mine, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (int r = 0; r < size; ++r) displ[r + 1] = displ[r] + counts[r];
  std::vector<std::int64_t> every(static_cast<std::size_t>(displ[size]));
  MPI_Allgatherv(mine_ghosts.data(), n_mine, MPI_INT64_T, every.data(), counts.data(), displ.data(), MPI_INT64_T,
                 MPI_COMM_WORLD);
  for (std::size_t k = 0; k < owned; ++k) {
    const std::int64_t g = f.items.gids()[k];
    double expected = static_cast<double>(g) + 1000.0 * (rank + 1);
    std::int64_t holders = 1;
    for (int r = 0; r < size; ++r)
      if (std::count(every.begin() + displ[r], every.begin() + displ[r + 1], g)) {
        expected += static_cast<double>(g) + 1000.0 * (r + 1);
        ++holders;
      }
    EXPECT_EQ(count[k], expected) << "item " << g;
    EXPECT_EQ(ids[k], holders) << "item " << g;
  }
}

TEST(DistributedItems, OrderedSumsEqualTheSerialSumInPartnerOrder) {
  const std::vector<Item> all = items_of_different_reaches(world_size());
  Filled f(all);
  f.build();
  std::size_t with_partners = expect_serial_sums(f, all), total = 0;
  MPI_Allreduce(&with_partners, &total, 1, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_GT(total, 1400u);
}

TEST(DistributedItems, MigrationMovesEveryFieldAndKeepsTheSums) {
  const int rank = world_rank(), size = world_size();
  const std::vector<Item> all = items_of_different_reaches(size);
  Filled f(all);
  f.build();
  std::vector<int> owner(f.items.owned());
  for (std::size_t k = 0; k < owner.size(); ++k) owner[k] = static_cast<int>((f.items.gids()[k] * 7 + 3) % size);
  f.items.migrate(owner);
  std::vector<std::int64_t> expected;
  for (std::int64_t g = 0; g < static_cast<std::int64_t>(all.size()); ++g)
    if ((g * 7 + 3) % size == rank) expected.push_back(g);
  EXPECT_EQ(f.items.gids(), expected);
  EXPECT_EQ(f.items.ghosts(), 0u);
  for (std::size_t k = 0; k < f.items.owned(); ++k) {
    EXPECT_EQ(f.x[k], all[static_cast<std::size_t>(f.items.gids()[k])].x);
    EXPECT_EQ(f.reach[k], all[static_cast<std::size_t>(f.items.gids()[k])].reach);
    EXPECT_EQ(f.items.slot(f.items.gids()[k]), static_cast<std::int32_t>(k));
  }
  expect_fields_match_ids(f, false);
  // The interleaved partition has ghosts everywhere; sums stay those of the serial order.
  f.build();
  expect_fields_match_ids(f, true);
  expect_serial_sums(f, all);
}

TEST(DistributedItems, CheckpointReadsBackOnAnotherPartition) {
  namespace io = percussion::io;
  const int rank = world_rank(), size = world_size();
  const std::vector<Item> all = items_of_different_reaches(size);
  TempDir tmp;
  const std::string path = tmp.path + "/items.h5";
  {
    Filled f(all);
    f.build();  // ghosts are not written
    io::H5File file = io::H5File::create(MPI_COMM_WORLD, path);
    {
      io::H5Group g = io::H5Group::create(file.id(), "items");
      f.items.write_fields(g.id(), static_cast<std::int64_t>(all.size()));
    }
    file.close();
  }
  // Read back with ownership interleaved by id, in reverse rank order.
  std::vector<Item> interleaved = all;
  for (std::size_t i = 0; i < all.size(); ++i) interleaved[i].owner = size - 1 - static_cast<int>(i % size);
  Filled back(interleaved);
  for (std::size_t k = 0; k < back.items.owned(); ++k) {
    back.x[k] = Vec3::Zero();
    back.q[k] = Vec4::Zero();
    back.tag[k] = 99;
    back.wide[k] = 0;
    back.reach[k] = 0;
  }
  io::H5File file = io::H5File::open_read(MPI_COMM_WORLD, path);
  io::H5Group g = io::H5Group::open(file.id(), "items");
  EXPECT_FALSE(io::exists(g.id(), "scratch"));
  EXPECT_EQ(io::shape(g.id(), "quaternion"), (std::vector<std::int64_t>{static_cast<std::int64_t>(all.size()), 4}));
  back.items.read_fields(g.id());
  ASSERT_EQ(back.items.owned(), back.items.size());
  for (std::size_t k = 0; k < back.items.owned(); ++k) {
    const std::int64_t id = back.items.gids()[k];
    EXPECT_EQ(id % size, size - 1 - rank);
    EXPECT_EQ(back.x[k], all[static_cast<std::size_t>(id)].x);
    EXPECT_EQ(back.reach[k], all[static_cast<std::size_t>(id)].reach);
    EXPECT_EQ(back.q[k], quaternion_value(id));
    EXPECT_EQ(back.tag[k], int_value(id));
    EXPECT_EQ(back.wide[k], wide_value(id));
  }
}

// A reach that is not a finite number ≥ 0 on one rank makes every rank throw (none is left waiting).
TEST(DistributedItems, BadReachThrowsOnEveryRank) {
  DistributedItems items(MPI_COMM_WORLD);
  const int rank = world_rank();
  items.set_owned({rank});
  const Vec3 x(rank, 0, 0);
  const double reach = rank == world_size() - 1 ? -1.0 : 0.5;
  EXPECT_THROW(items.build_ghosts(std::span<const Vec3>(&x, 1), std::span<const double>(&reach, 1)),
               std::invalid_argument);
}

}  // namespace mpi_distributed_items
