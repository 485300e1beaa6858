#pragma once
// The product by one rank's diagonal block of a 6×6-block SBAIJ matrix, from a single-precision copy of its
// values. Like the triangular solves of the preconditioner, a CG iteration's matrix product is bound by memory
// traffic, and this block holds nearly all of the matrix (the blocks coupling ranks stay in PETSc, in double).
// attach() puts the copy in place of PETSc's kernel (MatSetOperation on the block, which MPISBAIJ's MatMult
// calls for its local part), so KSP and every Krylov method keep working on the same Mat.
//
// Why it is safe for inexact Newton: the solve only needs a relative residual of 1e-1 to 1e-3 on the double
// system, while the float copy perturbs each entry by 6e-8 relative; the gradient and the convergence test stay
// in double, so the minimiser reached is the same (tests/unit/test_single_precision.cpp checks the product;
// the implicit method's rank-agreement and restart tests run with it).
#include <petscmat.h>

#include <optional>
#include <vector>

#include "percussion/solvers/avx2_block_kernels.hpp"
#include "percussion/solvers/sbaij_block.hpp"

namespace percussion::solvers {

class SinglePrecisionProduct {
 public:
  // Routes the MatMult of A's local diagonal block (SBAIJ or MPISBAIJ, block size 6) through multiply(), which
  // copies that block to floats at its first product after this call. Call after every assembly; this object must
  // outlive A's products. (The copy waits for a product: a Newton step solved with the Gauss–Seidel fallback, whose
  // split reads the blocks itself, multiplies by none, and would pay for a copy at each of its assemblies.)
  void attach(Mat A);
  // y = A_local x on the rank's 6·rows values.
  void multiply(const double* x, double* y) const;
  // Blocks the product reads: the diagonal ones and the nonzero off-diagonal ones of the last attach().
  PetscInt blocks() const {
    copy_if_stale();
    return first_.empty() ? 0 : first_.back();
  }
  // The product runs the AVX2 kernel (avx2_block_kernels.hpp) where the CPU has it, unless turned off here.
  void use_avx2(bool on) { avx2_ = on && avx2::supported(); }

 private:
  void copy_if_stale() const;  // the float copy of the last attach()'s values, if not made yet
  // The block structure the last attach() took, until its values are copied.
  mutable std::optional<SbaijBlock> uncopied_;
  mutable PetscInt n_ = 0;
  // Block row k: first_[k] .. first_[k+1], the diagonal block first, then the nonzero off-diagonal ones.
  mutable std::vector<PetscInt> first_, column_;
  mutable std::vector<float> values_;  // PETSc's layout: each 6×6 block column by column
  bool avx2_ = avx2::supported();
};

}  // namespace percussion::solvers
