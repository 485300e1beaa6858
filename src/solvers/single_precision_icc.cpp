#include "percussion/solvers/single_precision_icc.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <string>

#include "percussion/core/error.hpp"
#include "percussion/solvers/block_cholesky.hpp"
#include "percussion/solvers/sbaij_block.hpp"

namespace percussion::solvers {
namespace {
constexpr int B = SbaijBlock::kBlock;
constexpr int BB = B * B;
using Block = Eigen::Matrix<double, B, B, Eigen::RowMajor>;
using BlockF = Eigen::Matrix<float, B, B, Eigen::RowMajor>;
using VecF = Eigen::Matrix<float, B, 1>;
using Vec = Eigen::Matrix<double, B, 1>;
}  // namespace

double SinglePrecisionIcc::factor(Mat A) {
  const SbaijBlock block(A, "single-precision IC(0)");
  // The factor keeps the off-diagonal blocks apart from the diagonal ones, both row-major. Each SBAIJ row holds
  // its diagonal block first, so A's block p of row k is the factor's off-diagonal block p − k − 1.
  n_ = block.rows;
  const std::size_t n = static_cast<std::size_t>(n_);
  first_.resize(n + 1);
  column_.resize(block.column.size() - n);
  for (std::size_t k = 0; k <= n; ++k) first_[k] = block.first[k] - static_cast<PetscInt>(k);
  for (std::size_t k = 0; k < n; ++k)
    std::copy(block.column.begin() + block.first[k] + 1, block.column.begin() + block.first[k + 1],
              column_.begin() + first_[k]);
  // Each attempt reads A's values afresh into the work array it eliminates in (a retry is rare).
  return factor_with_shift(
      [&](double shift) {
        block.with_values([&](const PetscScalar* values) { load(block, values); });
        return try_factor(shift);
      },
      "single-precision IC(0)");
}

void SinglePrecisionIcc::load(const SbaijBlock& block, const PetscScalar* values) {
  const std::size_t n = static_cast<std::size_t>(n_), nnz = column_.size();
  work_.resize((nnz + n) * BB);
  diagonal_magnitude_.resize(n * B);
  double* diag = &work_[nnz * BB];
  for (std::size_t k = 0; k < n; ++k) {  // PETSc stores a block column by column: transpose into row-major
    const std::size_t begin = static_cast<std::size_t>(block.first[k]), end = static_cast<std::size_t>(block.first[k + 1]);
    Eigen::Map<Block> d(diag + k * BB);
    d = Eigen::Map<const Block>(values + begin * BB).transpose();
    Eigen::Map<Vec>{&diagonal_magnitude_[k * B]} = d.diagonal().cwiseAbs();
    for (std::size_t p = begin + 1; p < end; ++p)
      Eigen::Map<Block>{&work_[(p - k - 1) * BB]} = Eigen::Map<const Block>(values + p * BB).transpose();
  }
}

bool SinglePrecisionIcc::try_factor(double shift) {
  const std::size_t n = static_cast<std::size_t>(n_);
  const std::size_t nnz = column_.size();
  // work_ = [off-diagonal blocks Ũ, updated in place | diagonal blocks], as load() left them
  double* diag = &work_[nnz * BB];
  avx2::resize_padded(upper_, nnz * BB);
  avx2::resize_padded(pivot_inverse_, n * BB);
  std::vector<Block>& scaled = scaled_;  // D_k⁻¹ Ũ_kl of the row being eliminated
  for (std::size_t k = 0; k < n; ++k) {
    Eigen::Map<Block> pivot(diag + k * BB);
    pivot.triangularView<Eigen::StrictlyLower>() = pivot.transpose();  // the diagonal block's upper triangle
    if (shift > 0) pivot.diagonal() += shift * Eigen::Map<const Vec>(&diagonal_magnitude_[k * B]);
    Block inverse;
    if (!cholesky_inverse<B>(pivot.data(), inverse.data())) return false;
    Eigen::Map<BlockF> pivot_inverse(&pivot_inverse_[k * BB]);
    pivot_inverse = inverse.cast<float>();
    const PetscInt begin = first_[k], end = first_[k + 1];
    if (static_cast<std::size_t>(end - begin) > scaled.size() || scaled.empty())
      scaled.resize(std::max<std::size_t>(1, static_cast<std::size_t>(end - begin)));
#if PERCUSSION_AVX2_KERNELS
    if (avx2_) {
      avx2::icc_eliminate_row(static_cast<PetscInt>(k), first_.data(), column_.data(), inverse.data(), work_.data(),
                              diag, scaled.front().data(), upper_.data());
      continue;
    }
#endif
    for (PetscInt q = begin; q < end; ++q) {
      scaled[q - begin].noalias() = inverse * Eigen::Map<const Block>(&work_[static_cast<std::size_t>(q) * BB]);
      Eigen::Map<BlockF> u(&upper_[static_cast<std::size_t>(q) * BB]);
      u = scaled[q - begin].cast<float>();
    }
    // Schur complement on the pattern: A_jl −= Ũ_kjᵀ D_k⁻¹ Ũ_kl for the blocks (j, l), j ≤ l, of row k.
    for (PetscInt p = begin; p < end; ++p) {
      const PetscInt j = column_[static_cast<std::size_t>(p)];
      const Eigen::Map<const Block> ukj(&work_[static_cast<std::size_t>(p) * BB]);
      Eigen::Map<Block>(diag + static_cast<std::size_t>(j) * BB).noalias() -= ukj.transpose() * scaled[p - begin];
      PetscInt r = first_[static_cast<std::size_t>(j)];  // both rows are sorted: walk row j along row k
      const PetscInt r_end = first_[static_cast<std::size_t>(j) + 1];
      for (PetscInt q = p + 1; q < end && r < r_end; ++q) {
        const PetscInt l = column_[static_cast<std::size_t>(q)];
        while (r < r_end && column_[static_cast<std::size_t>(r)] < l) ++r;
        if (r < r_end && column_[static_cast<std::size_t>(r)] == l)
          Eigen::Map<Block>(&work_[static_cast<std::size_t>(r) * BB]).noalias() -= ukj.transpose() * scaled[q - begin];
      }
    }
  }
  return true;
}

void SinglePrecisionIcc::apply(const double* x, double* y) const {
  const std::size_t n = static_cast<std::size_t>(n_);
  constexpr std::size_t S = avx2::kStride;
  t_.resize(n * S);
#if PERCUSSION_AVX2_KERNELS
  if (avx2_)
    return avx2::icc_apply(n_, first_.data(), column_.data(), upper_.data(), pivot_inverse_.data(), x, y, t_.data());
#endif
  for (std::size_t k = 0; k < n; ++k) Eigen::Map<VecF>{&t_[k * S]} = Eigen::Map<const Vec>(x + k * B).cast<float>();
  // Uᵀ s = x, column by column: s_k is final when reached, then pushed into the later rows it couples to.
  for (std::size_t k = 0; k < n; ++k) {
    const VecF s = Eigen::Map<const VecF>(&t_[k * S]);
    for (PetscInt p = first_[k]; p < first_[k + 1]; ++p)
      Eigen::Map<VecF>(&t_[static_cast<std::size_t>(column_[static_cast<std::size_t>(p)]) * S]).noalias() -=
          Eigen::Map<const BlockF>(&upper_[static_cast<std::size_t>(p) * BB]).transpose() * s;
  }
  // D⁻¹, then U z = w from the last row up.
  for (std::size_t kk = n; kk-- > 0;) {
    VecF z = Eigen::Map<const BlockF>(&pivot_inverse_[kk * BB]) * Eigen::Map<const VecF>(&t_[kk * S]);
    for (PetscInt p = first_[kk]; p < first_[kk + 1]; ++p)
      z.noalias() -= Eigen::Map<const BlockF>(&upper_[static_cast<std::size_t>(p) * BB]) *
                     Eigen::Map<const VecF>(&t_[static_cast<std::size_t>(column_[static_cast<std::size_t>(p)]) * S]);
    Eigen::Map<VecF>{&t_[kk * S]} = z;
    Eigen::Map<Vec>(y + kk * B) = z.cast<double>();
  }
}

}  // namespace percussion::solvers
