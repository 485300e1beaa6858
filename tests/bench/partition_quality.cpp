// The distributed partitioner against serial METIS on one graph whose rows are spread over the ranks as contiguous
// slices: both edge cuts, their ratio, max/mean part size and the seconds of partition_distributed, as one JSON line
// on rank 0. The graph is a lattice (tests/support/lattice_graph.hpp) or a bonded-DEM scene's particles joined by
// bonds and touching neighbours, the graph BDEM partitions. For scripts/bench/partition_quality.sh; the edge cut and
// METIS need the whole graph, which this tool (unlike the library) builds on every rank.
//   mpirun -n P partition_quality cubic|hcp NX NY NZ [PETSc options, e.g. -partition_mat_partitioning_ptscotch_...]
//   mpirun -n P partition_quality scene FILE.json [PETSc options]
#include <mpi.h>
#include <petscsys.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "percussion/geometry/bonding.hpp"
#include "percussion/methods/bdem/model.hpp"
#include "percussion/methods/bdem/scene.hpp"
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

using Edges = std::vector<std::array<std::int64_t, 2>>;

// A scene's particle graph as BDEM builds it: intact bonds plus touching neighbours, each pair once.
Edges scene_graph(const std::string& path, std::int64_t& vertices) {
  namespace bdem = percussion::bdem;
  const bdem::BdemScene scene = bdem::parse_scene_file(path);
  const bdem::Model g = bdem::model_from_scene(scene);  // whole, on this rank (a benchmark tool)
  Edges edges = percussion::geometry::touching_pairs(g.x, g.radius, scene.bonds.tolerance);
  for (std::int64_t k = 0; k < g.bonds(); ++k)
    if (g.intact[static_cast<std::size_t>(k)]) edges.push_back(g.pair[static_cast<std::size_t>(k)]);
  for (auto& e : edges)
    if (e[0] > e[1]) std::swap(e[0], e[1]);
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  vertices = g.particles();
  return edges;
}

// CSR rows [first, last) of an edge list, with global neighbour numbers.
void rows_of(const Edges& edges, std::int64_t first, std::int64_t last, std::vector<std::int64_t>& xadj,
             std::vector<std::int64_t>& adjncy) {
  std::vector<std::vector<std::int64_t>> nb(static_cast<std::size_t>(last - first));
  for (const auto& e : edges)
    for (int side = 0; side < 2; ++side)
      if (e[side] >= first && e[side] < last) nb[static_cast<std::size_t>(e[side] - first)].push_back(e[1 - side]);
  xadj.assign(1, 0);
  adjncy.clear();
  for (const auto& row : nb) {
    adjncy.insert(adjncy.end(), row.begin(), row.end());
    xadj.push_back(static_cast<std::int64_t>(adjncy.size()));
  }
}

int run(int argc, char** argv) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string kind = argc > 1 ? argv[1] : "";
  if (!((kind == "scene" && argc >= 3) || ((kind == "cubic" || kind == "hcp") && argc >= 5))) {
    if (rank == 0)
      std::fprintf(stderr, "usage: partition_quality cubic|hcp NX NY NZ | scene FILE.json  [PETSc options]\n");
    return 2;
  }
  std::int64_t n = 0;
  Edges edges;
  std::string name;
  if (kind == "scene") {
    edges = scene_graph(argv[2], n);
    name = std::filesystem::path(argv[2]).stem().string();
  } else {
    const percussion::test::Lattice lattice{kind, std::atoll(argv[2]), std::atoll(argv[3]), std::atoll(argv[4])};
    edges = lattice.edges();
    n = lattice.vertices();
    name = kind + " " + argv[2] + "x" + argv[3] + "x" + argv[4];
  }
  const std::int64_t first = rank * n / size, last = (rank + 1) * n / size;
  std::vector<std::int64_t> xadj, adjncy;
  rows_of(edges, first, last, xadj, adjncy);

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

  const double metis_start = MPI_Wtime();
  const std::vector<int> metis = percussion::parallel::partition_graph(n, edges, size);
  const double metis_seconds = MPI_Wtime() - metis_start;
  const std::int64_t cut = percussion::test::edge_cut(edges, part);
  const std::int64_t metis_cut = percussion::test::edge_cut(edges, metis);
  std::printf(
      "{\"graph\": \"%s\", \"vertices\": %lld, \"edges\": %zu, \"parts\": %d, \"cut\": %lld, "
      "\"metis_cut\": %lld, \"ratio\": %.4f, \"max_over_mean\": %.4f, \"metis_max_over_mean\": %.4f, "
      "\"seconds\": %.3f, \"metis_seconds\": %.3f, \"parts_hash\": \"%016llx\"}\n",
      name.c_str(), static_cast<long long>(n), edges.size(), size,
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
