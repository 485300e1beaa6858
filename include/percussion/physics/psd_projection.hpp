#pragma once
// Projection of a small symmetric matrix onto the positive semi-definite cone (the nearest PSD matrix in the
// Frobenius norm, V max(Λ, 0) Vᵀ). Used per element and per contact pair when projected Newton asks for it; the
// exact Hessians stay unprojected. Only the negative eigenpairs are subtracted, so a PSD input comes back
// bit-for-bit unchanged. (manifold_bond.hpp's project_psd_bond does the same for a bond block.)
#include <Eigen/Core>
#include <Eigen/Eigenvalues>

namespace percussion::physics {

template <int N>
Eigen::Matrix<double, N, N> project_to_psd(const Eigen::Matrix<double, N, N>& A) {
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, N, N>> eig(A);
  const auto& lambda = eig.eigenvalues();  // ascending
  Eigen::Matrix<double, N, N> P = A;
  for (int k = 0; k < N && lambda[k] < 0.0; ++k) {
    const Eigen::Matrix<double, N, 1> v = eig.eigenvectors().col(k);
    P.noalias() -= (lambda[k] * v) * v.transpose();
  }
  return P;
}

}  // namespace percussion::physics
