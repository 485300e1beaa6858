// The rendezvous owner directory on 1-4 ranks: ids owned by scattered ranks (and some by none), queries in any
// order with repeats and out-of-range ids, each answered with the owner every rank can compute independently.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "percussion/parallel/owner_directory.hpp"
#include "../support/mpi_world.hpp"

namespace mpi_owner_directory {

using percussion::parallel::directory_rank;
using percussion::parallel::find_owners;
using percussion::test::world_rank;
using percussion::test::world_size;

namespace {

// Scattered ownership: a multiplicative hash picks the rank; one id in 7 (by hash) has no owner.
int expected_owner(std::int64_t id, std::int64_t count, int ranks) {
  if (id < 0 || id >= count) return -1;
  const std::uint64_t h = static_cast<std::uint64_t>(id) * 2654435761u % 1000003u;
  return h % 7 == 3 ? -1 : static_cast<int>(h % static_cast<std::uint64_t>(ranks));
}

std::vector<std::int64_t> owned_ids(std::int64_t count) {
  std::vector<std::int64_t> mine;
  for (std::int64_t id = 0; id < count; ++id)
    if (expected_owner(id, count, world_size()) == world_rank()) mine.push_back(id);
  return mine;
}

}  // namespace

TEST(OwnerDirectory, DirectoryRanksCoverTheIdsInOrder) {
  for (int ranks : {1, 2, 3, 4, 7}) {
    for (std::int64_t count : {1, 5, 1000, 1001}) {
      int previous = 0;
      for (std::int64_t id = 0; id < count; ++id) {
        const int d = directory_rank(id, count, ranks);
        EXPECT_GE(d, previous);
        EXPECT_LT(d, ranks);
        previous = d;
      }
    }
  }
  EXPECT_EQ(directory_rank(999, 1000, 4), 3);
  EXPECT_EQ(directory_rank(250, 1000, 4), 1);
}

TEST(OwnerDirectory, ScatteredOwnersFoundForQueriesWithRepeatsAndStrangers) {
  const int rank = world_rank(), size = world_size();
  for (std::int64_t count : {std::int64_t{1001}, std::int64_t{2}}) {  // 2: fewer ids than ranks on 3 and 4
    const std::vector<std::int64_t> mine = owned_ids(count);
    // Each rank asks about a different mix: every id from the top down in steps of rank + 1, its first ids twice,
    // and ids outside the range.
    std::vector<std::int64_t> queries{-5, count, count + 17};
    for (std::int64_t id = count - 1; id >= 0; id -= rank + 1) queries.push_back(id);
    for (std::int64_t id = 0; id < std::min<std::int64_t>(count, 10); ++id) queries.push_back(id);
    queries.push_back(0);
    const std::vector<int> owners = find_owners(MPI_COMM_WORLD, mine, count, queries);
    ASSERT_EQ(owners.size(), queries.size());
    int unowned = 0;
    for (std::size_t q = 0; q < queries.size(); ++q) {
      EXPECT_EQ(owners[q], expected_owner(queries[q], count, size)) << "id " << queries[q];
      unowned += owners[q] == -1;
    }
    EXPECT_GE(unowned, 3);  // the three strangers at least
  }
}

TEST(OwnerDirectory, NoQueriesAndNoOwnedIdsOnSomeRanks) {
  // Only rank 0 owns anything; only the last rank asks.
  const int rank = world_rank(), size = world_size();
  std::vector<std::int64_t> mine;
  if (rank == 0) mine = {3, 4, 50, 99};
  std::vector<std::int64_t> queries;
  if (rank == size - 1) queries = {99, 98, 3, 3, 0};
  const std::vector<int> owners = find_owners(MPI_COMM_WORLD, mine, 100, queries);
  if (rank == size - 1) {
    EXPECT_EQ(owners, (std::vector<int>{0, -1, 0, 0, -1}));
  } else {
    EXPECT_TRUE(owners.empty());
  }
}

TEST(OwnerDirectory, MisuseReportedOnEveryRank) {
  const int rank = world_rank(), size = world_size();
  // Not ascending on the last rank only: every rank throws (none is left waiting).
  std::vector<std::int64_t> mine;
  if (rank == size - 1) mine = {5, 2};
  EXPECT_THROW(find_owners(MPI_COMM_WORLD, mine, 10, {}), std::invalid_argument);
  mine.clear();
  if (rank == 0) mine = {10};  // out of range
  EXPECT_THROW(find_owners(MPI_COMM_WORLD, mine, 10, {}), std::invalid_argument);
  if (size > 1) {
    mine = {7};  // every rank claims id 7
    EXPECT_THROW(find_owners(MPI_COMM_WORLD, mine, 10, {}), std::invalid_argument);
  }
  // The directory still works after the errors.
  mine.clear();
  if (rank == size - 1) mine = {1};
  const std::vector<std::int64_t> query{1};
  EXPECT_EQ(find_owners(MPI_COMM_WORLD, mine, 10, query), std::vector<int>{size - 1});
}

}  // namespace mpi_owner_directory
