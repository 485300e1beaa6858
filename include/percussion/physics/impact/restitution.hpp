#pragma once
// Energetic restitution (notes 003 Alg. J2; Smith et al. 2012's generalized restitution): the perfectly inelastic
// result v_in = v + M⁻¹Nα of one contact QP over ALL active constraints (α = argmin_{α≥0} ½αᵀNᵀM⁻¹Nα + αᵀNᵀv, the
// projection of v onto the feasible cone), the elastic result v_el of a terminating elastic operator, and
// (1 − c) v_in + c v_el. Both ends are feasible and no more energetic than v, so the blend is too (the cone is
// convex, the energy convex in c); unlike restitution inside each reflection it keeps termination for every c.
#include <functional>
#include <string>
#include <vector>

#include "percussion/physics/impact/contact_qp.hpp"
#include "percussion/physics/impact/impact_system.hpp"
#include "percussion/physics/impact/resolution.hpp"

namespace percussion::impact {

// An elastic resolver: Gauss–Seidel or Generalized Reflections with their options bound, e.g.
// [&](const ImpactSystem& s, std::vector<double>& v) { return generalized_reflections(s, v, options); }.
using ElasticResolver = std::function<Resolution(const ImpactSystem&, std::vector<double>&)>;

struct RestitutionOptions {
  double restitution = 1.0;  // c in [0, 1]: 0 perfectly inelastic, 1 elastic
  double tolerance = 1e-10;  // eps: nothing to do when every n_iᵀv ≥ −eps‖v‖_M
  QpOptions qp;              // the inelastic QP
};

struct RestitutionResult {
  bool terminated = false;       // both halves finished (the QP solved, the elastic operator terminated)
  std::string reason;            // "feasible", or which half failed and why
  Resolution inelastic;          // the one QP: iterations 1, impulses α
  Resolution elastic;            // the elastic operator's own report
  std::vector<double> impulses;  // (1 − c) α + c λ_el per constraint: the normal impulses of the result
  double norm_before = 0.0;      // ‖v‖_M before and after
  double norm_after = 0.0;
};

// Resolves v in place with restitution c; v is left unchanged when a half fails.
RestitutionResult energetic_restitution(const ImpactSystem& system, std::vector<double>& v,
                                        const ElasticResolver& elastic, const RestitutionOptions& options);

}  // namespace percussion::impact
