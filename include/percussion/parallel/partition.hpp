#pragma once
// Graph partitioning of items (particles joined by bonds and touching neighbours): serial METIS on a whole graph,
// and PETSc's MatPartitioning (PT-Scotch by default) on a graph whose rows are spread over the ranks.
#include <mpi.h>

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace percussion::parallel {

// part[i] in [0, nparts) for each of n items; edges are unordered pairs (i, j), i != j.
// Balances item counts; minimises the number of cut edges. Every rank calls it with the same graph and gets the
// same answer: METIS is deterministic for a fixed seed.
std::vector<int> partition_graph(std::int64_t n, std::span<const std::array<std::int64_t, 2>> edges, int nparts);

// Collective. Rank r holds rows [offset_r, offset_r + n_r) of a symmetric graph, offsets in rank order,
// n_r = xadj.size() - 1 (xadj may be empty or {0} for no rows); adjncy[xadj[i] .. xadj[i+1]) are the GLOBAL row
// numbers of row i's neighbours (repeats and self loops are dropped). vertex_weight: one positive weight per
// local row, or empty for unit weights (on every rank alike). Returns the part (one per rank of comm) of each
// local row: balanced within about 1 %, few cut edges. Options prefix "partition_": -partition_mat_partitioning_type
// (default ptscotch; parmetis where PETSc has it), -partition_mat_partitioning_ptscotch_strategy,
// -partition_mat_partitioning_ptscotch_imbalance.
// Repeatable (the same graph on the same rank count gives the same parts) while PT-Scotch exchanges collectively,
// which it does while more than a quarter of all rank pairs are neighbours (contiguous slices: up to 7 ranks);
// with sparser neighbours it takes messages in arrival order and the parts can differ between runs, unless Scotch
// was built with -DSCOTCH_DETERMINISTIC (Debian's is not).
// Sets SCOTCH_PTHREAD_NUMBER=1 in the process environment: PT-Scotch's threads need MPI_THREAD_MULTIPLE.
// One rank: all zeros, without PETSc. Fewer rows than ranks: row g gets part g. Throws std::invalid_argument on
// every rank for a malformed graph, std::runtime_error when PETSc fails (e.g. an unknown partitioner type).
std::vector<int> partition_distributed(MPI_Comm comm, std::span<const std::int64_t> xadj,
                                       std::span<const std::int64_t> adjncy,
                                       std::span<const std::int64_t> vertex_weight = {});

}  // namespace percussion::parallel
