#pragma once
// What the bonded DEM knows about its own plausible states: how far its kinetic energy can grow between two of the
// driver's checks (Method::implausible_change), and whether the particles it starts from overlap.
#include <string>

#include "percussion/core/observable_set.hpp"
#include "percussion/methods/bdem/domain.hpp"
#include "percussion/methods/bdem/scene.hpp"

namespace percussion::bdem {

// Kinetic energy comes from the state's own energy (kinetic and potential, bonds, contacts, gravity's height), from
// the boundary conditions that drive particles and from gravity's work since the start. A run whose kinetic energy
// exceeds kGrowth times all of that at the previous check is diverging (an explicit step above its stable step
// multiplies it by orders of magnitude per step).
class EnergyBound {
 public:
  static constexpr double kGrowth = 1e6;
  EnergyBound() = default;
  // Collective: the total mass and the fastest particle of the state a run starts (or restarts) from.
  EnergyBound(const Domain& d, const BdemScene& scene, double start_time);
  // A description of the growth from `before` to `now` at time t, or empty while within the bound.
  std::string exceeded(const ObservableSet& before, const ObservableSet& now, double t) const;

 private:
  double mass_ = 0;        // total, kg
  double speed_ = 0;       // fastest particle at the start plus the fastest boundary condition, m/s
  double gravity_ = 0;     // |g|, m/s^2
  double start_time_ = 0;  // s
  double floor_ = 0;       // J: the energy of the whole mass moving a particle radius per scene duration
};

// Collective, at a fresh start: rank 0 warns with the number of particle pairs (not bonded) that overlap by more
// than `tolerance` of the smaller radius, and the deepest overlap. Returns the global count.
long warn_initial_overlaps(const Domain& d, double tolerance = 0.05);

}  // namespace percussion::bdem
