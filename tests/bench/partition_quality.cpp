// The distributed partitioner against serial METIS on one lattice graph (tests/support/lattice_graph.hpp) whose
// rows are spread over the ranks as contiguous slices: both edge cuts, their ratio, max/mean part size and the
// seconds of partition_distributed, as one JSON line on rank 0. For scripts/bench/partition_quality.sh; the edge
// cut and METIS need the whole graph, which this tool (unlike the library) gathers on rank 0.
//   mpirun -n P partition_quality KIND NX NY NZ [PETSc options, e.g. -partition_mat_partitioning_ptscotch_strategy]
#include <mpi.h>
#include <petscsys.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "percussion/parallel/partition.hpp"
#include "../support/lattice_graph.hpp"

namespace {

double max_over_mean(const std::vector<int>& part, int nparts) {
  std::vector<std::int64_t> size(static_cast<std::size_t>(nparts), 0);
  for (int p : part) ++size[static_cast<std::size_t>(p)];
  return static_cast<double>(*std::max_element(size.begin(), size.end())) * nparts / static_cast<double>(part.size());
}

// FNV-1a of the parts: equal hashes on two runs say the runs gave the same parts.
std::uint64_t hash_of(const std::vector<int>& part) {
  std::uint64_t h = 1469598103934665603ull;
  for (int p : part) h = (h ^ static_cast<std::uint64_t>(p)) * 1099511628211ull;
  return h;
}

int run(int argc, char** argv) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 5 || (std::string(argv[1]) != "cubic" && std::string(argv[1]) != "hcp")) {
    if (rank == 0) std::fprintf(stderr, "usage: partition_quality cubic|hcp NX NY NZ [PETSc options]\n");
    return 2;
  }
  const percussion::test::Lattice lattice{argv[1], std::atoll(argv[2]), std::atoll(argv[3]), std::atoll(argv[4])};
  const std::int64_t n = lattice.vertices();
  const std::int64_t first = rank * n / size, last = (rank + 1) * n / size;
  std::vector<std::int64_t> xadj, adjncy;
  lattice.rows(first, last, xadj, adjncy);

  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  const std::vector<int> mine = percussion::parallel::partition_distributed(MPI_COMM_WORLD, xadj, adjncy);
  double seconds = MPI_Wtime() - start;
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

  std::vector<int> counts(static_cast<std::size_t>(size)), displ(static_cast<std::size_t>(size) + 1, 0);
  const int local = static_cast<int>(mine.size());
  MPI_Gather(&local, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  for (int r = 0; r < size; ++r) displ[r + 1] = displ[r] + counts[r];
  std::vector<int> part(rank == 0 ? static_cast<std::size_t>(n) : 0);
  MPI_Gatherv(mine.data(), local, MPI_INT, part.data(), counts.data(), displ.data(), MPI_INT, 0, MPI_COMM_WORLD);
  if (rank != 0) return 0;

  const auto edges = lattice.edges();
  const double metis_start = MPI_Wtime();
  const std::vector<int> metis = percussion::parallel::partition_graph(n, edges, size);
  const double metis_seconds = MPI_Wtime() - metis_start;
  const std::int64_t cut = percussion::test::edge_cut(edges, part);
  const std::int64_t metis_cut = percussion::test::edge_cut(edges, metis);
  std::printf(
      "{\"graph\": \"%s %lldx%lldx%lld\", \"vertices\": %lld, \"edges\": %zu, \"parts\": %d, \"cut\": %lld, "
      "\"metis_cut\": %lld, \"ratio\": %.4f, \"max_over_mean\": %.4f, \"metis_max_over_mean\": %.4f, "
      "\"seconds\": %.3f, \"metis_seconds\": %.3f, \"parts_hash\": \"%016llx\"}\n",
      argv[1], static_cast<long long>(lattice.nx), static_cast<long long>(lattice.ny),
      static_cast<long long>(lattice.nz), static_cast<long long>(n), edges.size(), size,
      static_cast<long long>(cut), static_cast<long long>(metis_cut),
      metis_cut > 0 ? static_cast<double>(cut) / static_cast<double>(metis_cut) : 1.0, max_over_mean(part, size),
      max_over_mean(metis, size), seconds, metis_seconds, static_cast<unsigned long long>(hash_of(part)));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  PetscOptionsSetValue(nullptr, "-no_signal_handler", nullptr);
  PetscInitialize(&argc, &argv, nullptr, nullptr);
  int status = 1;
  try {
    status = run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "partition_quality: %s\n", e.what());
  }
  PetscFinalize();
  MPI_Finalize();
  return status;
}
