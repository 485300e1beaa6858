// The single-precision kernels of the Newton solve on small sequential SBAIJ matrices. The block IC(0)
// preconditioner: exact where IC(0) is (a block chain has no fill), symmetric positive definite where it is not
// (a ring), and shifted to stay so where the matrix itself would give indefinite pivots; its factor read as
// halves, unless a value does not fit one. The matrix product:
// PETSc's own to float rounding, and the zero blocks of its pattern skipped without changing a bit.
#include <gtest/gtest.h>
#include <petscmat.h>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <random>
#include <vector>

#include "percussion/solvers/single_precision_icc.hpp"
#include "percussion/solvers/single_precision_product.hpp"
#include "../support/block_matrix_support.hpp"

namespace test_single_precision {

using percussion::solvers::SinglePrecisionIcc;
using percussion::solvers::SinglePrecisionProduct;
using Block = percussion::test::Block6;
using percussion::test::coupled;
using percussion::test::indefinite_chain;
using percussion::test::random_block;
using percussion::test::Sparse;

namespace {

Eigen::VectorXd apply(const SinglePrecisionIcc& icc, const Eigen::VectorXd& x) {
  Eigen::VectorXd y(x.size());
  icc.apply(x.data(), y.data());
  return y;
}

}  // namespace

TEST(SinglePrecisionIcc, IsTheExactCholeskySolveOnABlockChain) {
  // A block tridiagonal matrix has no fill: IC(0) is its Cholesky factorisation, so M⁻¹ = A⁻¹ up to float
  // rounding. The coupling blocks are not symmetric, so a transposed block (PETSc stores blocks column by
  // column) would show.
  std::mt19937 gen(3);
  const Sparse s = coupled(12, false, gen);
  Mat A = s.petsc();
  SinglePrecisionIcc icc;
  icc.use_half(false);  // floats: exact to float rounding (the halves' test is below)
  EXPECT_EQ(icc.factor(A), 0.0);
  EXPECT_EQ(icc.rows(), 12);
  const Eigen::MatrixXd dense = s.dense();
  for (int trial = 0; trial < 3; ++trial) {
    const Eigen::VectorXd x = Eigen::VectorXd::Random(72);
    const Eigen::VectorXd exact = dense.llt().solve(x);
    EXPECT_LT((apply(icc, x) - exact).norm(), 1e-5 * exact.norm());
  }
  MatDestroy(&A);
}

TEST(SinglePrecisionIcc, IsTheExactCholeskySolveOnABlockBand) {
  // Couplings to the next two rows: eliminating row k updates the block (k+1, k+2), which is in the pattern, so
  // the factorisation's off-diagonal Schur updates run and IC(0) is still exact. With and without AVX2.
  std::mt19937 gen(17);
  Sparse s;
  s.n = 14;
  for (int i = 0; i < s.n; ++i) {
    const Block r = random_block(gen);
    s.blocks.emplace_back(i, i, 16.0 * Block::Identity() + r * r.transpose());
  }
  for (int i = 0; i < s.n; ++i)
    for (int d = 1; d <= 2 && i + d < s.n; ++d) s.blocks.emplace_back(i, i + d, random_block(gen));
  Mat A = s.petsc();
  const Eigen::MatrixXd dense = s.dense();
  for (bool avx2 : {true, false}) {
    SinglePrecisionIcc icc;
    icc.use_avx2(avx2);
    icc.use_half(false);
    EXPECT_EQ(icc.factor(A), 0.0);
    for (int trial = 0; trial < 3; ++trial) {
      const Eigen::VectorXd x = Eigen::VectorXd::Random(6 * s.n);
      const Eigen::VectorXd exact = dense.llt().solve(x);
      EXPECT_LT((apply(icc, x) - exact).norm(), 1e-5 * exact.norm()) << (avx2 ? "AVX2" : "portable");
    }
  }
  MatDestroy(&A);
}

TEST(SinglePrecisionIcc, IsSymmetricPositiveDefiniteWhereIc0IsApproximate) {
  // Closing the chain into a ring makes fill that IC(0) drops: M ≠ A, but M⁻¹ stays SPD, and it is close
  // enough to A⁻¹ to be worth having.
  std::mt19937 gen(5);
  const Sparse s = coupled(16, true, gen);
  Mat A = s.petsc();
  SinglePrecisionIcc icc;
  EXPECT_EQ(icc.factor(A), 0.0);
  const Eigen::MatrixXd dense = s.dense();
  for (int trial = 0; trial < 5; ++trial) {
    const Eigen::VectorXd x = Eigen::VectorXd::Random(96), y = Eigen::VectorXd::Random(96);
    const Eigen::VectorXd mx = apply(icc, x), my = apply(icc, y);
    EXPECT_NEAR(y.dot(mx), x.dot(my), 1e-5 * mx.norm() * y.norm());
    EXPECT_GT(x.dot(mx), 0.0);
    const Eigen::VectorXd exact = dense.llt().solve(x);
    EXPECT_LT((mx - exact).norm(), 0.5 * exact.norm());  // an approximation, not a different operator
    EXPECT_GT((mx - exact).norm(), 1e-5 * exact.norm());  // and really one: the ring's fill is missing
  }
  MatDestroy(&A);
}

TEST(SinglePrecisionIcc, Avx2ApplicationAgreesWithTheGenericOne) {
  // The tests above run the AVX2 kernels where the CPU has them; here they meet the portable Eigen ones on a ring
  // (factorisation and application).
  if (!percussion::solvers::avx2::supported()) GTEST_SKIP() << "no AVX2/FMA on this CPU";
  std::mt19937 gen(13);
  const Sparse s = coupled(16, true, gen);
  Mat A = s.petsc();
  SinglePrecisionIcc fast, generic;
  generic.use_avx2(false);
  fast.use_half(false);
  ASSERT_EQ(fast.factor(A), 0.0);
  ASSERT_EQ(generic.factor(A), 0.0);
  for (int trial = 0; trial < 3; ++trial) {
    const Eigen::VectorXd x = Eigen::VectorXd::Random(96);
    const Eigen::VectorXd a = apply(fast, x), b = apply(generic, x);
    EXPECT_LT((a - b).norm(), 1e-6 * b.norm());
  }
  MatDestroy(&A);
}

TEST(SinglePrecisionIcc, Avx2ApplicationReadsTheFactorAsHalves) {
  // By default the AVX2 application reads U as halves: on a chain, where the float factor is exact, the result is
  // then A⁻¹x to the halves' rounding (2⁻¹¹ per value), and really not to the floats' (1e-6).
  if (!percussion::solvers::avx2::supported()) GTEST_SKIP() << "no AVX2/FMA/F16C on this CPU";
  std::mt19937 gen(3);
  const Sparse s = coupled(12, false, gen);
  Mat A = s.petsc();
  SinglePrecisionIcc icc;
  ASSERT_EQ(icc.factor(A), 0.0);
  const Eigen::MatrixXd dense = s.dense();
  double worst = 0, least = 1;
  for (int trial = 0; trial < 5; ++trial) {
    const Eigen::VectorXd x = Eigen::VectorXd::Random(72);
    const Eigen::VectorXd exact = dense.llt().solve(x);
    const double error = (apply(icc, x) - exact).norm() / exact.norm();
    worst = std::max(worst, error);
    least = std::min(least, error);
  }
  EXPECT_LT(worst, 2e-3);
  EXPECT_GT(least, 1e-6);
  MatDestroy(&A);
}

TEST(SinglePrecisionIcc, KeepsFloatsWhereTheFactorDoesNotFitHalves) {
  // A = [ε I, I; I, C] with ε = 1e-6: U = ε⁻¹ I, beyond the largest half (65504). The factor stays in floats,
  // and the application is still the exact solve of this chain.
  Sparse s;
  s.n = 2;
  s.blocks.emplace_back(0, 0, 1e-6 * Block::Identity());
  s.blocks.emplace_back(0, 1, Block::Identity());
  s.blocks.emplace_back(1, 1, 2e6 * Block::Identity());
  Mat A = s.petsc();
  SinglePrecisionIcc icc;
  ASSERT_EQ(icc.factor(A), 0.0);
  const Eigen::MatrixXd dense = s.dense();
  const Eigen::VectorXd x = Eigen::VectorXd::Random(12);
  const Eigen::VectorXd exact = dense.llt().solve(x);
  EXPECT_LT((apply(icc, x) - exact).norm(), 1e-5 * exact.norm());
  MatDestroy(&A);
}

TEST(SinglePrecisionIcc, ShiftsTheDiagonalWhenAPivotIsNotPositiveDefinite) {
  // The factorisation must shift to α ≥ 3 (indefinite_chain), and the result must be SPD.
  const Sparse s = indefinite_chain(10);
  Mat A = s.petsc();
  SinglePrecisionIcc icc;
  const double shift = icc.factor(A).value();
  EXPECT_GE(shift, 3.0);
  EXPECT_LT(shift, 8.0);  // doublings from 0.01: 5.12 is the first at or above 3
  for (int trial = 0; trial < 5; ++trial) {
    const Eigen::VectorXd x = Eigen::VectorXd::Random(60);
    EXPECT_GT(x.dot(apply(icc, x)), 0.0);
  }
  MatDestroy(&A);
}

TEST(SinglePrecisionIcc, RejectsAMatrixThatIsNotSbaijOfBlockSizeSix) {
  Mat A;
  ASSERT_EQ(MatCreateSeqBAIJ(PETSC_COMM_SELF, 6, 12, 12, 2, nullptr, &A), 0);
  MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY);
  MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY);
  SinglePrecisionIcc icc;
  EXPECT_THROW(icc.factor(A), std::exception);
  MatDestroy(&A);
}

