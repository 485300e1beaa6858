// Fracture of the implicit bonded DEM (notes 2.6): a bond breaks when the forces and moments rebuilt from its
// potentials at a step's end put it over its strength, max(σ/σ_c, τ/τ_c) > 1, checked once per step as the paper
// does (solve_interval). implicit.fracture_rounds breaks a step's bonds in rounds instead, and
// implicit.fracture_cut_ratio halves a step that leaves a bond far over its strength (solve_interval); the
// measurements of both are in docs/implicit_bdem.md.
#include <algorithm>

#include "percussion/methods/bdem/implicit_bdem.hpp"
#include "percussion/physics/bond_forces.hpp"

namespace percussion::bdem {
namespace {
// A fracture round breaks the bonds within this fraction of the largest stress ratio.
constexpr double kFractureBand = 0.9;
}  // namespace

double ImplicitBdem::stress_ratio(const Bond& b) const {
  // Forces and moments rebuilt from the potentials at the current state (notes 2.6): max(σ/σ_c, τ/τ_c).
  const physics::BondStresses st =
      physics::bond_stresses(d_.x[b.la], d_.q[b.la], d_.x[b.lb], d_.q[b.lb], b.rest, scene_.bonds.tensile_only);
  return physics::stress_ratio(st.sigma, st.tau, b.sigma_c, b.tau_c);
}

double ImplicitBdem::largest_stress_ratio() {
  ScopedPhase timer(timers_, Phase::Pairs);
  double local = 0, global = 0;
  for (const auto& b : d_.bonds)
    if (b.intact) local = std::max(local, stress_ratio(b));
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, d_.comm);
  return global;
}

void ImplicitBdem::break_bonds(double above) {
  // Every rank holding a bond sees the same state (ghosts are exact copies), so all decide alike.
  ScopedPhase timer(timers_, Phase::Pairs);
  const long before = breaks_;
  for (auto& b : d_.bonds)
    if (b.intact && stress_ratio(b) > above) {
      b.intact = false;
      ++breaks_;
    }
  if (breaks_ != before) d_.unlink_broken_bonds();
}

void ImplicitBdem::break_in_rounds() {
  // Progressive fracture inside the step (notes 7, "fracture bursts"): break only the most over-stressed
  // bonds, let the load redistribute by minimising again, and repeat; the step's last check (solve_interval)
  // breaks every bond still over its strength, as the paper does once per step.
  for (int round = 1; round < scene_.implicit.fracture_rounds; ++round) {
    const double worst = largest_stress_ratio();
    if (worst <= 1) break;
    ++fracture_rounds_;
    break_bonds(std::max(1.0, kFractureBand * worst));
    if (!minimise()) ++unconverged_steps_;  // not cut: the bonds already broken would have to be mended
  }
}

}  // namespace percussion::bdem
