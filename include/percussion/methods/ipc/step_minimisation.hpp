#pragma once
// One step of IPC elastodynamics as the frame's Newton minimiser sees it (solvers/newton.hpp): the incremental
// potential of ElasticSystem plus the contact terms (ContactPotential) at the iterate, the projected-Newton direction
// from a KSP under the prefix -ipc_ (CG + GAMG with the rigid-body near-nullspace by default), a first trial cut
// to the CCD bound of the direction's sweep, backtracking that refuses inverted elements, and IPC's convergence
// test ‖p‖∞/Δt < tolerance evaluated with the direction of the current iterate.
#include <petscksp.h>

#include <memory>
#include <string>
#include <vector>

#include "percussion/core/timer.hpp"
#include "percussion/methods/ipc/contact_potential.hpp"
#include "percussion/methods/ipc/elastic_system.hpp"
#include "percussion/solvers/newton.hpp"

namespace percussion::ipc {

class StepMinimisation : public solvers::NewtonProblem {
 public:
  // Collective. The scene's petsc_options were already given to PETSc's database.
  StepMinimisation(const ElasticSystem& system, const IpcScene& scene, PhaseTimers& timers);
  ~StepMinimisation() override;
  StepMinimisation(const StepMinimisation&) = delete;
  StepMinimisation& operator=(const StepMinimisation&) = delete;

  // The iterate (a global vector of the system); the caller sets it before minimise and reads it after.
  ::Vec iterate() const { return x_; }
  // The terms of this step and the scale of the convergence test (Δt; 1 for a static solve).
  // Also starts the step's linear solver afresh: a preconditioner that carries state across solves (GAMG's
  // hierarchy, which KSPReset keeps) would make a restarted run differ from an uninterrupted one.
  void set_terms(const StepTerms& terms, double residual_scale);
  // Collective: the start of a step from the previous displacement (local-node layout): friction is lagged there
  // (dt > 0), and the pair set is rebuilt at the first iterate.
  void begin_step(const std::vector<double>& u_prev, double dt);
  ContactPotential& contact() { return *contact_; }
  const ContactPotential& contact() const { return *contact_; }
  long krylov_iterations() const { return krylov_; }
  long solver_fallbacks() const { return fallbacks_; }  // steps that switched to the fallback KSP
  void set_solver_fallbacks(long n) { fallbacks_ = n; }  // a restart continues the count
  const PotentialParts& parts() const { return parts_; }  // at the last evaluate()

  Evaluation evaluate(int iteration) override;
  bool search_direction(int /*iteration*/, double /*residual*/) override { return true; }
  SlopeTerms slope_terms() const override;
  void descent() override;
  double first_trial(double alpha, double slope, bool newton) override;
  void begin_line_search(double alpha) override;
  double trial(double alpha, int k) override;
  void end_iteration(bool accepted, double alpha) override;

 private:
  // A new KSP under -ipc_ (CG + GAMG unless the options say otherwise) or, as the fallback of a step whose solve
  // failed, under -ipc_fallback_ (CG + hypre BoomerAMG unless they say otherwise).
  void make_ksp(bool fallback);
  void make_hessian();  // the elements' preallocated matrix, open to contact entries, with the near-nullspace
  KSPConvergedReason solve();  // the direction from the Hessian and gradient; counts Krylov iterations

  const ElasticSystem& system_;
  PhaseTimers& timers_;
  int assembly_phase_ = 0, contact_phase_ = 0, ccd_phase_ = 0, solve_phase_ = 0;
  std::unique_ptr<ContactPotential> contact_;
  bool pairs_current_ = false;   // the pair set covers the iterate (built at it or over a sweep through it)
  std::vector<double> step_local_;
  std::vector<double> u_prev_;  // the step's start (local-node layout) and Δt, where friction is lagged
  double dt_ = 0;
  KSP ksp_ = nullptr;
  ::Mat hessian_ = nullptr;
  MatNullSpace rigid_ = nullptr;
  ::Vec x_ = nullptr, base_ = nullptr, gradient_ = nullptr, direction_ = nullptr;
  std::vector<double> local_;
  StepTerms terms_;
  double scale_ = 1;
  PotentialParts parts_;
  double energy_ = 0, base_energy_ = 0;
  long krylov_ = 0, fallbacks_ = 0;
  bool fallback_ = false;
};

}  // namespace percussion::ipc