TEST(SinglePrecisionProduct, ReplacesPetscsProductUpToFloatRounding) {
  std::mt19937 gen(7);
  const Sparse s = coupled(16, true, gen);
  Mat A = s.petsc();
  Vec x, y_double, y_single;
  ASSERT_EQ(MatCreateVecs(A, &x, &y_double), 0);
  ASSERT_EQ(VecDuplicate(y_double, &y_single), 0);
  const Eigen::VectorXd xv = Eigen::VectorXd::Random(96);
  double* xa = nullptr;
  VecGetArray(x, &xa);
  std::copy_n(xv.data(), 96, xa);
  VecRestoreArray(x, &xa);
  ASSERT_EQ(MatMult(A, x, y_double), 0);
  const Eigen::VectorXd exact = s.dense() * xv;
  const double* d = nullptr;
  VecGetArrayRead(y_double, &d);
  EXPECT_LT((Eigen::Map<const Eigen::VectorXd>(d, 96) - exact).norm(), 1e-13 * exact.norm());  // the reference
  VecRestoreArrayRead(y_double, &d);
  // Both kernels: the AVX2 one where the CPU has it (the default), and the portable one.
  for (const bool avx2 : {true, false}) {
    SinglePrecisionProduct product;
    product.use_avx2(avx2);
    product.attach(A);
    ASSERT_EQ(MatMult(A, x, y_single), 0);  // through the replaced operation
    const double* f = nullptr;
    VecGetArrayRead(y_single, &f);
    const Eigen::Map<const Eigen::VectorXd> yf(f, 96);
    EXPECT_LT((yf - exact).norm(), 1e-6 * exact.norm()) << "avx2 " << avx2;   // float values, double vectors
    EXPECT_GT((yf - exact).norm(), 1e-12 * exact.norm()) << "avx2 " << avx2;  // and really from the float copy
    VecRestoreArrayRead(y_single, &f);
  }
  VecDestroy(&x);
  VecDestroy(&y_double);
  VecDestroy(&y_single);
  MatDestroy(&A);
}

