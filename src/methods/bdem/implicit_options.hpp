#pragma once
// The implicit BDEM's options of its Newton systems (-bdem_...), read from PETSc's options database.
#include "percussion/solvers/block_system.hpp"

namespace percussion::bdem {

// Sets `system` up from the options: its kernels' precisions, the fallback, the sweeps across ranks and the default
// preconditioner. Returns the preconditioner's blocks (Icc also for PETSc's preconditioners, as their set-ups may
// shift like IC(0)'s). Throws InputError for options that name no preconditioner or one that fails on the matrix.
solvers::BlockSystem::Blocks configure_newton_system(solvers::BlockSystem& system);

}  // namespace percussion::bdem
