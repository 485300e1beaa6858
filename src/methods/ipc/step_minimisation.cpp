// StepMinimisation (step_minimisation.hpp).
#include "percussion/methods/ipc/step_minimisation.hpp"

#include <cmath>
#include <limits>

#include "percussion/core/error.hpp"
#include "percussion/solvers/petsc_check.hpp"

namespace percussion::ipc {

using solvers::petsc_check;

StepMinimisation::StepMinimisation(const ElasticSystem& system, PhaseTimers& timers)
    : system_(system), timers_(timers) {
  assembly_phase_ = timers_.phase("assembly");
  solve_phase_ = timers_.phase("linear solve");
  x_ = system_.create_vector();
  petsc_check(VecDuplicate(x_, &base_), "VecDuplicate");
  petsc_check(VecDuplicate(x_, &gradient_), "VecDuplicate");
  petsc_check(VecDuplicate(x_, &direction_), "VecDuplicate");
  hessian_ = system_.create_matrix();

  // Rigid motions of the rest configuration: the near-nullspace GAMG coarsens with.
  Vec coordinates = nullptr;
  petsc_check(VecDuplicate(x_, &coordinates), "VecDuplicate");
  system_.to_global(system_.rest(), coordinates);
  MatNullSpace rigid = nullptr;
  petsc_check(MatNullSpaceCreateRigidBody(coordinates, &rigid), "MatNullSpaceCreateRigidBody");
  petsc_check(MatSetNearNullSpace(hessian_, rigid), "MatSetNearNullSpace");
  petsc_check(MatNullSpaceDestroy(&rigid), "MatNullSpaceDestroy");
  petsc_check(VecDestroy(&coordinates), "VecDestroy");

  make_ksp();
}

void StepMinimisation::make_ksp() {
  KSPDestroy(&ksp_);
  petsc_check(KSPCreate(system_.comm(), &ksp_), "KSPCreate");
  petsc_check(KSPSetOptionsPrefix(ksp_, "ipc_"), "KSPSetOptionsPrefix");
  petsc_check(KSPSetType(ksp_, KSPCG), "KSPSetType");
  PC pc = nullptr;
  petsc_check(KSPGetPC(ksp_, &pc), "KSPGetPC");
  petsc_check(PCSetType(pc, PCGAMG), "PCSetType");
  // Newton's test is on ‖p‖∞: an inexact direction only needs to be a good descent direction, but a loose one costs
  // iterations near the minimiser.
  petsc_check(KSPSetTolerances(ksp_, 1e-10, 1e-50, PETSC_DEFAULT, 10000), "KSPSetTolerances");
  petsc_check(KSPSetFromOptions(ksp_), "KSPSetFromOptions");
}

void StepMinimisation::set_terms(const StepTerms& terms, double residual_scale) {
  terms_ = terms;
  scale_ = residual_scale;
  make_ksp();
}

StepMinimisation::~StepMinimisation() {
  KSPDestroy(&ksp_);
  MatDestroy(&hessian_);
  VecDestroy(&x_);
  VecDestroy(&base_);
  VecDestroy(&gradient_);
  VecDestroy(&direction_);
}

solvers::NewtonProblem::Evaluation StepMinimisation::evaluate(int /*iteration*/) {
  {
    ScopedPhase t(timers_, assembly_phase_);
    system_.to_local(x_, local_);
    parts_ = system_.evaluate(local_, terms_, gradient_, hessian_);
  }
  energy_ = parts_.total();
  if (parts_.inverted > 0 || !std::isfinite(energy_))
    throw NumericalError("IPC Newton: " + std::to_string(parts_.inverted) +
                         " inverted elements or a non-finite energy at an iterate");
  ScopedPhase t(timers_, solve_phase_);
  petsc_check(KSPSetOperators(ksp_, hessian_, hessian_), "KSPSetOperators");
  petsc_check(KSPSolve(ksp_, gradient_, direction_), "KSPSolve");
  KSPConvergedReason reason;
  petsc_check(KSPGetConvergedReason(ksp_, &reason), "KSPGetConvergedReason");
  PetscInt its = 0;
  petsc_check(KSPGetIterationNumber(ksp_, &its), "KSPGetIterationNumber");
  krylov_ += its;
  if (reason < 0 && reason != KSP_DIVERGED_ITS)
    throw NumericalError(std::string("IPC Newton: the linear solve (-ipc_ksp_*) failed: ") +
                         KSPConvergedReasons[reason]);
  petsc_check(VecScale(direction_, -1.0), "VecScale");
  PetscReal p_max = 0;
  petsc_check(VecNorm(direction_, NORM_INFINITY, &p_max), "VecNorm");
  return {p_max / scale_, ""};
}

solvers::NewtonProblem::SlopeTerms StepMinimisation::slope_terms() const {
  const PetscScalar *g = nullptr, *p = nullptr;
  PetscInt n = 0;
  VecGetLocalSize(gradient_, &n);
  VecGetArrayRead(gradient_, &g);
  VecGetArrayRead(direction_, &p);
  SlopeTerms s;
  for (PetscInt i = 0; i < n; ++i) s.slope += g[i] * p[i];
  VecRestoreArrayRead(gradient_, &g);
  VecRestoreArrayRead(direction_, &p);
  // Φ's round-off scale: its magnitude (once, on the first rank).
  int rank = 0;
  MPI_Comm_rank(system_.comm(), &rank);
  s.roundoff = rank == 0 ? std::abs(parts_.inertia) + std::abs(parts_.elastic) + std::abs(parts_.damping) +
                               std::abs(parts_.loads)
                         : 0.0;
  return s;
}

void StepMinimisation::descent() {
  petsc_check(VecCopy(gradient_, direction_), "VecCopy");
  petsc_check(VecScale(direction_, -1.0), "VecScale");
}

void StepMinimisation::begin_line_search(double /*alpha*/) {
  petsc_check(VecCopy(x_, base_), "VecCopy");
  base_energy_ = energy_;
}

double StepMinimisation::trial(double alpha, int /*k*/) {
  petsc_check(VecWAXPY(x_, alpha, direction_, base_), "VecWAXPY");
  ScopedPhase t(timers_, assembly_phase_);
  system_.to_local(x_, local_);
  const PotentialParts trial = system_.evaluate(local_, terms_, nullptr, nullptr);
  // An inverted element is outside the potential's domain: the search halves the step.
  if (trial.inverted > 0 || !std::isfinite(trial.total())) return std::numeric_limits<double>::infinity();
  return trial.total() - base_energy_;
}

void StepMinimisation::end_iteration(bool accepted, double alpha) {
  if (accepted) petsc_check(VecWAXPY(x_, alpha, direction_, base_), "VecWAXPY");
  else petsc_check(VecCopy(base_, x_), "VecCopy");
}

}  // namespace percussion::ipc
