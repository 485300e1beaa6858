#pragma once
// Armijo backtracking along a descent direction, for the Newton-type minimisers of implicit methods (implicit BDEM
// now; IPC, whose first trial is bounded by continuous collision detection, next). The caller owns the state: trial()
// moves it to the step it is given and returns the energy change there. Every decision is taken on numbers that are
// the same on every rank (global sums), so the ranks accept or refuse together.
namespace percussion::solvers {

struct BacktrackingLineSearch {
  double armijo = 1e-4;     // sufficient decrease: Φ(α) − Φ(0) ≤ armijo · α · slope
  int max_backtracks = 40;  // trials before the search gives up

  struct Result {
    bool accepted = false;
    double alpha = 0;   // the accepted step; after a refusal, the last one tried halved
    double change = 0;  // Φ(α) − Φ(0) at the last trial
    int trials = 0;
  };

  // Collective through trial(alpha, k) (k: the trial's index, from 0), which moves the state to step alpha and
  // returns Φ(alpha) − Φ(0). Tries alpha0 (the caller's bound: a full step, a step-length cap, a collision-free step),
  // then halves it. `slope` is ∇Φ·d < 0; below `noise` an energy change is round-off, and a step whose predicted
  // decrease −α·slope is below it is taken if its change is too: near the minimiser the Armijo test would refuse
  // correct Newton steps on round-off alone.
  template <class Trial>
  Result search(double alpha0, double slope, double noise, Trial&& trial) const {
    Result r;
    r.alpha = alpha0;
    for (int k = 0; k < max_backtracks; ++k, r.alpha *= 0.5) {
      r.change = trial(r.alpha, k);
      ++r.trials;
      r.accepted = r.change <= armijo * r.alpha * slope || (-r.alpha * slope < noise && r.change < noise);
      if (r.accepted) break;
    }
    return r;
  }
};

}  // namespace percussion::solvers
