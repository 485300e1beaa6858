// partition_distributed (partition.hpp): PETSc's MatPartitioning on a row-distributed adjacency.
#include <petscmat.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

#include "percussion/parallel/partition.hpp"

namespace percussion::parallel {
namespace {

// PT-Scotch's settings: edge cuts within 1.05x of serial METIS's and parts within 1 % of the mean at 2-8 parts
// (docs/benchmarks/partition_quality.jsonl); "balance" evens parts exactly but cut up to 1.19x METIS's.
constexpr MPPTScotchStrategyType kDefaultStrategy = MP_PTSCOTCH_QUALITY;
constexpr PetscReal kDefaultImbalance = 0.01;

void check(PetscErrorCode code, const char* what) {
  if (code == 0) return;
  const char* text = nullptr;
  char* specific = nullptr;
  PetscErrorMessage(code, &text, &specific);
  throw std::runtime_error(std::string("partition_distributed: PETSc's ") + what + " failed: " +
                           (text ? text : "unknown error") + (specific && *specific ? std::string(": ") + specific : ""));
}

// The PETSc objects of one call, destroyed on every way out. PETSc's default error handler ends every rank but the
// first on an error (e.g. an unknown partitioner type); while these live, errors come back as codes instead.
struct PetscObjects {
  PetscObjects() { PetscPushErrorHandler(PetscReturnErrorHandler, nullptr); }
  Mat adjacency = nullptr;
  MatPartitioning partitioning = nullptr;
  IS parts = nullptr;
  ~PetscObjects() {
    ISDestroy(&parts);
    MatPartitioningDestroy(&partitioning);
    MatDestroy(&adjacency);
    PetscPopErrorHandler();
  }
};

// Scotch draws from one process-wide random generator; restarting it makes a call's result depend on the graph
// alone, not on what was partitioned before in the same process.
extern "C" void SCOTCH_randomReset(void);

// PT-Scotch's threads exchange MPI messages concurrently (they need MPI_THREAD_MULTIPLE, which the program does not
// ask for: without it they crash) and make the parts depend on timing; every core already runs a rank.
void scotch_single_thread() { setenv("SCOTCH_PTHREAD_NUMBER", "1", 1); }

}  // namespace

std::vector<int> partition_distributed(MPI_Comm comm, std::span<const std::int64_t> xadj,
                                       std::span<const std::int64_t> adjncy,
                                       std::span<const std::int64_t> vertex_weight) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const std::int64_t n = xadj.empty() ? 0 : static_cast<std::int64_t>(xadj.size()) - 1;

  // Row offsets and the global row count: one number per rank.
  std::vector<std::int64_t> rows(static_cast<std::size_t>(size));
  MPI_Allgather(&n, 1, MPI_INT64_T, rows.data(), 1, MPI_INT64_T, comm);
  std::int64_t offset = 0, global_rows = 0;
  for (int r = 0; r < size; ++r) {
    if (r == rank) offset = global_rows;
    global_rows += rows[static_cast<std::size_t>(r)];
  }

  // Misuse found on one rank is reported on all, or the others would wait in PETSc for ever.
  const char* problem = nullptr;
  if (n > 0 && xadj[0] != 0) problem = "xadj must start at 0";
  for (std::int64_t i = 0; i < n && !problem; ++i)
    if (xadj[i + 1] < xadj[i]) problem = "xadj must not decrease";
  if (!problem && n > 0 && xadj[n] != static_cast<std::int64_t>(adjncy.size()))
    problem = "xadj's last entry must be adjncy's length";
  if (!problem && xadj.empty() && !adjncy.empty()) problem = "adjncy given without xadj";
  for (std::int64_t j : adjncy)
    if (!problem && (j < 0 || j >= global_rows)) problem = "adjncy holds a row outside [0, global rows)";
  if (!problem && !vertex_weight.empty() && static_cast<std::int64_t>(vertex_weight.size()) != n)
    problem = "vertex_weight must hold one weight per local row";
  for (std::int64_t w : vertex_weight)
    if (!problem && (w <= 0 || w > std::numeric_limits<PetscInt>::max())) problem = "vertex weights must be positive";
  if (!problem && global_rows > std::numeric_limits<PetscInt>::max())
    problem = "more rows than PETSc's index type holds";
  // Weights on some ranks and not on others: only ranks with rows have a say.
  int flags[3] = {problem ? 1 : 0, n > 0 && !vertex_weight.empty(), n > 0 && vertex_weight.empty()};
  MPI_Allreduce(MPI_IN_PLACE, flags, 3, MPI_INT, MPI_MAX, comm);
  if (flags[0])
    throw std::invalid_argument(std::string("partition_distributed: ") +
                                (problem ? problem : "a malformed graph on another rank"));
  if (flags[1] && flags[2])
    throw std::invalid_argument("partition_distributed: vertex weights given on some ranks and not on others");
  const bool weighted = flags[1] != 0;

