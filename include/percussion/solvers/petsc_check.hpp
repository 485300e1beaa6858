#pragma once
#include <petscsys.h>

namespace percussion::solvers {

// PETSc reports errors by code; turn one into an exception naming the call.
void petsc_check(PetscErrorCode code, const char* what);

}  // namespace percussion::solvers
