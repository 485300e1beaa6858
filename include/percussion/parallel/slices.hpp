#pragma once
// Contiguous slices of n rows over ranks, as a fresh start or a restart spreads items before any partitioner runs.
#include <cstdint>

namespace percussion::parallel {

// Where rank's share of n rows (or units) begins when they are split into size contiguous slices: floor(n·rank/size)
// without overflow. Rank r's slice is [share_begin(n, r, P), share_begin(n, r + 1, P)).
inline std::int64_t share_begin(std::int64_t n, int rank, int size) {
  return n / size * rank + n % size * rank / size;
}

}  // namespace percussion::parallel
