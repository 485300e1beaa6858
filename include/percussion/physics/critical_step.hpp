#pragma once
// Critical time step of explicit bonded DEM (notes 001 §2.10): T = 2/sqrt(λ_max) with λ_max = 16 k_n/m for the
// 12-neighbour HCP lattice, k_n = (π/2) E r and m = ρ (4/3) π r³, which simplifies to T = r sqrt(2ρ/(3E)).
#include <cmath>

namespace percussion::physics {

inline double critical_time_step(double radius, double density, double E) {
  return radius * std::sqrt(2.0 * density / (3.0 * E));
}

}  // namespace percussion::physics
