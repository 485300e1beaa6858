#pragma once
// δ = min over λ ≥ 0, Σλ = 1 of ‖Nλ‖_{M⁻¹}: the distance from the origin to the convex hull of the normalised
// gradients (notes 003 Alg. E, detection-and-measure). δ = 0 exactly when there are implicit equalities; a small δ
// is a nearly jammed cone (iteration counts grow like 1/δ) and δ ≤ eps is the inexact algorithms' approximate
// lineality (Alg. I). By minimax duality δ = max over ‖w‖_M ≤ 1 of min_i n_iᵀw, so any w gives a lower bound.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "percussion/physics/impact/impact_system.hpp"

namespace percussion::impact {

struct LinealityDistanceOptions {
  // Converged when delta − lower_bound ≤ relative_gap × delta (checked every iteration, O(nonzeros of N)), or at
  // TAO's absolute gradient tolerance (the objective is ≈ δ²; a jammed cone has no positive lower bound).
  double relative_gap = 1e-8;
  double gradient_tolerance = 1e-15;
  std::int64_t max_iterations = 10000;  // TAO iterations
  std::string prefix = "impact_delta_";  // PETSc options prefix, e.g. -impact_delta_tao_type bqnls
};

struct LinealityDistance {
  double delta = 0.0;        // ‖Nλ‖_{M⁻¹} at the computed λ: δ ≤ delta
  double lower_bound = 0.0;  // min_i n_iᵀw / ‖w‖_M at w = M⁻¹Nλ (0 if negative): lower_bound ≤ δ
  std::vector<double> weights;  // λ on the simplex, one per constraint
  bool converged = false;
  std::string reason;
  std::int64_t iterations = 0;
};

// Solved as the bound-constrained least-squares problem min_{μ ≥ 0} ‖Nμ‖²_{M⁻¹} + (Σμ − 1)² (PETSc TAO, BLMVM by
// default): its minimum is f = δ²/(1 + δ²) at μ = λ/(1 + δ²), which puts the simplex in the objective without an
// equality constraint; matrix-free, O(nonzeros of N) per evaluation. Both bounds are evaluated from λ afterwards,
// so the result certifies itself: delta − lower_bound is the solver's error.
LinealityDistance lineality_distance(const ImpactSystem& system, const LinealityDistanceOptions& options = {});

}  // namespace percussion::impact
