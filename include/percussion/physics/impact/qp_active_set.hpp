#pragma once
// The finish of a bound-constrained convex QP (min ½xᵀAx + bᵀx, lower ≤ x ≤ upper, A symmetric positive
// semidefinite) from a feasible iterate, for the impact QPs whose TAO solve stops short of the KKT tolerance
// (notes 003 Alg. H asks for a tiny KKT residual with exact complementarity). A primal active-set method in the
// manner of Lawson–Hanson: the iterate stays feasible and the objective never increases; on the current face the
// free variables take the face's minimiser by a sparse LDLᵀ factorisation of A_FF + ρI refined until A_FF d = −g_F
// holds (proximal-point steps: the shift changes how fast, not where the refinement ends, and A_FF may be singular);
// a step that leaves the bounds stops at the first bound it meets, which joins the fixed set; once the face is
// optimal, the bound variables whose gradient points inside are released. Redundant contacts make A singular and
// the optimal x a set: the null-space part of the start is kept, so a start near the set ends near it.
#include <petscmat.h>

#include <span>
#include <vector>

namespace percussion::impact {

struct ActiveSetOptions {
  double tolerance = 0.0;  // absolute: stop when the projected KKT residual ‖r‖∞ is at most this
  int max_iterations = 1000;  // face solves
  // Release one bound at a time (Lawson–Hanson's rule: the face's columns then stay independent, so its solve meets
  // the target) instead of every bound that points inside (fewer faces, but a face can turn nearly singular).
  bool single_release = false;
};

struct ActiveSetReport {
  bool converged = false;  // the residual reached the tolerance
  int iterations = 0;      // face solves
  int factorisations = 0;  // LDLᵀ factorisations (one per face, more when the shift is lowered)
  double residual = 0.0;   // the last projected KKT residual (absolute)
};

// Projected KKT residual of x (inside the bounds) with gradient g: |g_i| where x_i is free, the part of g_i that
// points out of the bound where x_i sits on one, 0 where lower_i = upper_i.
double projected_residual(std::span<const double> x, std::span<const double> g, std::span<const double> lower,
                          std::span<const double> upper);

// Improves x (inside [lower, upper] on entry, kept there) for the QP with the assembled symmetric A (SeqAIJ) and b.
ActiveSetReport active_set_finish(Mat A, std::span<const double> b, std::span<const double> lower,
                                  std::span<const double> upper, std::vector<double>& x,
                                  const ActiveSetOptions& options);

}  // namespace percussion::impact
