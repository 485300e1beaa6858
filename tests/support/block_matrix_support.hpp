#pragma once
// Small sequential symmetric 6x6-block SBAIJ matrices for the tests of the block preconditioners, with their dense
// twins to compare against.
#include <gtest/gtest.h>
#include <petscmat.h>

#include <Eigen/Core>
#include <algorithm>
#include <random>
#include <tuple>
#include <vector>

namespace percussion::test {

using Block6 = Eigen::Matrix<double, 6, 6, Eigen::RowMajor>;

inline Block6 random_block(std::mt19937& gen) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Block6 b;
  for (int i = 0; i < 36; ++i) b.data()[i] = u(gen);
  return b;
}

// n block rows; `blocks` lists (row, column, block) with row ≤ column (the upper triangle). Also returns the
// dense matrix.
struct Sparse {
  int n = 0;
  std::vector<std::tuple<int, int, Block6>> blocks;
  Mat petsc() const {
    Mat A;
    EXPECT_EQ(MatCreateSeqSBAIJ(PETSC_COMM_SELF, 6, 6 * n, 6 * n, 8, nullptr, &A), 0);
    for (const auto& [r, c, b] : blocks) {
      const PetscInt row = r, col = c;
      EXPECT_EQ(MatSetValuesBlocked(A, 1, &row, 1, &col, b.data(), ADD_VALUES), 0);
    }
    MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY);
    MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY);
    return A;
  }
  Eigen::MatrixXd dense() const {
    Eigen::MatrixXd d = Eigen::MatrixXd::Zero(6 * n, 6 * n);
    for (const auto& [r, c, b] : blocks) {
      d.block<6, 6>(6 * r, 6 * c) += b;
      if (r != c) d.block<6, 6>(6 * c, 6 * r) += b.transpose();
    }
    return d;
  }
};

// SPD: diagonal 8 I + R Rᵀ per row, and an edge (a, b) with a non-symmetric coupling block C.
inline Sparse coupled(int n, bool ring, std::mt19937& gen) {
  Sparse s;
  s.n = n;
  for (int i = 0; i < n; ++i) {
    const Block6 r = random_block(gen);
    s.blocks.emplace_back(i, i, 8.0 * Block6::Identity() + r * r.transpose());
  }
  for (int i = 0; i + 1 < n || (ring && i < n); ++i) {
    const int a = std::min(i, (i + 1) % n), b = std::max(i, (i + 1) % n);
    s.blocks.emplace_back(a, b, random_block(gen));
  }
  return s;
}

// Not positive definite: diagonal I and couplings 2I along a chain, so the second pivot of a block factorisation
// is I − 4I. With the shift α, the pivots (1 + α)I − 4 P⁻¹ stay positive along the chain only for α ≥ 3.
inline Sparse indefinite_chain(int n) {
  Sparse s;
  s.n = n;
  for (int i = 0; i < n; ++i) s.blocks.emplace_back(i, i, Block6::Identity());
  for (int i = 0; i + 1 < n; ++i) s.blocks.emplace_back(i, i + 1, 2.0 * Block6::Identity());
  return s;
}

}  // namespace percussion::test
