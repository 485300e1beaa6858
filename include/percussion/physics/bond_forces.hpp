#pragma once
// The per-bond kernel of the explicit integrator and of force recovery after an implicit solve:
// forces F = −∇_p V and world torques τ = −½ G_r(q) ∇_q V of stretch + shear + bend/twist, the energy, and
// the bond stresses of the fracture test (notes 001 §2.6, eqs. 12–17). Shared quantities (d, L, the
// hemisphere sign, t) are computed once; no 14-vectors or 14×14 matrices are formed.
#include <Eigen/Core>
#include <algorithm>

#include "percussion/physics/bond_rest.hpp"
#include "percussion/physics/quaternion.hpp"

namespace percussion::physics {

struct BondForces {
  Eigen::Vector3d fi, ti, fj, tj;  // forces and WORLD-frame torques on i and j
  double energy;                   // V_stretch + V_shear + V_bendtwist
  double sigma, tau;               // normal and shear stress of eqs. 12–13
};

struct BondStresses {
  double sigma, tau;  // normal and shear stress of eqs. 12–13
};

BondForces bond_forces(const Eigen::Vector3d& pi, const quat::Quat& qi, const Eigen::Vector3d& pj,
                       const quat::Quat& qj, const BondRest& rest, bool tensile_only);

// The stresses alone, as bond_forces gives them to the bit: the fracture test after an implicit step, which needs
// neither torques nor the energy.
BondStresses bond_stresses(const Eigen::Vector3d& pi, const quat::Quat& qi, const Eigen::Vector3d& pj,
                           const quat::Quat& qj, const BondRest& rest, bool tensile_only);

// How far a bond is loaded relative to its strength, max(σ/σ_c, τ/τ_c): above 1 it breaks (eqs. 12–13).
inline double stress_ratio(double sigma, double tau, double sigma_c, double tau_c) {
  return std::max(sigma / sigma_c, tau / tau_c);
}

// Eqs. 12–13: a bond breaks when either stress exceeds its strength.
inline bool bond_breaks(double sigma, double tau, double sigma_c, double tau_c) {
  return stress_ratio(sigma, tau, sigma_c, tau_c) > 1.0;
}

}  // namespace percussion::physics
