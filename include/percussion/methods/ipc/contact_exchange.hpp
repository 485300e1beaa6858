#pragma once
// The contact layer's exchange of primitives across ranks (contact_set.hpp): every rank's region is the box of its
// own primitives' boxes; a primitive goes to every other rank whose region its box, inflated by a margin, overlaps.
// Two primitives of different ranks whose inflated boxes overlap are then both on both ranks.
#include <mpi.h>

#include <vector>

#include "percussion/methods/ipc/contact_broad_phase.hpp"
#include "percussion/parallel/messages.hpp"

namespace percussion::ipc {

// Collective. records[k] has box boxes[k]; returns the other ranks' records sent here, by source rank, with the
// per-source counts.
template <class Record>
std::vector<Record> send_to_overlapping_ranks(MPI_Comm comm, const std::vector<Record>& records,
                                              const std::vector<Box>& boxes, double margin, std::vector<int>& counts) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  Box region;
  for (const Box& b : boxes) region.extend(b);
  std::vector<double> regions(6 * static_cast<std::size_t>(ranks));
  const double local[6] = {region.lower.x(), region.lower.y(), region.lower.z(),
                           region.upper.x(), region.upper.y(), region.upper.z()};
  MPI_Allgather(local, 6, MPI_DOUBLE, regions.data(), 6, MPI_DOUBLE, comm);
  std::vector<std::vector<Record>> out(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    const double* b = &regions[6 * static_cast<std::size_t>(r)];
    const Box target{{b[0], b[1], b[2]}, {b[3], b[4], b[5]}};
    if (r == rank || target.empty()) continue;
    for (std::size_t k = 0; k < records.size(); ++k)
      if (boxes[k].inflated(margin).overlaps(target)) out[static_cast<std::size_t>(r)].push_back(records[k]);
  }
  return parallel::all_to_all(comm, out, counts);
}

}  // namespace percussion::ipc
