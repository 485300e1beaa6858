#pragma once
// What both BDEM integrators share: the scene, the distributed Domain, the step counter and the views
// tests and tools read. Subclasses supply advance(), totals() and snapshot().
#include <mpi.h>

#include <Eigen/Core>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "percussion/methods/bdem/totals.hpp"
#include "percussion/methods/bdem/domain.hpp"
#include "percussion/methods/bdem/plausibility.hpp"
#include "percussion/methods/method.hpp"

namespace percussion::bdem {

class BdemMethod : public Method {
 public:
  BdemMethod(const BdemScene& scene, MPI_Comm comm, Model& model)
      : scene_(scene), d_(scene_, comm, placed(model, scene_, comm), timers_), dt_(model.time_step), step_(model.step),
        origin_time_(model.origin_time), origin_step_(model.origin_step), energy_bound_(d_, scene_, time()) {
    if (step_ == 0) warn_initial_overlaps(d_);
  }

  // Method interface: one fixed step per advance; frames and the end fall at the first step at or after their time.
  std::string variant() const override { return scene_.integrator; }
  double time() const override { return clock().time(step_); }
  long steps() const override { return step_; }
  bool reached(double t) const override { return step_ >= clock().step_at(t); }
  void advance(double /*limit*/) final { advance(); }
  double time_step() const override { return dt_; }
  std::map<std::string, std::int64_t> sizes() const override {
    return {{"particles", d_.n_global}, {"bonds", d_.bonds_global}};
  }
  std::string work_unit() const override { return "particles"; }
  std::int64_t local_items() const override { return static_cast<std::int64_t>(d_.n_owned); }
  double local_work() const override { return static_cast<double>(d_.n_owned + d_.pairs.size()); }
  std::int64_t local_ghosts() const override { return static_cast<std::int64_t>(d_.x.size() - d_.n_owned); }
  ObservableSet observables() override { return named(totals()); }
  std::string implausible_change(const ObservableSet& before, const ObservableSet& now) const override {
    return energy_bound_.exceeded(before, now, time());
  }
  void write_frame(io::TrajectoryWriter& writer) override { d_.write_frame(writer, step_, time(), observables()); }
  PhaseTimers& timers() override { return timers_; }
  void write_checkpoint(const std::string& path) override { d_.write_checkpoint(path, snapshot()); }
  std::unique_ptr<Method> rebalanced() override;  // create.cpp
  std::map<std::string, double> counters() const override {
    std::map<std::string, double> counts{{"pair_rebuilds", static_cast<double>(d_.rebuilds())}};
    for (const auto& [name, value] : carried_) counts[name] += value;
    return counts;
  }

  // BDEM's own view, for tests and tools.
  virtual void advance() = 0;  // one time step, collective
  // Energies, momenta, broken bonds and contacts over all ranks (collective).
  virtual Totals totals() = 0;
  // Collective: the state as a checkpoint holds it (Domain::snapshot with what this integrator carries).
  virtual Model snapshot() const = 0;
  long step() const { return step_; }
  std::int64_t global_particles() const { return d_.n_global; }
  std::int64_t global_bonds() const { return d_.bonds_global; }
  long step_origin() const { return origin_step_; }
  long step_at(double t) const { return clock().step_at(t); }  // the first step at or after time t

  // This rank's owned particles (ascending global id) and the bonds it evaluates.
  std::span<const std::int64_t> owned_ids() const { return {d_.gid.data(), d_.n_owned}; }
  std::span<const Eigen::Vector3d> owned_positions() const { return {d_.x.data(), d_.n_owned}; }
  std::span<const Eigen::Vector3d> owned_velocities() const { return {d_.v.data(), d_.n_owned}; }
  std::span<const Eigen::Vector3d> owned_angular_velocities() const { return {d_.w.data(), d_.n_owned}; }
  std::span<const Eigen::Vector4d> owned_quaternions() const { return {d_.q.data(), d_.n_owned}; }
  const std::vector<Bond>& bonds() const { return d_.bonds; }
  long pair_rebuilds() const { return d_.rebuilds(); }  // neighbour (pair list and ghost) rebuilds so far

 protected:
  BdemScene scene_;
  PhaseTimers timers_;
  Domain d_;
  double dt_ = 0;
  long step_ = 0;
  std::map<std::string, double> carried_;  // the counters of the runs before a re-partition (rebalanced())
  double origin_time_ = 0;  // see StepClock
  long origin_step_ = 0;
  EnergyBound energy_bound_;
  StepClock clock() const { return {dt_, origin_time_, origin_step_}; }
  static ObservableSet named(const Totals& o) {
    ObservableSet set;
    set.set("kinetic", o.kinetic);
    set.set("potential", o.potential);
    set.set("total", o.total);
    set.set("momentum", o.momentum);
    set.set("angular_momentum", o.angular_momentum);
    set.set_count("bonds_broken", o.bonds_broken);
    set.set_count("contacts", o.contacts);
    return set;
  }
};

}  // namespace percussion::bdem
