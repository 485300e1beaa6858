// PSD projection: eigenvalues clamped at 0, eigenvectors kept, PSD input unchanged, nearest in Frobenius norm.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>

#include "../support/finite_difference.hpp"
#include "percussion/physics/psd_projection.hpp"

namespace test_psd_projection {

using percussion::physics::project_to_psd;

TEST(PsdProjection, ClampsNegativeEigenvalues) {
  Eigen::Matrix2d A;
  A << 1.0, 2.0, 2.0, 1.0;  // eigenvalues 3 and −1 along (1, 1) and (1, −1)
  const Eigen::Matrix2d P = project_to_psd<2>(A);
  Eigen::Matrix2d expected;
  expected << 1.5, 1.5, 1.5, 1.5;
  EXPECT_LT((P - expected).norm(), 1e-14);
}

TEST(PsdProjection, RandomSymmetricMatrices) {
  percussion::test::RandomPoints rnd;
  for (int k = 0; k < 20; ++k) {
    Eigen::Matrix<double, 12, 12> A;
    for (int j = 0; j < 12; ++j) A.col(j) = rnd.vec<12>();
    A = (A + A.transpose()).eval();
    const Eigen::Matrix<double, 12, 12> P = project_to_psd<12>(A);
    const Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, 12, 12>> ea(A), ep(P);
    EXPECT_GT(ep.eigenvalues().minCoeff(), -1e-12);
    EXPECT_LT((P - P.transpose()).norm(), 1e-12);
    // P keeps the positive spectrum and removes the negative part: ‖P − A‖ is the norm of the negative eigenvalues.
    EXPECT_NEAR(ep.eigenvalues().sum(), ea.eigenvalues().cwiseMax(0.0).sum(), 1e-12);
    EXPECT_NEAR((P - A).norm(), ea.eigenvalues().cwiseMin(0.0).norm(), 1e-12);
    // A positive definite matrix is returned unchanged.
    const Eigen::Matrix<double, 12, 12> Q = P * P + Eigen::Matrix<double, 12, 12>::Identity();
    EXPECT_EQ(project_to_psd<12>(Q), Q);
  }
}

}  // namespace test_psd_projection
