#pragma once
// Explicit bonded DEM (the reference the implicit method is measured against): velocity Verlet for positions
// and quaternions, bond forces and torques, fracture, contact with friction, obstacles and gravity.
#include <mpi.h>

#include "percussion/methods/bdem/bdem_method.hpp"
#include "percussion/methods/bdem/verlet_step.hpp"

namespace percussion::bdem {

class ExplicitBdem final : public BdemMethod {
 public:
  ExplicitBdem(const BdemScene& scene, MPI_Comm comm, Model model);

  void advance() override;
  Totals totals() override { return d_.totals(verlet_.interaction_energy, verlet_.contacts); }
  Model snapshot() const override {
    return d_.snapshot(step_, clock(), verlet_.force, verlet_.torque, "explicit", "velocity_verlet");
  }

 private:
  VerletStep verlet_;
};

}  // namespace percussion::bdem
