#pragma once
// Approximate lineality (notes 003 Alg. I, with the δ ≤ eps reading of Appendix A item 6): after the exact implicit
// equalities are projected out (Alg. F), a reduced cone whose δ is still at most eps is as good as jammed for the
// inexact operators (Alg. G/H: about π/δ reflections, unbounded in floating point). While δ ≤ eps, the constraints
// in the support of δ's minimising λ join the removed set and the projection is redone. Weights below sqrt(eps) of
// the largest are left out of the support when the rest still combines to within eps of zero: they belong to
// constraints that only correct the residual, not to jammed ones (a heuristic, as the notes say).
#include <vector>

#include "percussion/physics/impact/impact_system.hpp"
#include "percussion/physics/impact/lineality.hpp"
#include "percussion/physics/impact/lineality_distance.hpp"

namespace percussion::impact {

struct ApproximateLinealityOptions {
  double eps = 1e-10;  // the operators' feasibility tolerance
  LinealityDistanceOptions distance;
};

struct ApproximateLinealityReport {
  std::vector<int> exact;        // I of the linear program
  std::vector<int> approximate;  // constraints added because δ ≤ eps, ascending
  double delta = 0.0;            // δ (upper bound) of the final reduced system; +inf when it has no constraint
  double delta_lower = 0.0;      // its certified lower bound (from the program's dual or TAO's minimiser)
  int rounds = 0;                // δ computations
};

// I ∪ (approximate implicit equalities), ready for AntiLocking. On the added constraints `combination` holds δ's
// minimising weights, a combination within eps of zero rather than zero, so the impulses AntiLocking reports on a
// cluster holding them explain the velocity change only to about eps times the impulses. The cheap exit: the program's dual
// certificate, projected, bounds the reduced δ from below; above eps no δ is computed at all.
ImplicitEqualities find_approximate_implicit_equalities(const ImpactSystem& system,
                                                        const ApproximateLinealityOptions& options,
                                                        const LinealityOptions& lineality = {},
                                                        ApproximateLinealityReport* report = nullptr);

}  // namespace percussion::impact
