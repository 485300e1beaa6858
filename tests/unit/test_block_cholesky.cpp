// The preconditioners' fixed-size Cholesky kernels against Eigen's LLT: L⁻¹ and A⁻¹ of random SPD 6×6 blocks
// (conditioned up to 1e8), reading only the lower triangle, in place; refusal of indefinite and NaN blocks.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/QR>
#include <cmath>
#include <limits>
#include <random>

#include "percussion/solvers/block_cholesky.hpp"

namespace test_block_cholesky {

using percussion::solvers::cholesky_inverse;
using percussion::solvers::inverse_cholesky_factor;
using Block = Eigen::Matrix<double, 6, 6, Eigen::RowMajor>;

namespace {

// Q diag(λ) Qᵀ with eigenvalues spread over `condition`, Q from a random matrix's QR.
Block random_spd(std::mt19937& rng, double condition) {
  std::uniform_real_distribution<double> u(-1, 1);
  Eigen::Matrix<double, 6, 6> g;
  for (int i = 0; i < 36; ++i) g.data()[i] = u(rng);
  const Eigen::Matrix<double, 6, 6> q = Eigen::HouseholderQR<Eigen::Matrix<double, 6, 6>>(g).householderQ();
  Eigen::Matrix<double, 6, 1> lambda;
  for (int i = 0; i < 6; ++i) lambda[i] = std::pow(condition, i / 5.0) * 3.7;
  return q * lambda.asDiagonal() * q.transpose();
}

}  // namespace

TEST(BlockCholesky, InverseFactorAndInverseMatchEigenOnRandomSpdBlocks) {
  std::mt19937 rng(7);
  for (double condition : {1.0, 1e2, 1e5, 1e8}) {
    for (int trial = 0; trial < 50; ++trial) {
      const Block a = random_spd(rng, condition);
      Block upper_garbage = a;  // only the lower triangle may be read
      upper_garbage.triangularView<Eigen::StrictlyUpper>().setConstant(1e30);

      const Eigen::LLT<Block> llt(a);
      ASSERT_EQ(llt.info(), Eigen::Success);
      const Block l_inverse_ref = llt.matrixL().solve(Block::Identity());
      const Block inverse_ref = llt.solve(Block::Identity());

      Block m;
      ASSERT_TRUE(inverse_cholesky_factor<6>(upper_garbage.data(), m.data()));
      EXPECT_LE((m - l_inverse_ref).norm(), 1e-12 * condition * l_inverse_ref.norm());
      EXPECT_EQ(m.triangularView<Eigen::StrictlyUpper>().toDenseMatrix().norm(), 0.0);
      // L⁻¹ A L⁻ᵀ = I
      EXPECT_LE((m * a * m.transpose() - Block::Identity()).norm(), 1e-14 * condition);

      Block inverse = upper_garbage;  // in place
      ASSERT_TRUE(cholesky_inverse<6>(inverse.data(), inverse.data()));
      EXPECT_LE((inverse - inverse_ref).norm(), 1e-12 * condition * inverse_ref.norm());
      EXPECT_EQ((inverse - inverse.transpose()).norm(), 0.0);
      EXPECT_LE((inverse * a - Block::Identity()).norm(), 1e-14 * condition);
    }
  }
}

TEST(BlockCholesky, RefusesIndefiniteAndNanBlocksAndLeavesThemUntouched) {
  std::mt19937 rng(11);
  Block a = random_spd(rng, 10.0);
  a(4, 4) = -a(4, 4);  // a negative pivot on the way
  const Block before = a;
  Block out = Block::Constant(5.0);
  EXPECT_FALSE(inverse_cholesky_factor<6>(a.data(), out.data()));
  EXPECT_FALSE(cholesky_inverse<6>(a.data(), a.data()));
  EXPECT_EQ((a - before).norm(), 0.0);

  Block b = random_spd(rng, 10.0);
  b(2, 1) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(cholesky_inverse<6>(b.data(), out.data()));
  Block c = Block::Zero();  // singular: the first pivot is zero
  EXPECT_FALSE(cholesky_inverse<6>(c.data(), out.data()));
}

}  // namespace test_block_cholesky
