#pragma once
// Explicit bonded DEM (the reference the implicit method is measured against): velocity Verlet for positions
// and quaternions, bond forces and torques, fracture, contact with friction, obstacles and gravity.
#include <mpi.h>

#include <Eigen/Core>
#include <span>
#include <vector>

#include "percussion/methods/bdem/domain.hpp"
#include "percussion/methods/method.hpp"

namespace percussion::bdem {

class ExplicitBdem final : public Method {
 public:
  ExplicitBdem(const Scene& scene, MPI_Comm comm, const GlobalModel& model);

  long step() const override { return step_; }
  double time() const override { return static_cast<double>(step_) * dt_; }
  double time_step() const override { return dt_; }
  std::int64_t global_particles() const override { return d_.n_global; }
  std::int64_t global_bonds() const override { return d_.bonds_global; }
  std::int64_t local_particles() const override { return static_cast<std::int64_t>(d_.n_owned); }
  void advance() override;
  Observables observables() override { return d_.observables(interaction_energy_, contacts_); }
  void write_frame(io::TrajectoryWriter& writer) override { d_.write_frame(writer, step_, time(), observables()); }
  void write_checkpoint(const std::string& path) override { d_.write_checkpoint(path, step_, dt_, f_, t_); }
  PhaseTimers& timers() override { return timers_; }

  // This rank's owned particles (ascending global id) and the bonds it evaluates: for tests and tools.
  std::span<const std::int64_t> owned_ids() const { return {d_.gid.data(), d_.n_owned}; }
  std::span<const Eigen::Vector3d> owned_positions() const { return {d_.x.data(), d_.n_owned}; }
  std::span<const Eigen::Vector3d> owned_velocities() const { return {d_.v.data(), d_.n_owned}; }
  std::span<const Eigen::Vector4d> owned_quaternions() const { return {d_.q.data(), d_.n_owned}; }
  const std::vector<Bond>& bonds() const { return d_.bonds; }

 private:
  void compute_forces();

  Scene scene_;
  PhaseTimers timers_;
  Domain d_;
  double dt_ = 0;
  long step_ = 0;
  std::vector<Eigen::Vector3d> f_, t_;  // owned: force, world torque at the current state
  double interaction_energy_ = 0;       // bonds, contacts and obstacles at the current state (this rank's share)
  long contacts_ = 0;
};

}  // namespace percussion::bdem
