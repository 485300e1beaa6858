#pragma once
// Pairwise Gauss–Seidel (notes 003 Alg. B with the tolerance and renormalisation of Alg. G): while some constraint
// is significantly violated, reflect one of them, v ← v − 2(n_iᵀv)M⁻¹n_i, in one of three orders.
#include <cstdint>
#include <vector>

#include "percussion/physics/impact/impact_system.hpp"
#include "percussion/physics/impact/resolution.hpp"

namespace percussion::impact {

enum class GaussSeidelOrder {
  lowest_index,   // always the violated constraint of lowest index (lexicographic)
  most_violated,  // the most negative n_iᵀv; ties to the lower index
  random,         // uniform among the violated ones, from `seed`
};

struct GaussSeidelOptions {
  ResolveOptions resolve;
  GaussSeidelOrder order = GaussSeidelOrder::lowest_index;
  std::uint64_t seed = 0;
  // Newton's restitution inside each reflection, v ← v − (1 + c)(n_iᵀv)M⁻¹n_i (notes Alg. J1). Below 1 it loses
  // the guarantee (inelastic collapse) and turns renormalisation off; the diagnostic cap then ends the loop.
  double restitution = 1.0;
};

// Resolves v in place. `impulses` of the result holds the accumulated λ per constraint.
Resolution gauss_seidel(const ImpactSystem& system, std::vector<double>& v, const GaussSeidelOptions& options);

}  // namespace percussion::impact
