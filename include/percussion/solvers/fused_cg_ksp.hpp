#pragma once
// The fused CG loops (fused_cg.hpp) as a PETSc Krylov method, registered as "fusedcg" (kFusedCg): -<prefix>ksp_type
// fusedcg selects it, and the KSP's iteration limit, monitors (-<prefix>ksp_monitor), residual history and
// converged-reason view (-<prefix>ksp_converged_reason) watch it as they watch PETSc's CG. It stops when
// |r| ≤ rtol |b| (the 2-norm of the true residual, or of the split system's with the Eisenstat preconditioners), from
// a zero initial guess. KSPSolve runs it on any operator and preconditioner; BlockSystem runs the same loop on its own
// arrays and kernels (run_fused_cg), which is what makes it faster than KSPCG.
#include <mpi.h>
#include <petscksp.h>

#include <cstddef>
#include <vector>

#include "percussion/solvers/fused_cg.hpp"
#include "percussion/solvers/petsc_check.hpp"

namespace percussion::solvers {

inline constexpr char kFusedCg[] = "fusedcg";

// Registers the fused CG (KSPRegister) and the project's preconditioners (PCRegister, block_preconditioners.hpp)
// with PETSc, once per process; call after PetscInitialize.
void register_solvers();

bool is_type(KSP ksp, const char* type);

// Whether `ksp` may run as the fused CG on the caller's arrays (run_fused_cg): it is "fusedcg", and its monitors
// need only the residual norm (-ksp_monitor). Those that read the solution or residual vectors
// (-ksp_monitor_true_residual, ...) need KSPSolve's vectors: the fused CG then runs through KSPSolve.
bool runs_on_arrays(KSP ksp);

// What the loops report to `ksp`: its iteration count, residual norm and history, its monitors, and at the end its
// converged reason (and, with view_reason, the -ksp_converged_reason and -ksp_view views, which KSPSolve gives
// otherwise).
class FusedCgReport {
 public:
  FusedCgReport(KSP ksp, double rtol);
  void operator()(PetscInt iteration, double residual_norm) const {
    if (monitored_) observe(iteration, residual_norm);
  }
  void finish(const FusedCgResult& result, bool view_reason) const;
  PetscInt max_iterations() const { return max_iterations_; }

 private:
  void observe(PetscInt iteration, double residual_norm) const;
  KSP ksp_;
  PetscInt max_iterations_ = 0;
  bool monitored_ = false;  // some monitor or residual history wants each iteration
};

// Collective. fused_cg on the caller's arrays as `ksp` (its iteration limit, monitors and reason).
template <class T, class Apply>
FusedCgResult run_fused_cg(KSP ksp, MPI_Comm comm, std::size_t n, const double* b, T* x, double rtol,
                           std::vector<T>& work, Apply&& apply) {
  const FusedCgReport report(ksp, rtol);
  const FusedCgResult result = fused_cg(comm, n, b, x, rtol, report.max_iterations(), work, apply, report);
  report.finish(result, true);
  return result;
}

// Collective. fused_pcg on the caller's arrays as `ksp`.
template <class Apply, class Precondition>
FusedCgResult run_fused_pcg(KSP ksp, MPI_Comm comm, std::size_t n, const double* b, double* x, double rtol,
                            std::vector<double>& work, Apply&& apply, Precondition&& precondition) {
  const FusedCgReport report(ksp, rtol);
  const FusedCgResult result =
      fused_pcg(comm, n, b, x, rtol, report.max_iterations(), work, apply, precondition, report);
  report.finish(result, true);
  return result;
}

}  // namespace percussion::solvers
