#pragma once
// The explicit integrator's step: velocity Verlet for positions and quaternions, with the forces of bonds (which
// break at the state they are evaluated at), contacts with damping and friction, obstacles and gravity.
// ExplicitBdem takes every step with it; ImplicitBdem the intervals in which bonds break when
// implicit.fracture_integrator is "explicit", and the transients after a step's breaks (implicit.fracture_transient).
#include <Eigen/Core>
#include <cstdint>
#include <vector>

#include "percussion/methods/bdem/scene.hpp"
#include "percussion/core/timer.hpp"
#include "percussion/methods/bdem/domain.hpp"

namespace percussion::bdem {

class VerletStep {
 public:
  VerletStep(const BdemScene& scene, Domain& d, PhaseTimers& timers) : scene_(scene), d_(d), timers_(timers) {}

  // Collective: force and torque on every owned particle at the current state; a bond over its strength there
  // breaks (its pair falls through to contact, here and in every later evaluation).
  void compute_forces();
  // Collective, while coasting, after move() added particles at the positions of the last evaluation: only the pairs
  // of the slots that joined since then are evaluated again, and the others keep that evaluation's terms (the same
  // positions and moving ends; their contacts' damping read the velocities of then, as at every step, where the
  // forces read the half-kicked velocities). interaction_energy and contacts then count those pairs and the obstacles.
  void compute_forces_of_joined();
  // Collective: the state from time t to t + h, the forces current at the start and again at the end. `step` (the
  // step it ends) names the step in an error message.
  void advance(double t, double h, long step);

  std::vector<Eigen::Vector3d> force, torque;  // owned, world frame, at the current state
  double interaction_energy = 0;  // bonds, contacts and obstacles at the current state (this rank's share)
  long contacts = 0;
  long breaks = 0;  // bonds this rank broke so far
  long rebuilds = 0;  // neighbour rebuilds its steps made
  long full_rebuild_tests = 0;  // coasting steps whose drift bound reached the skin (the same on every rank)
  // When set, the owned slot of the first particle of each bond this rank breaks is appended.
  std::vector<std::int32_t>* break_log = nullptr;

  // Coasting (implicit.fracture_transient_reach): from coast() on, a particle coasts (its velocity and gravity,
  // no forces) until move() lists it; only the pairs with a moving particle are evaluated, and a coasting particle
  // takes none of their forces. uncoast() makes every particle move again.
  // A coasting particle's state is brought up to date only where something reads it: in a listed pair, sent to
  // another rank, at a rebuild, move() or uncoast(). It follows in closed form from its state at an origin (the
  // coast's start, or the last time every particle was brought up to date): x₀ + s v₀ + ½ s² g, v₀ + s g, and
  // exp(ω τ) ⊗ q at the coast's start (τ the time since; its ω is constant), the same on every rank count. The
  // rebuild test bounds the coasting particles' displacements from the origin's, so the steps visit the moving and
  // prescribed particles only, until that bound reaches the skin.
  // Collective.
  void coast();
  // Collective: these owned slots move from now on (and their ghosts on the other ranks).
  void move(const std::vector<std::int32_t>& owned);
  void uncoast();
  bool coasting() const { return coasting_; }  // (the same on every rank, also one without particles)
  bool moves(std::size_t slot) const { return !coasting_ || moving_[slot] != 0; }
  long moving_owned() const { return static_cast<long>(moving_owned_list_.size()); }

 private:
  const BdemScene& scene_;
  Domain& d_;
  PhaseTimers& timers_;

  // Coasting: 1 per local slot (owned, then ghosts) that moves, a double so Domain::forward sends it; the pairs to
  // evaluate, listed once each; each local slot's pairs (pair_start_, pair_index_), rebuilt with the pairs.
  void evaluate_pair(std::size_t k, bool all_move);  // its terms into the pair contributions; may break its bond
  void sum_forces();  // the pair sums and per-particle terms of the particles that take forces
  void list_pairs_of(std::size_t slot);
  void index_pairs();
  // Coasting states: reads_state(i) for an owned slot whose state is read from now on (kept up to date at every
  // step); bring_up_to_date(i) gives a coasting owned slot its current state (behind(i): one that coasts).
  void reads_state(std::size_t owned);
  bool behind(std::size_t owned) const;
  void bring_up_to_date(std::size_t owned);
  void bring_all_up_to_date();
  void set_coast_origin();                // collective; every owned particle up to date
  bool pairs_may_be_missed(long step);    // collective: the rebuild test
  bool coasting_ = false;
  std::vector<double> moving_;
  std::vector<std::int32_t> prescribed_;  // owned slots with a boundary condition
  std::vector<Eigen::Vector4d> coast_q_;  // owned orientations at coast()
  double coast_time_ = 0;                 // time since coast()
  std::vector<Eigen::Vector3d> origin_x_, origin_v_;  // owned, at origin_time_
  double origin_time_ = 0;
  bool any_behind_ = false;               // some rank has a coasting particle
  Eigen::Vector3d centre_a_ = Eigen::Vector3d::Zero(), centre_b_ = Eigen::Vector3d::Zero();
  double radius_a_ = 0, radius_b_ = 0;
  std::vector<char> read_;                // per owned slot: in readers_
  std::vector<std::int32_t> readers_;
  std::vector<std::int32_t> moving_owned_list_;  // the moving owned slots, ascending: the only ones that take forces
  std::vector<char> pair_listed_;
  std::vector<std::int32_t> joined_;      // local slots that moved since the last evaluation
  std::vector<std::uint32_t> pair_seen_;  // per pair: the evaluation that last took it (compute_forces_of_joined)
  std::uint32_t evaluation_ = 0;
  std::vector<std::uint32_t> moving_pairs_, pair_start_, pair_index_;
};

}  // namespace percussion::bdem
