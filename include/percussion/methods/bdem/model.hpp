#pragma once
// The whole bonded-particle model as a scene or a checkpoint describes it, before it is partitioned.
// Every rank builds the same GlobalModel (generators and METIS are deterministic), keeps its part, drops the rest.
#include <Eigen/Core>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "percussion/methods/bdem/scene.hpp"
#include "percussion/physics/bond_rest.hpp"

namespace percussion::bdem {

// How an implicit run's next step starts, besides the state: root attributes of its checkpoints (of the same
// names), so that a restart takes the path the interrupted run would have taken. 0 = absent.
struct StepSchedule {
  int fracture_depth = 0;        // halvings the next step starts at (fracture cuts, implicit.split_above_iterations)
  int block_jacobi_backoff = 0;  // steps the last shifted IC(0) sent to point-block Jacobi (ImplicitBdem::advance)
  int block_jacobi_steps = 0;    // of those, the steps still to start on point-block Jacobi
  int explicit_intervals = 0;    // steps still to take with explicit steps (implicit.explicit_window)
};

// The time at a step: origin_time + (step − origin_step) × time_step. A run from a scene, or one continuing a
// checkpoint at that checkpoint's step length, has the origin 0, 0 (time = step × time_step, bit for bit); a run
// continuing a checkpoint at another step length (the other integrator's) takes the checkpoint's step and time.
struct StepClock {
  double time_step = 0;
  double origin_time = 0;
  long origin_step = 0;
  double time(long step) const { return origin_time + static_cast<double>(step - origin_step) * time_step; }
  // The first step at or after time t.
  long step_at(double t) const {
    return origin_step + static_cast<long>(std::ceil((t - origin_time) / time_step - 1e-9));
  }
};

struct GlobalModel {
  // Particles, indexed by global id.
  std::vector<Eigen::Vector3d> x, v, w, force, torque;  // force/torque only from a checkpoint
  std::vector<Eigen::Vector4d> q;
  std::vector<double> radius, mass;
  std::vector<int> material, constraint;  // constraint: index into scene.boundary_conditions or -1
  // Bonds, indexed by global bond id; pair[k][0] < pair[k][1].
  std::vector<std::array<std::int64_t, 2>> pair;
  std::vector<physics::BondRest> rest;
  std::vector<std::array<double, 2>> strength;  // sigma_c, tau_c
  std::vector<char> intact;
  // From a checkpoint: the rank that owned each particle (reused when restarting on the same rank count, so
  // solver decompositions and hence results are bit-identical) and where pair lists were last rebuilt.
  std::vector<int> owner;
  int owner_ranks = 0;
  std::vector<Eigen::Vector3d> x_ref;
  long step = 0;
  double time_step = 0;
  double origin_time = 0;  // StepClock's origin (checkpoint attributes "origin_time", "origin_step"; 0 if absent)
  long origin_step = 0;
  StepClock clock() const { return {time_step, origin_time, origin_step}; }
  bool from_checkpoint = false;
  // From a checkpoint: which integrator and form wrote it, hence what force/torque hold (explicit: forces and
  // torques; implicit midpoint: ∇V at its last midpoint; implicit backward Euler: zeros). Form "" = unknown.
  std::string written_by_integrator, written_by_form;
  // From an implicit midpoint checkpoint: the length of the step whose midpoint its force/torque are at (the
  // attribute "step" of particles/force; 0 when absent: an older file, taken as its time_step).
  double gradient_step = 0;
  // From an implicit checkpoint: how its next step starts (StepSchedule; all 0 when absent).
  StepSchedule schedule;
  // From an implicit checkpoint whose Newton matrix carries into the next step: 18 numbers per particle, the state
  // the matrix was assembled at (ImplicitBdem::matrix_state_); empty otherwise.
  std::vector<double> newton_state;
  // From an implicit BDF2 checkpoint: per particle x, q, v, ω at the start of the last step (13 numbers, the
  // step's x_{n−1}), and that step's length; empty and 0 otherwise.
  static constexpr int kBdf2HistoryWidth = 13;
  std::vector<double> bdf2_history;
  double bdf2_history_step = 0;

  std::int64_t particles() const { return static_cast<std::int64_t>(x.size()); }
  std::int64_t bonds() const { return static_cast<std::int64_t>(pair.size()); }
};

// Fill bodies with particles, bond touching neighbours, apply boundary conditions and initial velocities.
// Throws InputError naming the scene file and JSON path when a body holds no particle.
GlobalModel model_from_scene(const BdemScene& scene);

// The smallest critical step T of the scene's bodies (notes 2.10), the explicit integrator's stability limit.
double critical_step(const BdemScene& scene);
// The time step the scene asks for: time.step, or step_factor x the smallest critical step (notes 2.10).
double scene_time_step(const BdemScene& scene);

}  // namespace percussion::bdem
