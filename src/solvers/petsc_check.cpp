#include "percussion/solvers/petsc_check.hpp"

#include <string>

#include "percussion/core/error.hpp"

namespace percussion::solvers {

void petsc_check(PetscErrorCode code, const char* what) {
  if (code == 0) return;
  const char* text = nullptr;
  PetscErrorMessage(code, &text, nullptr);
  throw NumericalError(std::string("PETSc: ") + what + " failed: " + (text ? text : "unknown error"));
}

}  // namespace percussion::solvers
