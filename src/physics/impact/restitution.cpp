// Energetic restitution: one inelastic QP, one elastic resolution, their blend (notes 003 Alg. J2).
#include "percussion/physics/impact/restitution.hpp"

#include <cmath>
#include <numeric>
#include <stdexcept>

namespace percussion::impact {

RestitutionResult energetic_restitution(const ImpactSystem& system, std::vector<double>& v,
                                        const ElasticResolver& elastic, const RestitutionOptions& options) {
  const double c = options.restitution;
  if (!(c >= 0.0 && c <= 1.0)) throw std::invalid_argument("impact: restitution must lie in [0, 1]");
  RestitutionResult result;
  const int m = system.constraints();
  const double norm = std::sqrt(system.energy_norm_squared(v.data()));
  result.norm_before = result.norm_after = norm;
  result.impulses.assign(static_cast<std::size_t>(m), 0.0);
  result.inelastic.impulses = result.impulses;
  result.inelastic.norm_before = result.inelastic.norm_after = norm;
  bool violated = false;
  for (int i = 0; i < m && !violated; ++i) violated = system.slope(i, v.data()) < -options.tolerance * norm;
  if (!violated) {
    result.terminated = result.inelastic.terminated = result.elastic.terminated = true;
    result.reason = result.inelastic.reason = result.elastic.reason = "feasible";
    result.elastic.impulses = result.impulses;
    result.elastic.norm_before = result.elastic.norm_after = norm;
    return result;
  }

  // The inelastic end: one QP over every active constraint (a violated set would leave v_in infeasible for
  // contacts the projection makes approach).
  std::vector<int> all(static_cast<std::size_t>(m));
  std::iota(all.begin(), all.end(), 0);
  std::vector<double> v_in = v;
  if (c == 1.0) {
    result.inelastic.terminated = true;
    result.inelastic.reason = "not needed";
  } else {
    const ImpactQp problem(system, all, v.data());
    const QpResult alpha = problem.solve_nonnegative(options.qp);
    result.inelastic.iterations = 1;
    result.inelastic.terminated = alpha.converged;
    result.inelastic.reason = alpha.converged ? "feasible" : "inelastic QP not solved: " + alpha.reason;
    if (alpha.converged) {
      for (int i = 0; i < m; ++i) {
        if (alpha.x[i] != 0.0) system.apply(i, alpha.x[i], v_in.data());
      }
      result.inelastic.impulses = alpha.x;
    }
    result.inelastic.norm_after = std::sqrt(system.energy_norm_squared(v_in.data()));
  }

  std::vector<double> v_el = v;
  if (c > 0.0 && result.inelastic.terminated) {
    result.elastic = elastic(system, v_el);
  } else {
    result.elastic.terminated = result.inelastic.terminated;
    result.elastic.reason = c > 0.0 ? "not run" : "not needed";
    result.elastic.impulses.assign(static_cast<std::size_t>(m), 0.0);
    result.elastic.norm_before = result.elastic.norm_after = norm;
  }
  result.terminated = result.inelastic.terminated && result.elastic.terminated;
  if (!result.terminated) {
    result.reason = result.inelastic.terminated ? "elastic half: " + result.elastic.reason : result.inelastic.reason;
    return result;
  }
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = (1.0 - c) * v_in[k] + c * v_el[k];
  for (int i = 0; i < m; ++i) result.impulses[i] = (1.0 - c) * result.inelastic.impulses[i] + c * result.elastic.impulses[i];
  result.reason = "feasible";
  result.norm_after = std::sqrt(system.energy_norm_squared(v.data()));
  return result;
}

}  // namespace percussion::impact
