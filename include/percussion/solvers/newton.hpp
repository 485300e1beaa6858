#pragma once
// A distributed Newton minimiser that a method drives through callbacks (NewtonProblem): evaluation at the iterate
// (energy, gradient and, as the method decides, its Hessian), the search direction (the method's linear solve with
// its own KSP under its option prefix), the energy change along it, and the largest admissible step (IPC's
// continuous collision detection). The loop owns what every such method shares: the convergence tests on the
// method's residual and on the Newton decrement, the descent fallback, the step bound as a minimum over ranks,
// Armijo backtracking (line_search.hpp), the extrapolation of full steps, the iteration cap, the reason it stopped
// and its counters. Every decision is taken on reduced numbers, so all ranks take the same branch.
#include <mpi.h>

#include <limits>
#include <string>

#include "percussion/solvers/line_search.hpp"

namespace percussion::solvers {

// What a method supplies. The state (iterate, base of the line search, direction) is the method's; the loop only
// calls these in order: evaluate, search_direction, slope_terms (and descent after a direction that does not descend),
// step_bound, first_trial, begin_line_search, trial..., end_iteration.
class NewtonProblem {
 public:
  virtual ~NewtonProblem() = default;

  struct Evaluation {
    double residual = 0;     // the convergence measure, the same on every rank
    const char* note = "";   // appended to the monitor's residual line
  };
  // Collective: evaluates Φ at the iterate with what iteration `iteration` needs (its gradient, and the Hessian if
  // the next direction will use it) and returns the convergence measure, a norm of the gradient in the method's
  // units.
  virtual Evaluation evaluate(int iteration) = 0;

  // Collective: the search direction at the iterate evaluated last, whose measure was `residual`. True for a
  // Newton direction whose model curvature along it is −∇Φ·d (an exact solve, or CG from a zero guess): the
  // decrement test and the extrapolation rely on that; false for any other descent direction.
  virtual bool search_direction(int iteration, double residual) = 0;

  struct SlopeTerms {
    double slope = 0;     // this rank's share of ∇Φ·d
    double roundoff = 0;  // this rank's share of Φ's round-off scale (Σ |x|·|∂Φ/∂x|), 0 if none
  };
  virtual SlopeTerms slope_terms() const = 0;  // local

  // Local: replace the direction by one of steepest descent in the method's metric (after a direction along which
  // Φ does not decrease, e.g. an inexact solve of an indefinite system).
  virtual void descent() = 0;

  // Local: the largest step fraction α this rank admits along the direction (e.g. the first time of impact of its
  // contact pairs, or a cap on how far an item moves); infinity for none. The loop takes the minimum over ranks.
  virtual double step_bound() const { return std::numeric_limits<double>::infinity(); }

  // Collective: the line search's first trial, at most `alpha` (min(1, bound)): e.g. the minimiser of a model of Φ
  // along the direction. `slope` is global; `newton` as search_direction() said (false after the descent fallback).
  virtual double first_trial(double alpha, double slope, bool newton) { return alpha; }

  // Local: the line search is about to start from the iterate with trials from `alpha` down (keep the base).
  virtual void begin_line_search(double alpha) {}

  // Collective: move to base ⊕ alpha·direction and return Φ(there) − Φ(base), the same on every rank. `k` counts
  // the trials of this iteration from 0 (the line search's, then the extrapolation's).
  virtual double trial(double alpha, int k) = 0;

  // Collective: the iteration ends with the step `alpha` taken (accepted) or refused (the line search gave up:
  // move back to the base; the minimisation then stops).
  virtual void end_iteration(bool accepted, double alpha) = 0;
};

struct NewtonSettings {
  int max_iterations = 50;
  double tolerance = 1e-8;           // converged when evaluate()'s residual is below it
  // Also converged when a Newton direction's decrement ½λ² = −½∇Φ·d, the predicted decrease of Φ, is below this
  // (in Φ's units; 0: no such test).
  double decrement_tolerance = 0;
  // Energy changes below this multiple of the round-off scale are noise to the line search's Armijo test.
  double roundoff = 8 * std::numeric_limits<double>::epsilon();
  BacktrackingLineSearch line_search{1e-4, 40};
  // Extrapolation of an accepted full Newton step: when the line's curvature (the parabola through Φ(0), the
  // slope and Φ(1)) is below `extrapolation_ratio` of the model's, its minimiser is tried, up to
  // `max_extrapolation` and the step bound, and kept if Φ is lower there.
  bool extrapolate = false;
  // On convergence, also take the last Newton direction (smaller than the tolerance) when the step bound admits it
  // whole and Φ rises by no more than its round-off or the model's predicted decrease: the iterate's error is then
  // that direction's error, not its size.
  bool final_step = false;
  double extrapolation_ratio = 0.5;
  double max_extrapolation = 8.0;
};

enum class NewtonReason {
  Converged,           // the residual fell below the tolerance
  ConvergedDecrement,  // the Newton decrement fell below its tolerance
  LineSearchFailed,    // no trial met the Armijo test (the iterate is back at the base)
  IterationCap,        // max_iterations steps taken
};
const char* to_string(NewtonReason reason);

struct NewtonResult {
  NewtonReason reason = NewtonReason::IterationCap;
  int iterations = 0;   // steps taken (accepted); a failed line search's iteration not counted
  double residual = 0;  // at the last evaluation
  bool converged() const { return reason == NewtonReason::Converged || reason == NewtonReason::ConvergedDecrement; }
};

struct NewtonCounters {
  long minimisations = 0, iterations = 0, line_search_trials = 0, line_search_failures = 0;
  long descent_fallbacks = 0;  // directions replaced by descent()
  long bounded_steps = 0;      // first trials cut below 1 by step_bound()
  long extrapolations_tried = 0, extrapolations = 0;
};

class NewtonMinimiser {
 public:
  // Reads -<prefix>newton_monitor from PETSc's options: print each iteration's residual and step on rank 0.
  NewtonMinimiser(MPI_Comm comm, const std::string& prefix);

  // Collective: Newton iterations from the problem's current state.
  NewtonResult minimise(NewtonProblem& problem, const NewtonSettings& settings);

  const NewtonCounters& counters() const { return counters_; }
  bool monitor() const { return monitor_; }

 private:
  // ∇Φ·d and Φ's round-off scale summed over ranks; the step bound's minimum over ranks.
  NewtonProblem::SlopeTerms reduced_slope_terms(const NewtonProblem& problem) const;
  double reduced_step_bound(const NewtonProblem& problem) const;
  // After convergence: the last direction, whole, if the bound admits it and Φ does not rise by more than the model's
  // predicted decrease (settings.final_step).
  void take_final_step(NewtonProblem& problem, const NewtonSettings& settings);
  // After an accepted full step with energy change `change`: try the parabola's minimiser (settings.extrapolate).
  void try_extrapolation(NewtonProblem& problem, const NewtonSettings& settings, double slope, double change,
                         double bound, int k, double& alpha);

  MPI_Comm comm_;
  int rank_ = 0;
  bool monitor_ = false;
  NewtonCounters counters_;
};

}  // namespace percussion::solvers
