#include "percussion/solvers/block_system.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <limits>
#include <vector>

#include "percussion/solvers/avx2_block_kernels.hpp"
#include "percussion/solvers/block_cholesky.hpp"
#include "percussion/solvers/block_preconditioners.hpp"
#include "percussion/solvers/fused_cg_ksp.hpp"
#include "block_system_internal.hpp"

namespace percussion::solvers {

namespace {
// Inverts one SPD block in place (B: fixed size, or Eigen::Dynamic with the size bs).
template <int B>
void invert_block(double* d, int bs) {
  using Block = Eigen::Matrix<double, B, B, Eigen::RowMajor>;  // PETSc blocks are row-major
  Eigen::Map<Block> block(d, bs, bs);
  // SBAIJ holds the upper triangle: mirror it, and so read every block the same way.
  block.template triangularView<Eigen::StrictlyLower>() = block.transpose();
  bool inverted = false;
  if constexpr (B != Eigen::Dynamic) {
    inverted = cholesky_inverse<B>(d, d);
  } else {
    const Eigen::LLT<Block> llt(block);
    if (llt.info() == Eigen::Success) block = llt.solve(Block::Identity(bs, bs));
    inverted = llt.info() == Eigen::Success;
  }
  if (!inverted) {  // not positive definite (only an unprojected Hessian gets here): scale by |diagonal|
    const Eigen::Matrix<double, B, 1> a = block.diagonal().cwiseAbs().cwiseMax(1e-300);
    block = a.cwiseInverse().asDiagonal();
  }
}

// y_r = D_r⁻¹ x_r for the n blocks of the inverted diagonal (floats: a preconditioner, read once per CG iteration;
// each block column by column).
template <int B>
void apply_blocks(const float* inverse, const double* x, double* y, PetscInt n, int bs) {
#if PERCUSSION_AVX2_KERNELS
  if constexpr (B == 6)
    if (avx2::supported()) return avx2::block_diagonal_apply(n, inverse, x, y);
#endif
  using Block = Eigen::Matrix<float, B, B, Eigen::ColMajor>;
  using Vector = Eigen::Matrix<double, B, 1>;
  for (PetscInt r = 0; r < n; ++r)
    Eigen::Map<Vector>(y + r * bs, bs).noalias() =
        Eigen::Map<const Block>(inverse + r * bs * bs, bs, bs).template cast<double>() *
        Eigen::Map<const Vector>(x + r * bs, bs);
}
}  // namespace

bool BlockSystem::factor_icc(Mat P) {
  const std::optional<double> shift = icc_.factor(P);
  count_factorisation(shift);
  return shift.has_value();
}

void BlockSystem::apply_icc(const double* x, double* y) const { icc_.apply(x, y); }

void BlockSystem::invert_diagonal() {
  const std::size_t bb = static_cast<std::size_t>(bs_ * bs_);
  // A block equal to the one its slot last inverted keeps that inverse. Between the Newton iterations of a step
  // (contact refreshes) only the particles whose contacts opened or closed change their diagonal blocks, and in the
  // broken, contact-rich steps that run on point-block Jacobi every solve inverted all of them again.
  if (inverted_diagonal_.size() != diagonal_.size() || diagonal_inverse_.size() != diagonal_.size()) {
    inverted_diagonal_.assign(diagonal_.size(), std::numeric_limits<double>::quiet_NaN());  // equal to no block
    diagonal_inverse_.assign(diagonal_.size(), 0.0f);
  }
  std::vector<PetscInt> idx(static_cast<std::size_t>(bs_));
  std::vector<double> block(bb);
  for (PetscInt r = 0; r < n_owned_; ++r) {
    double* d = block.data();
    total_diagonal(r, replaceable_, d);
    if (!diagonal_complete_) {  // some diagonal block was added elsewhere: read the assembled upper triangle
      for (int k = 0; k < bs_; ++k) idx[static_cast<std::size_t>(k)] = (first_row_ + r) * bs_ + k;
      for (int k = 0; k < bs_; ++k)
        petsc_check(MatGetValues(A_, 1, &idx[static_cast<std::size_t>(k)], bs_ - k, &idx[static_cast<std::size_t>(k)],
                                 d + k * bs_ + k),
                    "MatGetValues");
    }
    double* last = &inverted_diagonal_[static_cast<std::size_t>(r) * bb];
    if (std::equal(d, d + bb, last)) continue;  // (never for a NaN: NaN equals nothing)
    std::copy_n(d, bb, last);
    if (bs_ == 6) invert_block<6>(d, bs_);
    else invert_block<Eigen::Dynamic>(d, bs_);
    float* inverse = &diagonal_inverse_[static_cast<std::size_t>(r) * bb];
    for (int i = 0; i < bs_; ++i)  // to floats, column by column (d is row-major)
      for (int j = 0; j < bs_; ++j) inverse[j * bs_ + i] = static_cast<float>(d[i * bs_ + j]);
    ++diagonal_inversions_;
  }
  diagonal_inverted_ = true;
}

void BlockSystem::apply_block_jacobi(const double* x, double* y) const {
  if (bs_ == 6) apply_blocks<6>(diagonal_inverse_.data(), x, y, n_owned_, bs_);
  else apply_blocks<Eigen::Dynamic>(diagonal_inverse_.data(), x, y, n_owned_, bs_);
}


BlockSystem::Result BlockSystem::solve_fallback(std::span<const double> rhs, std::span<double> solution,
                                                double rtol) {
  make_fallback_ksp();
  if (!gauss_seidel_fallback_ || blocks_ == Blocks::GaussSeidel || !fused_fallback_cg_ || !own_blocks_)
    return solve_block_jacobi(fallback_, rhs, solution, rtol);
  if (!set_up_gauss_seidel()) return solve_block_jacobi(fallback_, rhs, solution, rtol);
  return run_split(gauss_seidel_, rhs, solution, rtol, fallback_);
}

void BlockSystem::make_fallback_ksp() {
  if (fallback_) return;
  fallback_ = detail::make_ksp(comm_, prefix_ + "fallback_", kPointBlockJacobiPc, prefix_);
  PC pc;
  petsc_check(KSPGetPC(fallback_, &pc), "KSPGetPC");
  bind_block_preconditioner(pc, this);
  // (With other options the fallback is point-block Jacobi by the KSP and preconditioner they name.)
  fused_fallback_cg_ = runs_on_arrays(fallback_) && pc_type(pc) == kPointBlockJacobiPc;
}

BlockSystem::Result BlockSystem::solve_block_jacobi(std::span<const double> rhs, std::span<double> solution,
                                                    double rtol) {
  make_fallback_ksp();
  return solve_block_jacobi(fallback_, rhs, solution, rtol);
}

BlockSystem::Result BlockSystem::solve_block_jacobi(KSP ksp, std::span<const double> rhs, std::span<double> solution,
                                                    double rtol) {
  if (!diagonal_inverted_) invert_diagonal();
  PC pc;
  petsc_check(KSPGetPC(ksp, &pc), "KSPGetPC");
  if (runs_on_arrays(ksp) && pc_type(pc) == kPointBlockJacobiPc)
    return run_fused(ksp, rhs, solution, rtol, &BlockSystem::apply_block_jacobi);
  petsc_check(KSPSetOperators(ksp, A_, A_), "KSPSetOperators");
  return run(ksp, rhs, solution, rtol);
}

}  // namespace percussion::solvers
