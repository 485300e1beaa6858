#pragma once
// The IPC elastodynamics method (issue 65): meshed elastic bodies, each step (BDF1/BDF2) or a static solve the
// minimisation of an incremental potential by projected Newton with barrier contact (bodies, self-contact, planes),
// lagged friction and CCD-bounded line searches. The state is the displacement and velocity history as
// global vectors of the displacement space; checkpoints store it by global vertex (and edge) id.
#include <mpi.h>
#include <petscvec.h>

#include <array>
#include <limits>
#include <memory>
#include <string>

#include "percussion/methods/ipc/elastic_system.hpp"
#include "percussion/methods/ipc/scene.hpp"
#include "percussion/methods/ipc/step_minimisation.hpp"
#include "percussion/methods/method.hpp"
#include "percussion/solvers/newton.hpp"

namespace percussion::ipc {

// The scene's "-ipc_..." options, and the solver defaults that keep runs on 3 or more ranks reproducible, in PETSc's
// options database while the method lives (the command line wins, then the scene).
class ScenePetscDefaults {
 public:
  ScenePetscDefaults(const NewtonSettings& newton, MPI_Comm comm);
  ~ScenePetscDefaults();
  ScenePetscDefaults(const ScenePetscDefaults&) = delete;
  ScenePetscDefaults& operator=(const ScenePetscDefaults&) = delete;

 private:
  std::vector<std::string> inserted_;
};

class IpcMethod : public Method {
 public:
  IpcMethod(IpcScene scene, MPI_Comm comm, const std::string& restart_file);
  ~IpcMethod() override;

  std::string variant() const override { return scene_.integrator; }
  double time() const override { return time_; }
  long steps() const override { return step_; }
  bool reached(double t) const override;
  void advance(double limit) override;
  double time_step() const override { return is_static() ? 0.0 : scene_.time_step; }
  std::map<std::string, std::int64_t> sizes() const override;
  std::string work_unit() const override { return "elements"; }
  std::int64_t local_items() const override { return system_->mesh().owned_cell_count; }
  std::int64_t local_ghosts() const override {
    return system_->mesh().local_cell_count() - system_->mesh().owned_cell_count;
  }
  ObservableSet observables() override;
  io::TrajectoryLayout trajectory_layout() const override;
  void write_frame(io::TrajectoryWriter& writer) override;
  void write_checkpoint(const std::string& path) override;
  PhaseTimers& timers() override { return timers_; }
  std::map<std::string, double> counters() const override;
  std::map<std::string, double> headline() const override;

  // For tests and a later adjoint: the system and the displacement u^i and velocity v^i (global vectors).
  const ElasticSystem& system() const { return *system_; }
  ::Vec displacement() const { return u_[0]; }
  ::Vec velocity() const { return v_[0]; }

 private:
  bool is_static() const { return scene_.integrator == "static"; }
  void read_checkpoint(const std::string& path);
  void check_separation();  // collective; InputError when the state has touching or crossing surfaces
  // Owned nodes in ascending global id: vertices, then edges (P2); with their global ids.
  void order_owned_nodes();

  IpcScene scene_;
  MPI_Comm comm_;
  ScenePetscDefaults petsc_defaults_;
  PhaseTimers timers_;
  std::unique_ptr<ElasticSystem> system_;
  std::unique_ptr<StepMinimisation> minimisation_;
  solvers::NewtonMinimiser newton_;
  solvers::NewtonSettings settings_;
  std::array<::Vec, 2> u_{}, v_{};  // [0]: u^i, v^i (the last step's); [1]: u^(i−1), v^(i−1)
  ::Vec scratch_ = nullptr;         // the predictor, then the new velocity
  long step_ = 0;
  double time_ = 0;
  // Totals since time 0, carried by checkpoints.
  std::int64_t newton_iterations_ = 0, krylov_iterations_ = 0, inverted_max_ = 0;
  long last_newton_ = 0, last_krylov_ = 0;
  // Contact: the smallest pair distance over the run (carried by checkpoints) and at the last step.
  double min_distance_ = std::numeric_limits<double>::infinity();
  double last_min_distance_ = std::numeric_limits<double>::infinity();
  std::int64_t last_contacts_ = 0;
  std::int64_t intersections_max_ = 0;  // the most intersecting pairs seen at a frame (0 expected)
  std::vector<PetscInt> vertex_order_, edge_order_;    // owned local vertices / edges by ascending global id
  std::vector<std::int64_t> vertex_ids_, edge_ids_;    // their global ids
};

}  // namespace percussion::ipc
