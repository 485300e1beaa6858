#pragma once
// Who owns a global id, without any rank holding a table of all ids: a rendezvous directory. Each id has a
// directory rank (ids split into P equal contiguous ranges); owners register their ids there, askers ask there,
// and the answers come back. Memory per rank is O(owned + queries + global_count / P).
#include <mpi.h>

#include <cstdint>
#include <span>
#include <vector>

namespace percussion::parallel {

// The directory rank of `id` in [0, global_count) on `ranks` ranks: rank d keeps ids
// [d * ceil(global_count / ranks), (d + 1) * ceil(global_count / ranks)).
int directory_rank(std::int64_t id, std::int64_t global_count, int ranks);

// Collective. owned: the global ids this rank owns, ascending, disjoint over ranks, each in [0, global_count).
// queries: ids in any order, repeats allowed. Returns the owner rank of each query, -1 where no rank owns it
// (ids outside [0, global_count) included). Throws std::invalid_argument on every rank if any rank's owned ids are
// out of range or not ascending, or if two ranks own the same id.
std::vector<int> find_owners(MPI_Comm comm, std::span<const std::int64_t> owned, std::int64_t global_count,
                             std::span<const std::int64_t> queries);

}  // namespace percussion::parallel
