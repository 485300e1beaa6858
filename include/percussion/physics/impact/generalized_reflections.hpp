#pragma once
// Generalized Reflections with tolerance and renormalisation (notes 003 Alg. C, H): while some constraint is
// significantly violated (n_iᵀv < −eps‖v‖_M), project v onto the cone of the violated set V by the contact QP,
// p = v + M⁻¹N_Vα, reflect through it, v ← v + M⁻¹N_V(2α), and rescale v to its initial ‖v‖_M. Unlike pairwise
// Gauss–Seidel it breaks no symmetry and its velocity update does not depend on the constraint order.
#include <vector>

#include "percussion/physics/impact/contact_qp.hpp"
#include "percussion/physics/impact/impact_system.hpp"
#include "percussion/physics/impact/resolution.hpp"

namespace percussion::impact {

// Resolves v in place. `iterations` counts QP solves; `impulses` holds the accumulated 2α per constraint. A QP that
// TAO does not solve to options.residual stops the loop with terminated = false and the QP's reason.
Resolution generalized_reflections(const ImpactSystem& system, std::vector<double>& v, const ResolveOptions& options,
                                   const QpOptions& qp = {});

}  // namespace percussion::impact
