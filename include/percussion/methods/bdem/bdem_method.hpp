#pragma once
// What both BDEM integrators share: the scene, the distributed Domain, the step counter and the views
// tests and tools read. Subclasses supply advance(), observables() and write_checkpoint().
#include <mpi.h>

#include <Eigen/Core>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "percussion/methods/bdem/domain.hpp"
#include "percussion/methods/method.hpp"

namespace percussion::bdem {

class BdemMethod : public Method {
 public:
  BdemMethod(const Scene& scene, MPI_Comm comm, const GlobalModel& model)
      : scene_(scene), d_(scene_, comm, model, timers_), dt_(model.time_step), step_(model.step),
        origin_time_(model.origin_time), origin_step_(model.origin_step) {}

  long step() const override { return step_; }
  double time() const override { return clock().time(step_); }
  double time_step() const override { return dt_; }
  long step_at(double t) const override { return clock().step_at(t); }
  long step_origin() const override { return origin_step_; }
  std::int64_t global_particles() const override { return d_.n_global; }
  std::int64_t global_bonds() const override { return d_.bonds_global; }
  std::int64_t local_particles() const override { return static_cast<std::int64_t>(d_.n_owned); }
  std::int64_t local_ghosts() const override { return static_cast<std::int64_t>(d_.x.size() - d_.n_owned); }
  void write_frame(io::TrajectoryWriter& writer) override { d_.write_frame(writer, step_, time(), observables()); }
  PhaseTimers& timers() override { return timers_; }
  std::map<std::string, double> counters() const override {
    return {{"pair_rebuilds", static_cast<double>(d_.rebuilds())}};
  }

  // This rank's owned particles (ascending global id) and the bonds it evaluates.
  std::span<const std::int64_t> owned_ids() const { return {d_.gid.data(), d_.n_owned}; }
  std::span<const Eigen::Vector3d> owned_positions() const { return {d_.x.data(), d_.n_owned}; }
  std::span<const Eigen::Vector3d> owned_velocities() const { return {d_.v.data(), d_.n_owned}; }
  std::span<const Eigen::Vector3d> owned_angular_velocities() const { return {d_.w.data(), d_.n_owned}; }
  std::span<const Eigen::Vector4d> owned_quaternions() const { return {d_.q.data(), d_.n_owned}; }
  const std::vector<Bond>& bonds() const { return d_.bonds; }
  long pair_rebuilds() const { return d_.rebuilds(); }  // neighbour (pair list and ghost) rebuilds so far

 protected:
  Scene scene_;
  PhaseTimers timers_;
  Domain d_;
  double dt_ = 0;
  long step_ = 0;
  double origin_time_ = 0;  // see StepClock
  long origin_step_ = 0;
  StepClock clock() const { return {dt_, origin_time_, origin_step_}; }
};

}  // namespace percussion::bdem
