#pragma once
// The explicit integrator's step: velocity Verlet for positions and quaternions, with the forces of bonds (which
// break at the state they are evaluated at), contacts with damping and friction, obstacles and gravity.
// ExplicitBdem takes every step with it; ImplicitBdem the intervals in which bonds break when
// implicit.fracture_integrator is "explicit", and the transients after a step's breaks (implicit.fracture_transient).
#include <Eigen/Core>
#include <vector>

#include "percussion/core/scene.hpp"
#include "percussion/core/timer.hpp"
#include "percussion/methods/bdem/domain.hpp"

namespace percussion::bdem {

class VerletStep {
 public:
  VerletStep(const Scene& scene, Domain& d, PhaseTimers& timers) : scene_(scene), d_(d), timers_(timers) {}

  // Collective: force and torque on every owned particle at the current state; a bond over its strength there
  // breaks (its pair falls through to contact, here and in every later evaluation).
  void compute_forces();
  // Collective: the state from time t to t + h, the forces current at the start and again at the end. `step` (the
  // step it ends) names the step in an error message.
  void advance(double t, double h, long step);

  std::vector<Eigen::Vector3d> force, torque;  // owned, world frame, at the current state
  double interaction_energy = 0;  // bonds, contacts and obstacles at the current state (this rank's share)
  long contacts = 0;
  long breaks = 0;  // bonds this rank broke so far

 private:
  const Scene& scene_;
  Domain& d_;
  PhaseTimers& timers_;
};

}  // namespace percussion::bdem
