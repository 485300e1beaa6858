// StepMinimisation (step_minimisation.hpp).
#include "percussion/methods/ipc/step_minimisation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "percussion/core/error.hpp"
#include "percussion/solvers/petsc_check.hpp"

namespace percussion::ipc {

using solvers::petsc_check;

StepMinimisation::StepMinimisation(const ElasticSystem& system, const IpcScene& scene, PhaseTimers& timers)
    : system_(system), timers_(timers) {
  assembly_phase_ = timers_.phase("assembly");
  contact_phase_ = timers_.phase("contact");
  ccd_phase_ = timers_.phase("ccd");
  solve_phase_ = timers_.phase("linear solve");
  x_ = system_.create_vector();
  contact_ = std::make_unique<ContactPotential>(system_, scene, x_);
  petsc_check(VecDuplicate(x_, &base_), "VecDuplicate");
  petsc_check(VecDuplicate(x_, &gradient_), "VecDuplicate");
  petsc_check(VecDuplicate(x_, &direction_), "VecDuplicate");
  // Rigid motions of the rest configuration: the near-nullspace GAMG coarsens with.
  ::Vec coordinates = nullptr;
  petsc_check(VecDuplicate(x_, &coordinates), "VecDuplicate");
  system_.to_global(system_.rest(), coordinates);
  petsc_check(MatNullSpaceCreateRigidBody(coordinates, &rigid_), "MatNullSpaceCreateRigidBody");
  petsc_check(VecDestroy(&coordinates), "VecDestroy");
  make_hessian();
  make_ksp(false);
}

void StepMinimisation::make_hessian() {
  MatDestroy(&hessian_);
  hessian_ = system_.create_matrix();
  if (contact_->enabled()) {
    // Contact couples vertices the elements do not: their entries join the pattern as pairs appear.
    petsc_check(MatSetOption(hessian_, MAT_NEW_NONZERO_LOCATIONS, PETSC_TRUE), "MatSetOption");
    petsc_check(MatSetOption(hessian_, MAT_NEW_NONZERO_LOCATION_ERR, PETSC_FALSE), "MatSetOption");
    petsc_check(MatSetOption(hessian_, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE), "MatSetOption");
  }
  petsc_check(MatSetNearNullSpace(hessian_, rigid_), "MatSetNearNullSpace");
}

void StepMinimisation::make_ksp(bool fallback) {
  KSPDestroy(&ksp_);
  petsc_check(KSPCreate(system_.comm(), &ksp_), "KSPCreate");
  petsc_check(KSPSetOptionsPrefix(ksp_, fallback ? "ipc_fallback_" : "ipc_"), "KSPSetOptionsPrefix");
  petsc_check(KSPSetType(ksp_, KSPCG), "KSPSetType");
  PC pc = nullptr;
  petsc_check(KSPGetPC(ksp_, &pc), "KSPGetPC");
  petsc_check(PCSetType(pc, fallback ? PCHYPRE : PCGAMG), "PCSetType");
  // Newton's test is on ‖p‖∞: an inexact direction only needs to be a good descent direction, but a loose one costs
  // iterations near the minimiser.
  petsc_check(KSPSetTolerances(ksp_, 1e-10, 1e-50, PETSC_DEFAULT, 10000), "KSPSetTolerances");
  petsc_check(KSPSetFromOptions(ksp_), "KSPSetFromOptions");
}

void StepMinimisation::set_terms(const StepTerms& terms, double residual_scale) {
  terms_ = terms;
  scale_ = residual_scale;
  fallback_ = false;
  // The AMG hierarchy depends on the stored pattern, which contact grows: each step starts from the elements' own,
  // so a restarted run builds the same preconditioners as an uninterrupted one.
  if (contact_->enabled()) make_hessian();
  make_ksp(false);
}

void StepMinimisation::begin_step(const std::vector<double>& u_prev, double dt) {
  pairs_current_ = false;
  if (!contact_->enabled()) return;
  u_prev_ = u_prev;
  dt_ = dt;
  ScopedPhase t(timers_, contact_phase_);
  contact_->freeze_friction(u_prev, dt);
}

StepMinimisation::~StepMinimisation() {
  KSPDestroy(&ksp_);
  MatDestroy(&hessian_);
  MatNullSpaceDestroy(&rigid_);
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
  if (contact_->enabled() && parts_.inverted == 0) {
    ScopedPhase t(timers_, contact_phase_);
    if (pairs_current_) contact_->update(local_);
    else contact_->build(local_, nullptr);
    pairs_current_ = true;
    if (!contact_->has_kappa()) {
      contact_->initialise_kappa(gradient_);
      // The friction of this first step was lagged before κ, so with zero normal forces: lag it again.
      contact_->freeze_friction(u_prev_, dt_);
      contact_->build(local_, nullptr);
    } else {
      contact_->adapt_kappa();
    }
    const ContactParts c = contact_->energy();
    parts_.barrier = c.barrier;
    parts_.friction = c.friction;
    contact_->add_gradient(gradient_);
    contact_->add_hessian(hessian_);
  }
  energy_ = parts_.total();
  if (parts_.inverted > 0 || !std::isfinite(energy_))
    throw NumericalError("IPC Newton: " + std::to_string(parts_.inverted) +
                         " inverted elements or a non-finite energy at an iterate");
  ScopedPhase t(timers_, solve_phase_);
  KSPConvergedReason reason = solve();
  if (reason < 0 && reason != KSP_DIVERGED_ITS && !fallback_) {
    // Contact between bodies can make the aggregation AMG's preconditioner indefinite (stiff barrier couplings
    // across its aggregates): the rest of the step solves with the -ipc_fallback_ KSP (CG + BoomerAMG).
    fallback_ = true;
    ++fallbacks_;
    make_ksp(true);
    reason = solve();
  }
  if (reason < 0 && reason != KSP_DIVERGED_ITS)
    throw NumericalError(std::string("IPC Newton: the linear solve (-ipc_ksp_*) failed: ") +
                         KSPConvergedReasons[reason]);
  petsc_check(VecScale(direction_, -1.0), "VecScale");
  PetscReal p_max = 0;
  petsc_check(VecNorm(direction_, NORM_INFINITY, &p_max), "VecNorm");
  return {p_max / scale_, ""};
}

KSPConvergedReason StepMinimisation::solve() {
  petsc_check(KSPSetOperators(ksp_, hessian_, hessian_), "KSPSetOperators");
  petsc_check(KSPSolve(ksp_, gradient_, direction_), "KSPSolve");
  KSPConvergedReason reason;
  petsc_check(KSPGetConvergedReason(ksp_, &reason), "KSPGetConvergedReason");
  PetscInt its = 0;
  petsc_check(KSPGetIterationNumber(ksp_, &its), "KSPGetIterationNumber");
  krylov_ += its;
  return reason;
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
                               std::abs(parts_.loads) + std::abs(parts_.barrier) + std::abs(parts_.friction)
                         : 0.0;
  return s;
}

void StepMinimisation::descent() {
  petsc_check(VecCopy(gradient_, direction_), "VecCopy");
  petsc_check(VecScale(direction_, -1.0), "VecScale");
}

double StepMinimisation::first_trial(double alpha, double /*slope*/, bool /*newton*/) {
  if (!contact_->enabled()) return alpha;
  ScopedPhase t(timers_, ccd_phase_);
  system_.to_local(x_, local_);
  system_.to_local(direction_, step_local_);
  // The pairs of the whole sweep x → x + p: every trial and the next iterate are within it.
  contact_->build(local_, &step_local_);
  pairs_current_ = true;
  const double bound = contact_->max_step(step_local_);
  if (!(bound > 0))
    throw NumericalError("IPC Newton: continuous collision detection admits no step along the direction (smallest "
                         "distance " + std::to_string(contact_->min_distance()) + "); a larger barrier stiffness or "
                         "time step resolution may help");
  return std::min(alpha, bound);
}

void StepMinimisation::begin_line_search(double /*alpha*/) {
  petsc_check(VecCopy(x_, base_), "VecCopy");
  base_energy_ = energy_;
}

double StepMinimisation::trial(double alpha, int /*k*/) {
  petsc_check(VecWAXPY(x_, alpha, direction_, base_), "VecWAXPY");
  ScopedPhase t(timers_, assembly_phase_);
  system_.to_local(x_, local_);
  PotentialParts trial = system_.evaluate(local_, terms_, nullptr, nullptr);
  // An inverted element is outside the potential's domain: the search halves the step.
  if (trial.inverted > 0 || !std::isfinite(trial.total())) return std::numeric_limits<double>::infinity();
  if (contact_->enabled()) {
    ScopedPhase c(timers_, contact_phase_);
    contact_->update(local_);
    const ContactParts parts = contact_->energy();
    trial.barrier = parts.barrier;
    trial.friction = parts.friction;
  }
  if (!std::isfinite(trial.total())) return std::numeric_limits<double>::infinity();
  return trial.total() - base_energy_;
}

void StepMinimisation::end_iteration(bool accepted, double alpha) {
  if (accepted) petsc_check(VecWAXPY(x_, alpha, direction_, base_), "VecWAXPY");
  else petsc_check(VecCopy(base_, x_), "VecCopy");
}

}  // namespace percussion::ipc
