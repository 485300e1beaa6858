// Generalized Reflections with tolerance and renormalisation (notes 003 Alg. C, H).
#include "percussion/physics/impact/generalized_reflections.hpp"

#include <cmath>
#include <string>

namespace percussion::impact {

Resolution generalized_reflections(const ImpactSystem& system, std::vector<double>& v, const ResolveOptions& options,
                                   const QpOptions& qp) {
  Resolution result;
  result.impulses.assign(static_cast<std::size_t>(system.constraints()), 0.0);
  const double norm0 = std::sqrt(system.energy_norm_squared(v.data()));
  result.norm_before = norm0;
  std::vector<int> violated;
  for (;;) {
    const double threshold = -options.tolerance * std::sqrt(system.energy_norm_squared(v.data()));
    violated.clear();
    for (int c = 0; c < system.constraints(); ++c) {
      if (system.slope(c, v.data()) < threshold) violated.push_back(c);
    }
    if (violated.empty()) {
      result.terminated = true;
      result.reason = "feasible";
      break;
    }
    if (result.iterations >= options.max_iterations) {
      result.reason = "diagnostic cap of " + std::to_string(options.max_iterations) + " QP solves reached with " +
                      std::to_string(violated.size()) + " constraints still violated";
      break;
    }
    const ImpactQp problem(system, violated, v.data());
    const QpResult alpha = problem.solve_nonnegative(qp);
    ++result.iterations;
    if (!alpha.converged) {
      result.reason = "QP " + std::to_string(result.iterations) + " on " + std::to_string(violated.size()) +
                      " violated constraints not solved: " + alpha.reason;
      break;
    }
    for (std::size_t k = 0; k < violated.size(); ++k) {
      if (alpha.x[k] == 0.0) continue;
      system.apply(violated[k], 2.0 * alpha.x[k], v.data());
      result.impulses[violated[k]] += 2.0 * alpha.x[k];
    }
    const double norm = std::sqrt(system.energy_norm_squared(v.data()));
    if (options.renormalise && norm > 0.0) {
      const double scale = norm0 / norm;
      for (double& x : v) x *= scale;
      ++result.renormalisations;
    }
  }
  result.norm_after = std::sqrt(system.energy_norm_squared(v.data()));
  return result;
}

}  // namespace percussion::impact
