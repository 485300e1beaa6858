#pragma once
// The calling rank's diagonal block of a symmetric block matrix (SBAIJ or MPISBAIJ; 6×6 blocks for the
// single-precision kernels, any size for BlockSystem's direct assembly), as they read it: block CSR of the upper triangle (each row's diagonal block first, then later columns in
// ascending order) and PETSc's values, each block stored column by column.
#include <petscmat.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "percussion/core/error.hpp"
#include "percussion/solvers/petsc_check.hpp"

namespace percussion::solvers {

struct SbaijBlock {
  static constexpr int kBlock = 6;       // the block size the single-precision kernels are written for
  Mat local = nullptr;                   // owned by the matrix it came from
  PetscInt rows = 0;
  std::vector<PetscInt> first, column;  // block row k: first[k] .. first[k+1]
  // Checks A (SBAIJ of block size `block_size`; `who` names the caller in the message) and copies the local block's
  // structure.
  SbaijBlock(Mat A, const char* who, int block_size = kBlock);
  // Calls f(values) with the local block's value array (36 per block, in `column` order).
  template <class F>
  void with_values(F&& f) const;
  // A block of the value array that is all zeros: a contact candidate apart, which the kernels leave out.
  static bool zero(const PetscScalar* block) {
    return std::all_of(block, block + kBlock * kBlock, [](PetscScalar v) { return v == 0.0; });
  }
};

template <class F>
void SbaijBlock::with_values(F&& f) const {
  PetscScalar* values = nullptr;
  petsc_check(MatSeqSBAIJGetArray(local, &values), "MatSeqSBAIJGetArray");
  f(static_cast<const PetscScalar*>(values));
  petsc_check(MatSeqSBAIJRestoreArray(local, &values), "MatSeqSBAIJRestoreArray");
}

// An incomplete factorisation that meets a pivot block that is not positive definite is restarted on
// A + α|diag A| (Manteuffel's shift): try(0), then α = 0.01 doubling. Returns the α that succeeded, or nothing
// past 24 doublings (α ≈ 1e5, where the diagonal dominates any matrix whose diagonal is positive; a zero or
// non-finite diagonal entry never factors). Not thrown: one rank's failure must become every rank's decision
// (BlockSystem), or the others would wait in the next collective.
template <class TryFactor>
std::optional<double> factor_with_shift(TryFactor&& try_factor) {
  if (try_factor(0.0)) return 0.0;
  double shift = 1e-2;
  for (int attempt = 0; attempt < 24; ++attempt, shift *= 2)
    if (try_factor(shift)) return shift;
  return std::nullopt;
}

}  // namespace percussion::solvers
