#pragma once
// The rigid-impact method (issue 64, notes 003): balls, boxes and walls, one impact resolution ("resolve") or time
// stepping with a resolution every step ("step"). Bodies live in the shared item container, each rank owning a
// contiguous slice of ids; impacts are resolved per contact-graph component (distributed_impact.hpp), so the
// trajectory is the same bit for bit on any rank count.
#include <mpi.h>

#include <memory>
#include <string>

#include "percussion/methods/method.hpp"
#include "percussion/methods/rigid/distributed_impact.hpp"
#include "percussion/parallel/distributed_items.hpp"
#include "percussion/methods/rigid/contacts.hpp"
#include "percussion/methods/rigid/resolve.hpp"
#include "percussion/methods/rigid/scene.hpp"

namespace percussion::rigid {

class RigidMethod : public Method {
 public:
  // restart_file empty: from the scene; else continue that checkpoint.
  RigidMethod(RigidScene scene, MPI_Comm comm, const std::string& restart_file);

  std::string variant() const override;
  double time() const override { return time_; }
  long steps() const override { return step_; }
  bool reached(double t) const override;
  void advance(double limit) override;
  double time_step() const override { return resolve_mode() ? 0.0 : scene_.time_step; }
  std::map<std::string, std::int64_t> sizes() const override;
  std::string work_unit() const override { return "bodies"; }
  std::int64_t local_items() const override { return static_cast<std::int64_t>(items_.owned()); }
  std::int64_t local_ghosts() const override { return static_cast<std::int64_t>(items_.ghosts()); }
  ObservableSet observables() override;
  std::string implausible_change(const ObservableSet& before, const ObservableSet& now) const override;
  io::TrajectoryLayout trajectory_layout() const override;
  void write_frame(io::TrajectoryWriter& writer) override;
  void write_checkpoint(const std::string& path) override;
  void write_results(const std::string& out_dir) override;
  PhaseTimers& timers() override { return timers_; }
  std::map<std::string, double> counters() const override;

 private:
  bool resolve_mode() const { return scene_.mode == "resolve"; }
  void read_checkpoint(const std::string& path);
  void resolve_now(double dt, const Eigen::Vector3d& kick);
  // This rank's owned bodies and ghosts as the contact finder and the component solver see them.
  void fill_local();
  double kinetic_energy() const;  // collective
  Eigen::Vector3d momentum() const;  // collective
  Eigen::Vector3d angular_momentum() const;  // collective, about the origin
  // Turns the owned boxes by their angular velocity over dt, keeping each one's angular momentum (free rotation).
  void rotate_boxes(double dt);

  RigidScene scene_;
  MPI_Comm comm_;
  std::int64_t bodies_ = 0;
  parallel::DistributedItems items_;
  std::vector<Eigen::Vector3d>& position_;
  std::vector<Eigen::Vector3d>& velocity_;
  std::vector<double>& mass_;
  std::vector<double>& radius_;
  std::vector<int>& fixed_;
  // Registered fields (exchanged, checkpointed) only in scenes with boxes; in ball-only scenes plain vectors over the
  // owned bodies, so balls pay no exchange and their checkpoints keep their tables.
  bool has_boxes_ = false;
  std::vector<Eigen::Vector4d> ball_orientation_;
  std::vector<Eigen::Vector3d> ball_angular_velocity_, ball_half_extents_;
  std::vector<Eigen::Vector4d>& orientation_;      // boxes; (0, 0, 0, 1) for balls
  std::vector<Eigen::Vector3d>& angular_velocity_;  // boxes, world frame; 0 for balls
  std::vector<Eigen::Vector3d>& half_extents_;      // boxes; 0 for balls
  BallState local_;
  std::vector<int> ghost_owner_;  // per ghost of local_
  long step_ = 0;
  double time_ = 0;
  ContactFinder finder_;
  std::vector<Contact> contacts_;  // found at the last resolution, ends as global ids
  InstantResult last_;
  GatheredContacts gathered_;      // resolve mode: the contacts this rank resolved as a root
  bool resolved_ = false;
  // Totals since time 0, carried by checkpoints.
  std::int64_t reflections_ = 0, iterations_ = 0, unterminated_ = 0;
  // resolve mode: the state before the resolution, for resolution.json.
  double energy_before_ = 0;
  Eigen::Vector3d momentum_before_ = Eigen::Vector3d::Zero();
  Eigen::Vector3d angular_momentum_before_ = Eigen::Vector3d::Zero();
  PhaseTimers timers_;
  int contact_phase_ = 0, resolve_phase_ = 0;
};

}  // namespace percussion::rigid
