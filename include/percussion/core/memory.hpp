#pragma once
// Peak resident memory of this process, for the end-of-run table (LAMMPS prints the same per rank).
#include <mpi.h>

#include <cstdint>
#include <vector>

namespace percussion {

// The high-water mark of this process's resident set, bytes (Linux's VmHWM; getrusage's ru_maxrss elsewhere).
std::int64_t peak_resident_bytes();

struct MemoryStats {
  double min = 0, avg = 0, max = 0;  // bytes over ranks
  std::vector<std::int64_t> per_rank;  // every rank's peak, in rank order (filled on rank 0 only)
};
// Collective: every rank's peak_resident_bytes(), reduced.
MemoryStats reduce_peak_memory(MPI_Comm comm);

}  // namespace percussion