  std::vector<int> part(static_cast<std::size_t>(n), 0);
  if (size == 1) return part;
  if (global_rows <= size) {  // one row per part; the partitioners refuse fewer vertices than parts
    for (std::int64_t i = 0; i < n; ++i) part[static_cast<std::size_t>(i)] = static_cast<int>(offset + i);
    return part;
  }
  PetscBool initialised = PETSC_FALSE;
  PetscInitialized(&initialised);
  if (!initialised) throw std::logic_error("partition_distributed: PETSc is not initialised");

  PetscObjects objects;
  // The adjacency without repeats and self loops, in PetscMalloc'd arrays that the matrix takes over.
  PetscInt *ia = nullptr, *ja = nullptr;
  check(PetscMalloc1(n + 1, &ia), "PetscMalloc");
  std::vector<PetscInt> row;
  std::vector<PetscInt> columns;
  columns.reserve(adjncy.size());
  ia[0] = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    row.clear();
    for (std::int64_t k = xadj[i]; k < xadj[i + 1]; ++k)
      if (adjncy[k] != offset + i) row.push_back(static_cast<PetscInt>(adjncy[k]));
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
    columns.insert(columns.end(), row.begin(), row.end());
    if (columns.size() > static_cast<std::size_t>(std::numeric_limits<PetscInt>::max())) {
      PetscFree(ia);
      throw std::length_error("partition_distributed: more local edges than PETSc's index type holds");
    }
    ia[i + 1] = static_cast<PetscInt>(columns.size());
  }
  if (PetscErrorCode code = PetscMalloc1(columns.size(), &ja)) {
    PetscFree(ia);
    check(code, "PetscMalloc");
  }
  std::copy(columns.begin(), columns.end(), ja);
  columns = {};

  if (PetscErrorCode code = MatCreateMPIAdj(comm, static_cast<PetscInt>(n), static_cast<PetscInt>(global_rows), ia,
                                            ja, nullptr, &objects.adjacency)) {
    PetscFree(ia);
    PetscFree(ja);
    check(code, "MatCreateMPIAdj");
  }
  MatPartitioning& mp = objects.partitioning;
  check(MatPartitioningCreate(comm, &mp), "MatPartitioningCreate");
  check(MatPartitioningSetAdjacency(mp, objects.adjacency), "MatPartitioningSetAdjacency");
  check(MatPartitioningSetNParts(mp, size), "MatPartitioningSetNParts");
  check(PetscObjectSetOptionsPrefix(reinterpret_cast<PetscObject>(mp), "partition_"), "PetscObjectSetOptionsPrefix");
  check(MatPartitioningSetType(mp, MATPARTITIONINGPTSCOTCH), "MatPartitioningSetType");
  check(MatPartitioningPTScotchSetStrategy(mp, kDefaultStrategy), "MatPartitioningPTScotchSetStrategy");
  check(MatPartitioningPTScotchSetImbalance(mp, kDefaultImbalance), "MatPartitioningPTScotchSetImbalance");
  check(MatPartitioningSetFromOptions(mp), "MatPartitioningSetFromOptions");
  if (weighted) {
    PetscInt* weights = nullptr;  // taken over by the partitioning
    check(PetscMalloc1(n, &weights), "PetscMalloc");
    for (std::int64_t i = 0; i < n; ++i) weights[i] = static_cast<PetscInt>(vertex_weight[i]);
    if (PetscErrorCode code = MatPartitioningSetVertexWeights(mp, weights)) {
      PetscFree(weights);
      check(code, "MatPartitioningSetVertexWeights");
    }
  }
  scotch_single_thread();
  SCOTCH_randomReset();
  check(MatPartitioningApply(mp, &objects.parts), "MatPartitioningApply");
  const PetscInt* indices = nullptr;
  check(ISGetIndices(objects.parts, &indices), "ISGetIndices");
  for (std::int64_t i = 0; i < n; ++i) part[static_cast<std::size_t>(i)] = static_cast<int>(indices[i]);
  check(ISRestoreIndices(objects.parts, &indices), "ISRestoreIndices");
  return part;
}

}  // namespace percussion::parallel
