#include "percussion/methods/bdem/explicit_bdem.hpp"

#include "percussion/core/log.hpp"

namespace percussion::bdem {

ExplicitBdem::ExplicitBdem(const BdemScene& scene, MPI_Comm comm, Model model)
    : BdemMethod(scene, comm, model), verlet_(scene_, d_, timers_) {
  verlet_.compute_forces();
  // A checkpoint carries the forces the next half-kick needs: contact damping saw the half-step velocity when
  // they were computed, so recomputing them from the stored full-step velocity would not continue bit-identically.
  if (!model.from_checkpoint) return;
  // An implicit run's checkpoint holds ∇V at a midpoint (or zeros) there instead: keep the recomputed forces.
  if (model.written_by_integrator != "explicit") {
    log::info("explicit: the checkpoint (" + model.written_by_integrator + ") holds no forces; recomputing them");
    return;
  }
  if (model.force.empty()) return;  // (a rank without particles)
  std::copy(model.force.begin(), model.force.end(), verlet_.force.begin());
  std::copy(model.torque.begin(), model.torque.end(), verlet_.torque.begin());
}

void ExplicitBdem::advance() {
  verlet_.advance(time(), dt_, step_ + 1);
  ++step_;
}

}  // namespace percussion::bdem
