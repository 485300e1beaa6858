// Peak resident memory for the end-of-run table: it rises by what a process touches, and its reduction over ranks
// orders min <= avg <= max with every rank's value on rank 0.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <memory>

#include "percussion/core/memory.hpp"

namespace test_memory {

using percussion::peak_resident_bytes;

TEST(Memory, PeakRisesByTouchedMemory) {
  const std::int64_t before = peak_resident_bytes();
  EXPECT_GT(before, 1 << 20);  // a process with MPI and PETSc linked holds more than 1 MiB
  constexpr std::size_t kBytes = 96u << 20;
  auto block = std::make_unique<char[]>(kBytes);
  std::memset(block.get(), 1, kBytes);  // touched pages are resident
  const std::int64_t after = peak_resident_bytes();
  volatile char sink = block[kBytes - 1];
  (void)sink;
  EXPECT_GE(after - before, static_cast<std::int64_t>(kBytes) - (8 << 20));
  block.reset();
  EXPECT_GE(peak_resident_bytes(), after);  // a high-water mark does not fall
}

TEST(Memory, ReducedOverRanks) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const percussion::MemoryStats s = percussion::reduce_peak_memory(MPI_COMM_WORLD);
  EXPECT_GT(s.min, 0);
  EXPECT_LE(s.min, s.avg);
  EXPECT_LE(s.avg, s.max);
  if (rank == 0) {
    ASSERT_EQ(s.per_rank.size(), static_cast<std::size_t>(size));
    EXPECT_GE(static_cast<double>(s.per_rank[0]), s.min);
    EXPECT_LE(static_cast<double>(s.per_rank[0]), s.max);
  } else {
    EXPECT_TRUE(s.per_rank.empty());
  }
  if (size == 1) {
    EXPECT_EQ(s.min, s.max);
    EXPECT_LE(s.max, static_cast<double>(peak_resident_bytes()));
  }
}

}  // namespace test_memory
