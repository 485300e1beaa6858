#pragma once
// A distributed SPD ring of 6x6 blocks for the tests of BlockSystem on 1, 2 and 3 ranks: kRowsPerRank rows per rank,
// each with its diagonal block and its two ring neighbours, the same blocks on every rank count.
#include <mpi.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "percussion/solvers/block_system.hpp"

namespace percussion::test {

using solvers::BlockSystem;
using Block = Eigen::Matrix<double, 6, 6, Eigen::RowMajor>;


inline constexpr int kRowsPerRank = 7;

// Deterministic from the global row, so every rank builds the same blocks.
inline Block ring_block(int seed) {
  std::mt19937 gen(static_cast<unsigned>(seed) * 7919u + 13u);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Block b;
  for (int i = 0; i < 36; ++i) b.data()[i] = u(gen);
  return b;
}

// SPD: every row g has the diagonal 4 I + R Rᵀ, and each ring edge (g, g+1) adds [S −S; −S S], S = BᵀB.
struct RingSystem {
  int rank = 0, size = 1, rows = 0;
  Block diagonal(int g) const {
    const Block r = ring_block(g);
    return 4.0 * Block::Identity() + r * r.transpose();
  }
  Block edge(int g) const {
    const Block b = ring_block(1000 + g);
    return b.transpose() * b;
  }
  // Adds the matrix to `sys`. own_rows_only: each rank adds the blocks of its own rows (its edges' halves);
  // otherwise the rank owning row g adds all four blocks of edge (g, g+1), some in another rank's rows.
  // All blocks are multiplied by `scale`. Without `assemble` the caller adds more blocks and assembles.
  void add_to(BlockSystem& sys, bool own_rows_only, double scale = 1.0, bool assemble = true) const {
    const int first = rank * kRowsPerRank;
    sys.zero();
    for (int g = first; g < first + kRowsPerRank; ++g) {
      const Block d = scale * diagonal(g);
      sys.add_block(g, g, d.data());
    }
    for (int g = 0; g < rows; ++g) {
      const int a = g, b = (g + 1) % rows;
      const Block s = scale * edge(g), minus = -s;
      const bool owns_a = a / kRowsPerRank == rank, owns_b = b / kRowsPerRank == rank;
      if (own_rows_only) {
        if (owns_a) {
          sys.add_block(a, a, s.data());
          sys.add_block(a, b, minus.data());
        }
        if (owns_b) {
          sys.add_block(b, b, s.data());
          sys.add_block(b, a, minus.data());
        }
      } else if (owns_a) {
        sys.add_block(a, a, s.data());
        sys.add_block(a, b, minus.data());
        sys.add_block(b, a, minus.data());
        sys.add_block(b, b, s.data());
      }
    }
    if (assemble) sys.assemble();
  }
  // The assembled diagonal block of row g.
  Block full_diagonal(int g) const { return diagonal(g) + edge(g) + edge((g - 1 + rows) % rows); }
};

// The ring over all ranks, kRowsPerRank rows each.
inline RingSystem world_ring() {
  RingSystem ring;
  MPI_Comm_rank(MPI_COMM_WORLD, &ring.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ring.size);
  ring.rows = ring.size * kRowsPerRank;
  return ring;
}

inline double max_over_ranks(double v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return v;
}

// max |scale·reference − y| / max |scale·reference| over every rank's values: how far y is from scale times a
// reference solution.
inline double relative_difference(const std::vector<double>& reference, const std::vector<double>& y, double scale = 1.0) {
  double diff = 0, norm = 0;
  for (std::size_t k = 0; k < y.size(); ++k) {
    diff = std::max(diff, std::abs(scale * reference[k] - y[k]));
    norm = std::max(norm, std::abs(scale * reference[k]));
  }
  return max_over_ranks(diff) / max_over_ranks(norm);
}

inline void preallocate(BlockSystem& sys) {
  // Each row couples to itself and its two ring neighbours, which may be on other ranks.
  std::vector<PetscInt> d_nnz(kRowsPerRank, 3), o_nnz(kRowsPerRank, 2);
  sys.preallocate(kRowsPerRank, d_nnz, o_nnz);
}

}  // namespace percussion::test
