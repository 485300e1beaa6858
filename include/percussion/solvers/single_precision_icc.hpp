#pragma once
// Block incomplete Cholesky IC(0) of one rank's diagonal block of a symmetric 6×6-block SBAIJ matrix: the
// default preconditioner of the Newton systems (block Jacobi across ranks, IC(0) within a rank).
//
// Why our own rather than PETSc's ICC: the factor is kept in single precision. A CG iteration is bound by
// memory traffic, and the two triangular solves read the whole factor; floats halve that (the Newton forcing
// asks for a relative residual of 1e-1 to 1e-3, far above float rounding, and CG itself stays in double).
// And a pivot block that is not positive definite (contact-dominated rows) is caught while factoring: the
// factorisation restarts on A + α|diag A| (Manteuffel's shift, α doubling from 0.01), so the preconditioner
// is SPD whatever the matrix, where PETSc's ICC inverts such a pivot and hands CG an indefinite one.
//
// With A ≈ Uᵀ D U (U unit upper triangular on A's block pattern, D block diagonal), a row k of the factor holds
// D_k⁻¹ and U_kj = D_k⁻¹ Ũ_kj for the upper blocks j of A's row k, Ũ_kj = A_kj − Σ_i Ũ_ikᵀ D_i⁻¹ Ũ_ij over the
// rows i < k holding both (IC(0): no fill outside A's pattern). The elimination runs in single precision too,
// each pivot inverted in double: rounding every Schur update to float leaves the Newton and CG iteration counts
// and the shifts as they are in double, and halves the elimination's work and memory.
#include <petscmat.h>

#include <Eigen/Core>
#include <optional>
#include <vector>

#include "percussion/solvers/avx2_block_kernels.hpp"
#include "percussion/solvers/sbaij_block.hpp"

namespace percussion::solvers {

class SinglePrecisionIcc {
 public:
  // Factor the calling rank's diagonal block of A (SBAIJ or MPISBAIJ, block size 6, every diagonal block
  // present). Returns the shift α that was needed (0 when IC(0) of A itself has positive definite pivots), or
  // nothing when no shift gives positive definite pivots (the factor is then unusable).
  std::optional<double> factor(Mat A);
  // y = (Uᵀ D U)⁻¹ x on the rank's 6·rows() values; NaN after a factorisation that failed.
  void apply(const double* x, double* y) const;
  PetscInt rows() const { return n_; }
  // The application runs the AVX2 kernel (avx2_block_kernels.hpp) where the CPU has it, unless turned off here.
  void use_avx2(bool on) { avx2_ = on && avx2::supported(); }
  // The AVX2 application reads U's blocks as halves (the default) or as floats.
  void use_half(bool on) { half_ = on; }

 private:
  void load(const SbaijBlock& block, const PetscScalar* values);  // A's values into work_, row-major
  bool try_factor(double shift);  // false at the first pivot block that is not positive definite

  PetscInt n_ = 0;
  std::vector<PetscInt> first_, column_;  // A's upper off-diagonal blocks of row k: first_[k] .. first_[k+1]
  std::vector<float> work_;                // one attempt's factorisation: off-diagonal, then diagonal blocks, kPad
  std::vector<double> diagonal_magnitude_;  // |diag A| (6 per row), which the shift scales
  std::vector<float> upper_, pivot_inverse_;  // U_kj and D_k⁻¹, row-major 6×6, then avx2::kPad zeros
  std::vector<avx2::Half> upper_half_;        // U_kj as halves for the AVX2 application, if half_ready_
  bool half_ = true, half_ready_ = false;      // asked for; made (every value fits a half)
  bool factored_ = false;                      // the last factorisation succeeded
  mutable std::vector<float> t_;  // avx2::kStride floats per row
  bool avx2_ = avx2::supported();
};

}  // namespace percussion::solvers
