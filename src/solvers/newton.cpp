#include "percussion/solvers/newton.hpp"

#include <petscsys.h>

#include <algorithm>
#include <cstdio>

#include "percussion/solvers/petsc_check.hpp"

namespace percussion::solvers {

const char* to_string(NewtonReason reason) {
  switch (reason) {
    case NewtonReason::Converged: return "converged";
    case NewtonReason::ConvergedDecrement: return "converged on the Newton decrement";
    case NewtonReason::LineSearchFailed: return "line search failed";
    case NewtonReason::IterationCap: return "iteration cap";
  }
  return "?";
}

NewtonMinimiser::NewtonMinimiser(MPI_Comm comm, const std::string& prefix) : comm_(comm) {
  MPI_Comm_rank(comm_, &rank_);
  PetscBool monitor = PETSC_FALSE;
  petsc_check(PetscOptionsHasName(nullptr, prefix.empty() ? nullptr : prefix.c_str(), "-newton_monitor", &monitor),
              "PetscOptionsHasName");
  monitor_ = monitor == PETSC_TRUE;
}

NewtonResult NewtonMinimiser::minimise(NewtonProblem& problem, const NewtonSettings& settings) {
  ++counters_.minimisations;
  NewtonResult result;
  int iteration = 0;
  for (; iteration < settings.max_iterations; ++iteration) {
    const NewtonProblem::Evaluation evaluation = problem.evaluate(iteration);
    result.residual = evaluation.residual;
    if (monitor_ && rank_ == 0)
      std::fprintf(stderr, "  newton %2d  residual %.3e%s\n", iteration, evaluation.residual, evaluation.note);
    if (evaluation.residual < settings.tolerance) {
      result.reason = NewtonReason::Converged;
      if (settings.final_step && problem.search_direction(iteration, evaluation.residual))
        take_final_step(problem, settings);
      break;
    }
    bool newton = problem.search_direction(iteration, evaluation.residual);
    const NewtonProblem::SlopeTerms terms = reduced_slope_terms(problem);
    double slope = terms.slope;
    // Below this an energy change is round-off: near the minimiser the Armijo test would refuse a correct step.
    const double noise = settings.roundoff * terms.roundoff;
    // ½λ² = −½∇Φ·d: what the Newton model predicts the step still gains (0 at a zero gradient).
    if (newton && settings.decrement_tolerance > 0 && slope <= 0 && -0.5 * slope < settings.decrement_tolerance) {
      result.reason = NewtonReason::ConvergedDecrement;
      break;
    }
    if (!(slope < 0)) {  // e.g. an inexact solve of an indefinite system: descent instead
      newton = false;
      problem.descent();
      ++counters_.descent_fallbacks;
      const double local = problem.slope_terms().slope;
      MPI_Allreduce(&local, &slope, 1, MPI_DOUBLE, MPI_SUM, comm_);
    }
    const double bound = reduced_step_bound(problem);
    double alpha = std::min(1.0, bound);
    counters_.bounded_steps += alpha < 1.0;
    alpha = problem.first_trial(alpha, slope, newton);
    problem.begin_line_search(alpha);
    const BacktrackingLineSearch::Result search = settings.line_search.search(
        alpha, slope, noise, [&](double trial_alpha, int k) { return problem.trial(trial_alpha, k); });
    counters_.line_search_trials += search.trials;
    alpha = search.alpha;
    if (search.accepted && alpha == 1.0 && newton && settings.extrapolate)
      try_extrapolation(problem, settings, slope, search.change, bound, search.trials, alpha);
    if (monitor_ && rank_ == 0) std::fprintf(stderr, "  alpha %.3g\n", alpha);
    problem.end_iteration(search.accepted, alpha);
    if (!search.accepted) {
      ++counters_.line_search_failures;
      result.reason = NewtonReason::LineSearchFailed;
      break;
    }
  }
  result.iterations = iteration;
  counters_.iterations += iteration;
  return result;
}

NewtonProblem::SlopeTerms NewtonMinimiser::reduced_slope_terms(const NewtonProblem& problem) const {
  const NewtonProblem::SlopeTerms terms = problem.slope_terms();
  double local[2] = {terms.slope, terms.roundoff}, global[2];
  MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_SUM, comm_);
  return {global[0], global[1]};
}

double NewtonMinimiser::reduced_step_bound(const NewtonProblem& problem) const {
  double bound = problem.step_bound();
  MPI_Allreduce(MPI_IN_PLACE, &bound, 1, MPI_DOUBLE, MPI_MIN, comm_);
  return bound;
}

void NewtonMinimiser::take_final_step(NewtonProblem& problem, const NewtonSettings& settings) {
  const NewtonProblem::SlopeTerms terms = reduced_slope_terms(problem);
  if (!(terms.slope <= 0) || reduced_step_bound(problem) < 1.0 || problem.first_trial(1.0, terms.slope, true) < 1.0)
    return;
  problem.begin_line_search(1.0);
  const double change = problem.trial(1.0, 0);
  // Below the tolerance Φ's change is mostly the round-off of its terms (near-contact barriers lose more digits than
  // the round-off scale counts): refused only when it rises by more than the model's predicted decrease.
  const bool accepted = change <= std::max(settings.roundoff * terms.roundoff, -terms.slope);
  if (!accepted) problem.trial(0.0, 1);  // back to the converged iterate's energies and contact sets
  problem.end_iteration(accepted, 1.0);
  if (monitor_ && rank_ == 0) std::fprintf(stderr, "  final step %s\n", accepted ? "taken" : "refused");
}

// A full Newton step whose energy fell much less than its quadratic model predicts overestimated the curvature
// along its direction (e.g. a Hessian projected to be positive semi-definite drops negative curvature). The
// model's curvature along a Newton direction is −slope; the parabola through Φ(0), its slope and Φ(1) gives the
// line's own, and its minimiser is tried.
void NewtonMinimiser::try_extrapolation(NewtonProblem& problem, const NewtonSettings& settings, double slope,
                                        double change, double bound, int k, double& alpha) {
  const double curvature = 2.0 * (change - slope);
  if (!(curvature < settings.extrapolation_ratio * -slope)) return;
  const double target =
      std::min({bound, settings.max_extrapolation, curvature > 0 ? -slope / curvature : 1e300});
  if (target < 1.5) return;
  const double extrapolated = problem.trial(target, k);
  ++counters_.extrapolations_tried;
  if (extrapolated < change) {
    alpha = target;
    ++counters_.extrapolations;
    return;
  }
  problem.trial(1.0, k + 1);  // back to the accepted state, its energies and contact sets
}

}  // namespace percussion::solvers
