#pragma once
// Explicit bonded DEM (the reference the implicit method is measured against): velocity Verlet for positions
// and quaternions, bond forces and torques, fracture, contact with friction, obstacles and gravity.
#include <mpi.h>

#include <Eigen/Core>
#include <vector>

#include "percussion/methods/bdem/bdem_method.hpp"

namespace percussion::bdem {

class ExplicitBdem final : public BdemMethod {
 public:
  ExplicitBdem(const Scene& scene, MPI_Comm comm, const GlobalModel& model);

  void advance() override;
  Observables observables() override { return d_.observables(interaction_energy_, contacts_); }
  void write_checkpoint(const std::string& path) override {
    d_.write_checkpoint(path, step_, dt_, f_, t_, "explicit", "velocity_verlet");
  }

 private:
  void compute_forces();

  std::vector<Eigen::Vector3d> f_, t_;  // owned: force, world torque at the current state
  double interaction_energy_ = 0;       // bonds, contacts and obstacles at the current state (this rank's share)
  long contacts_ = 0;
};

}  // namespace percussion::bdem
