#pragma once
// Friction as a one-way post-pass (notes 003 Alg. J3; Smith et al. 2012): after a frictionless resolution with
// normal impulses α_k, one maximal-dissipation problem: the tangential impulses β_k with ‖β_k‖ ≤ μ_k α_k that
// minimise the kinetic energy of v + M⁻¹Dβ. The normal impulses are not revisited, so the frictionless operator's
// termination guarantee stands; β = 0 is admissible, so the energy never increases.
//
// In 2D a contact has one tangent and the constraint is the box |β_k| ≤ μ_k α_k. In 3D the disc ‖β_k‖ ≤ μ_k α_k is
// replaced by the regular polygon with 2K sides inscribed in it (K = `generators`, default 8: 16 sides, inradius
// cos(π/16) ≈ 0.981 of the disc's): the polygon is the Minkowski sum of K segments [−h, h]·g_j along equally spaced
// tangent directions g_j with h = μα sin(π/2K), so the problem stays a bound-constrained QP, solved by TAO like the
// contact QP. The fan is turned so that a vertex points along the contact's slip before friction: a contact that
// slides gets exactly μα, as with the disc. The admissible set lies inside the disc, never outside.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "percussion/physics/impact/contact_qp.hpp"
#include "percussion/physics/impact/impact_system.hpp"

namespace percussion::impact {

// One frictional contact, built by the caller next to the ImpactSystem's normal constraint.
struct FrictionContact {
  int constraint = -1;  // the normal constraint: its ends carry the tangent blocks, its impulse bounds β
  double mu = 0.0;      // Coulomb coefficient, ≥ 0
  // Raw tangent covectors built like the normal's raw gradient with a unit tangent t in place of ν (balls: −t on
  // end a, t on end b; rigid bodies: (t, r×t) on a, (−t, −r×t) on b), so that their multipliers are physical
  // impulses. 2D: t1 only; 3D: t1 and t2 orthonormal. The *_b blocks are empty for a one-sided contact.
  std::vector<double> t1_a, t1_b, t2_a, t2_b;
};

struct FrictionOptions {
  int generators = 8;  // K: the 3D polygon has 2K sides
  QpOptions qp;
};

struct FrictionResult {
  bool converged = false;      // the QP was solved (v unchanged otherwise)
  std::string reason;
  std::int64_t iterations = 0;     // TAO iterations
  std::vector<double> tangential;  // per contact: the impulse β_k along (t1, t2), physical units (t2 part 0 in 2D)
  double norm_before = 0.0;        // ‖v‖_M before and after
  double norm_after = 0.0;
};

// Applies the friction impulses to v. `normal_impulses` are a frictionless resolution's impulses per constraint,
// in the system's normalised multipliers (Resolution::impulses, RestitutionResult::impulses).
FrictionResult friction_post_pass(const ImpactSystem& system, std::span<const FrictionContact> contacts,
                                  std::span<const double> normal_impulses, std::vector<double>& v,
                                  const FrictionOptions& options = {});

}  // namespace percussion::impact
