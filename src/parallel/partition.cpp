#include "percussion/parallel/partition.hpp"

#include <metis.h>

#include <stdexcept>
#include <string>

namespace percussion::parallel {

std::vector<int> partition_graph(std::int64_t n, std::span<const std::array<std::int64_t, 2>> edges, int nparts) {
  std::vector<int> part(static_cast<std::size_t>(n), 0);
  if (nparts <= 1 || n == 0) return part;
  if (n <= nparts) {  // fewer items than parts: one each, METIS would refuse
    for (std::int64_t i = 0; i < n; ++i) part[i] = static_cast<int>(i);
    return part;
  }
  // Symmetric CSR adjacency.
  std::vector<idx_t> xadj(n + 1, 0);
  for (const auto& e : edges) {
    ++xadj[e[0] + 1];
    ++xadj[e[1] + 1];
  }
  for (std::int64_t i = 0; i < n; ++i) xadj[i + 1] += xadj[i];
  std::vector<idx_t> adjncy(xadj[n]);
  std::vector<idx_t> fill(xadj.begin(), xadj.end() - 1);
  for (const auto& e : edges) {
    adjncy[fill[e[0]]++] = static_cast<idx_t>(e[1]);
    adjncy[fill[e[1]]++] = static_cast<idx_t>(e[0]);
  }
  idx_t nvtxs = static_cast<idx_t>(n), ncon = 1, np = nparts, objval = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 20261121;
  options[METIS_OPTION_NUMBERING] = 0;
  std::vector<idx_t> result(n);
  int status = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.data(), nullptr, nullptr, nullptr, &np,
                                   nullptr, nullptr, options, &objval, result.data());
  if (status != METIS_OK) throw std::runtime_error("METIS_PartGraphKway failed with status " + std::to_string(status));
  for (std::int64_t i = 0; i < n; ++i) part[i] = static_cast<int>(result[i]);
  return part;
}

}  // namespace percussion::parallel
