#include "percussion/solvers/sbaij_block.hpp"

#include <string>

#include "percussion/core/error.hpp"

namespace percussion::solvers {

SbaijBlock::SbaijBlock(Mat A, const char* who, int block_size) {
  petsc_check(MatGetDiagonalBlock(A, &local), "MatGetDiagonalBlock");
  PetscInt bs = 0;
  petsc_check(MatGetBlockSize(local, &bs), "MatGetBlockSize");
  PetscBool sbaij = PETSC_FALSE;
  petsc_check(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(local), MATSEQSBAIJ, &sbaij),
              "PetscObjectTypeCompare");
  if (bs != block_size || !sbaij)
    throw NumericalError(std::string(who) + " takes an SBAIJ matrix of block size " + std::to_string(block_size) +
                         " (use -bdem_mat_type sbaij, or another -bdem_pc_type)");
  const PetscInt *ia = nullptr, *ja = nullptr;
  PetscBool done = PETSC_FALSE;
  petsc_check(MatGetRowIJ(local, 0, PETSC_FALSE, PETSC_TRUE, &rows, &ia, &ja, &done), "MatGetRowIJ");
  if (!done) throw NumericalError(std::string(who) + ": MatGetRowIJ gave no block structure");
  first.assign(ia, ia + rows + 1);
  column.assign(ja, ja + ia[rows]);
  PetscInt n = rows;  // MatRestoreRowIJ may clear it
  petsc_check(MatRestoreRowIJ(local, 0, PETSC_FALSE, PETSC_TRUE, &n, &ia, &ja, &done), "MatRestoreRowIJ");
  for (PetscInt k = 0; k < rows; ++k)
    if (first[static_cast<std::size_t>(k)] == first[static_cast<std::size_t>(k) + 1] ||
        column[static_cast<std::size_t>(first[static_cast<std::size_t>(k)])] != k)
      throw NumericalError(std::string(who) + ": block row " + std::to_string(k) + " has no diagonal block");
}

}  // namespace percussion::solvers
