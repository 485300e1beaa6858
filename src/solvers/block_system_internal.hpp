#pragma once
// What the files of BlockSystem share (not part of its interface).
#include <petscksp.h>

#include <string>

#include "percussion/solvers/block_system.hpp"
#include "percussion/solvers/fused_cg.hpp"

namespace percussion::solvers::detail {

// CG on a split system stops on W⁻¹(b − A y), the residual in the preconditioner's norm, not |b − A y|: at half the
// caller's rtol its Newton steps are as good as IC(0)'s at the full one.
inline constexpr double kSplitForcing = 0.5;

// The Krylov method under `prefix`, set from the options: by default the fused CG (fused_cg_ksp.hpp) with
// `default_pc` if that is one of the project's preconditioners, PETSc's CG with PETSc's; -<system_prefix>petsc_cg
// asks for PETSc's CG instead of the fused one. Its norm is the true residual (the Newton forcing term bounds
// |A y + g| / |g|, whatever the preconditioner), the natural one on the Eisenstat preconditioners' split systems.
KSP make_ksp(MPI_Comm comm, const std::string& prefix, const std::string& default_pc, const std::string& system_prefix);

// The preconditioner -<prefix>pc_type asks for, else `default_pc`.
std::string asked_pc(const std::string& prefix, const std::string& default_pc);

inline BlockSystem::Result to_result(const FusedCgResult& cg) {
  BlockSystem::Result r{};
  r.iterations = cg.iterations;
  r.reason = static_cast<int>(cg.reason);
  r.residual_norm = cg.residual_norm;
  return r;
}

}  // namespace percussion::solvers::detail