TEST(SinglePrecisionProduct, SkipsZeroBlocksOfThePatternBitForBit) {
  // Contact candidates not in contact leave zero blocks in the pattern; the copy leaves them out. The product
  // must be that of the matrix without them, to the bit, and still A x.
  std::mt19937 gen(11);
  const Sparse s = coupled(16, true, gen);
  Sparse with_zeros = s;
  for (int i = 0; i + 3 < s.n; i += 2) with_zeros.blocks.emplace_back(i, i + 3, Block::Zero());
  Block almost = Block::Zero();
  almost(5, 0) = 1e-3;  // a block that is zero but for one entry is kept
  with_zeros.blocks.emplace_back(1, 9, almost);
  Sparse reference = s;
  reference.blocks.emplace_back(1, 9, almost);
  const Eigen::VectorXd xv = Eigen::VectorXd::Random(96);
  auto product_of = [&](const Sparse& m, bool avx2, PetscInt read) {
    Mat A = m.petsc();
    Vec x, y;
    EXPECT_EQ(MatCreateVecs(A, &x, &y), 0);
    double* xa = nullptr;
    VecGetArray(x, &xa);
    std::copy_n(xv.data(), 96, xa);
    VecRestoreArray(x, &xa);
    SinglePrecisionProduct product;
    product.use_avx2(avx2);
    product.attach(A);
    EXPECT_EQ(product.blocks(), read);
    EXPECT_EQ(MatMult(A, x, y), 0);
    const double* f = nullptr;
    VecGetArrayRead(y, &f);
    const Eigen::VectorXd out = Eigen::Map<const Eigen::VectorXd>(f, 96);
    VecRestoreArrayRead(y, &f);
    VecDestroy(&x);
    VecDestroy(&y);
    MatDestroy(&A);
    return out;
  };
  const Eigen::VectorXd exact = reference.dense() * xv;
  for (const bool avx2 : {true, false}) {
    // 16 diagonal blocks, 16 couplings of the ring and the almost-zero block; not the 6 zero ones.
    const Eigen::VectorXd skipped = product_of(with_zeros, avx2, 33), plain = product_of(reference, avx2, 33);
    EXPECT_EQ(skipped, plain) << "avx2 " << avx2;
    EXPECT_LT((skipped - exact).norm(), 1e-6 * exact.norm()) << "avx2 " << avx2;
  }
}

}  // namespace test_single_precision
