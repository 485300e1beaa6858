#include "percussion/core/memory.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>

namespace percussion {

std::int64_t peak_resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (!line.starts_with("VmHWM:")) continue;
    std::istringstream fields(line.substr(6));
    std::int64_t kib = 0;
    if (fields >> kib) return kib * 1024;
  }
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // KiB on Linux and the BSDs
}

MemoryStats reduce_peak_memory(MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const std::int64_t mine = peak_resident_bytes();
  MemoryStats out;
  // One number per rank: a list as long as the rank count, never as the item count.
  std::vector<std::int64_t> all(rank == 0 ? static_cast<std::size_t>(size) : 0);
  MPI_Gather(&mine, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, 0, comm);
  double stats[3] = {0, 0, 0};
  if (rank == 0) {
    stats[0] = static_cast<double>(*std::min_element(all.begin(), all.end()));
    stats[1] = static_cast<double>(std::accumulate(all.begin(), all.end(), std::int64_t{0})) / size;
    stats[2] = static_cast<double>(*std::max_element(all.begin(), all.end()));
    out.per_rank = std::move(all);
  }
  MPI_Bcast(stats, 3, MPI_DOUBLE, 0, comm);
  out.min = stats[0];
  out.avg = stats[1];
  out.max = stats[2];
  return out;
}

}  // namespace percussion
