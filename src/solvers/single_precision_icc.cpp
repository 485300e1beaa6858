#include "percussion/solvers/single_precision_icc.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <limits>
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

std::optional<double> SinglePrecisionIcc::factor(Mat A) {
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
  const std::optional<double> shift = factor_with_shift([&](double shift) {
    block.with_values([&](const PetscScalar* values) { load(block, values); });
    return try_factor(shift);
  });
  factored_ = shift.has_value();
  half_ready_ = false;
#if PERCUSSION_AVX2_KERNELS
  if (avx2_ && half_ && shift) {
    upper_half_.resize(upper_.size());  // with upper_'s padding
    half_ready_ = avx2::to_half(upper_.data(), upper_.size(), upper_half_.data());
  }
#endif
  return shift;
}

void SinglePrecisionIcc::load(const SbaijBlock& block, const PetscScalar* values) {
  const std::size_t n = static_cast<std::size_t>(n_), nnz = column_.size();
  avx2::resize_padded(work_, (nnz + n) * BB);
  diagonal_magnitude_.resize(n * B);
  float* diag = &work_[nnz * BB];
  for (std::size_t k = 0; k < n; ++k) {  // PETSc stores a block column by column: transpose into row-major
    const std::size_t begin = static_cast<std::size_t>(block.first[k]), end = static_cast<std::size_t>(block.first[k + 1]);
    const Eigen::Map<const Block> d(values + begin * BB);  // its transpose, whose diagonal is the same
    Eigen::Map<BlockF>{diag + k * BB} = d.transpose().cast<float>();
    Eigen::Map<Vec>{&diagonal_magnitude_[k * B]} = d.diagonal().cwiseAbs();
    for (std::size_t p = begin + 1; p < end; ++p)
      Eigen::Map<BlockF>{&work_[(p - k - 1) * BB]} = Eigen::Map<const Block>(values + p * BB).transpose().cast<float>();
  }
}

bool SinglePrecisionIcc::try_factor(double shift) {
  const std::size_t n = static_cast<std::size_t>(n_);
  const std::size_t nnz = column_.size();
  // work_ = [off-diagonal blocks Ũ, updated in place | diagonal blocks], as load() left them. The elimination runs
  // in single precision like the factor it produces; only each pivot is inverted in double.
  float* diag = &work_[nnz * BB];
  avx2::resize_padded(upper_, nnz * BB);
  avx2::resize_padded(pivot_inverse_, n * BB);
  for (std::size_t k = 0; k < n; ++k) {
    Block pivot = Eigen::Map<const BlockF>(diag + k * BB).cast<double>();
    pivot.triangularView<Eigen::StrictlyLower>() = pivot.transpose();  // the diagonal block's upper triangle
    if (shift > 0) pivot.diagonal() += shift * Eigen::Map<const Vec>(&diagonal_magnitude_[k * B]);
    Block inverse;
    if (!cholesky_inverse<B>(pivot.data(), inverse.data())) return false;
    float* dk = &pivot_inverse_[k * BB];
    Eigen::Map<BlockF>{dk} = inverse.cast<float>();
#if PERCUSSION_AVX2_KERNELS
    if (avx2_) {
      avx2::icc_eliminate_row(static_cast<PetscInt>(k), first_.data(), column_.data(), dk, work_.data(), diag,
                              upper_.data());
      continue;
    }
#endif
    const PetscInt begin = first_[k], end = first_[k + 1];
    auto block = [](std::vector<float>& v, PetscInt p) { return Eigen::Map<BlockF>(&v[static_cast<std::size_t>(p) * BB]); };
    for (PetscInt q = begin; q < end; ++q) block(upper_, q).noalias() = Eigen::Map<const BlockF>(dk) * block(work_, q);
    // Schur complement on the pattern: A_jl −= Ũ_kjᵀ D_k⁻¹ Ũ_kl for the blocks (j, l), j ≤ l, of row k.
    for (PetscInt p = begin; p < end; ++p) {
      const PetscInt j = column_[static_cast<std::size_t>(p)];
      const BlockF ukj = block(work_, p);
      Eigen::Map<BlockF>(diag + static_cast<std::size_t>(j) * BB).noalias() -= ukj.transpose() * block(upper_, p);
      PetscInt r = first_[static_cast<std::size_t>(j)];  // both rows are sorted: walk row j along row k
      const PetscInt r_end = first_[static_cast<std::size_t>(j) + 1];
      for (PetscInt q = p + 1; q < end && r < r_end; ++q) {
        const PetscInt l = column_[static_cast<std::size_t>(q)];
        while (r < r_end && column_[static_cast<std::size_t>(r)] < l) ++r;
        if (r < r_end && column_[static_cast<std::size_t>(r)] == l)
          block(work_, r).noalias() -= ukj.transpose() * block(upper_, q);
      }
    }
  }
  return true;
}

void SinglePrecisionIcc::apply(const double* x, double* y) const {
  const std::size_t n = static_cast<std::size_t>(n_);
  constexpr std::size_t S = avx2::kStride;
  t_.resize(n * S);
  if (!factored_) {  // BlockSystem fails the solve on every rank; PETSc's CG, if it runs, carries the NaN to all
    std::fill_n(y, n * B, std::numeric_limits<double>::quiet_NaN());
    return;
  }
#if PERCUSSION_AVX2_KERNELS
  if (avx2_ && half_ready_)
    return avx2::icc_apply(n_, first_.data(), column_.data(), upper_half_.data(), pivot_inverse_.data(), x, y, t_.data());
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
