#include "percussion/parallel/owner_directory.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "percussion/parallel/messages.hpp"

namespace percussion::parallel {
namespace {

std::int64_t range_size(std::int64_t global_count, int ranks) {
  return std::max<std::int64_t>(1, (global_count + ranks - 1) / ranks);
}

}  // namespace

int directory_rank(std::int64_t id, std::int64_t global_count, int ranks) {
  return static_cast<int>(id / range_size(global_count, ranks));
}

std::vector<int> find_owners(MPI_Comm comm, std::span<const std::int64_t> owned, std::int64_t global_count,
                             std::span<const std::int64_t> queries) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (global_count < 0) throw std::invalid_argument("find_owners: negative global_count");
  const std::int64_t chunk = range_size(global_count, size);
  const std::int64_t first = std::min<std::int64_t>(global_count, rank * chunk);
  const std::int64_t last = std::min<std::int64_t>(global_count, first + chunk);

  // Register: every owned id goes to its directory rank. Ascending ids give ascending directory ranks.
  int error = 0;  // 1: bad owned ids, 2: an id owned twice
  std::vector<std::vector<std::int64_t>> out(static_cast<std::size_t>(size));
  for (std::size_t i = 0; i < owned.size(); ++i) {
    const std::int64_t id = owned[i];
    if (id < 0 || id >= global_count || (i > 0 && id <= owned[i - 1])) {
      error = 1;
      break;
    }
    out[static_cast<std::size_t>(directory_rank(id, global_count, size))].push_back(id);
  }
  if (error) out.assign(static_cast<std::size_t>(size), {});
  std::vector<int> counts;
  std::vector<std::int64_t> registered = all_to_all(comm, out, counts);
  std::vector<int> owner_of(static_cast<std::size_t>(last - first), -1);
  std::size_t at = 0;
  for (int source = 0; source < size; ++source) {
    for (int k = 0; k < counts[static_cast<std::size_t>(source)]; ++k, ++at) {
      int& slot = owner_of[static_cast<std::size_t>(registered[at] - first)];
      if (slot != -1) error = std::max(error, 2);
      slot = source;
    }
  }
  registered = {};
  // Every rank must see a misuse, or the others would wait in the next collective for ever.
  MPI_Allreduce(MPI_IN_PLACE, &error, 1, MPI_INT, MPI_MAX, comm);
  if (error == 1) throw std::invalid_argument("find_owners: owned ids must be ascending and in [0, global_count)");
  if (error == 2) throw std::invalid_argument("find_owners: an id is owned by two ranks");

  // Ask: each distinct in-range id once, to its directory rank. Sorted ids go out in directory rank order, so the
  // answers, concatenated by source rank, come back in the same sorted order.
  std::vector<std::int64_t> asked;
  asked.reserve(queries.size());
  for (std::int64_t id : queries)
    if (id >= 0 && id < global_count) asked.push_back(id);
  std::sort(asked.begin(), asked.end());
  asked.erase(std::unique(asked.begin(), asked.end()), asked.end());
  for (auto& list : out) list.clear();
  for (std::int64_t id : asked) out[static_cast<std::size_t>(directory_rank(id, global_count, size))].push_back(id);
  const std::vector<std::int64_t> incoming = all_to_all(comm, out, counts);
  out = {};

  std::vector<std::vector<int>> replies(static_cast<std::size_t>(size));
  at = 0;
  for (int source = 0; source < size; ++source) {
    auto& reply = replies[static_cast<std::size_t>(source)];
    reply.reserve(static_cast<std::size_t>(counts[static_cast<std::size_t>(source)]));
    for (int k = 0; k < counts[static_cast<std::size_t>(source)]; ++k, ++at)
      reply.push_back(owner_of[static_cast<std::size_t>(incoming[at] - first)]);
  }
  const std::vector<int> answers = all_to_all(comm, replies, counts);

  std::vector<int> result(queries.size(), -1);
  for (std::size_t q = 0; q < queries.size(); ++q) {
    const auto it = std::lower_bound(asked.begin(), asked.end(), queries[q]);
    if (it != asked.end() && *it == queries[q]) result[q] = answers[static_cast<std::size_t>(it - asked.begin())];
  }
  return result;
}

}  // namespace percussion::parallel
