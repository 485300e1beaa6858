#pragma once
// Lagged friction of the distributed pair set (notes 002 §2.8): at the start of a step the active pairs freeze
// their normal force N_k and tangent operator T_k at the previous positions x_prev; during the step's Newton
// iterations D = Σ_k μ N_k f0(‖T_kᵀ(x − x_prev)‖) with its gradient and (PSD) Hessian as global-index blocks.
// The friction pairs keep their own vertex table, so the barrier pair set can be rebuilt every iteration.
#include <mpi.h>

#include <span>
#include <vector>

#include "percussion/methods/ipc/contact_blocks.hpp"
#include "percussion/methods/ipc/contact_set.hpp"

namespace percussion::ipc {

class FrictionSet {
 public:
  // Collective. The set's pairs active at its current positions (x_prev), with N_k = κ A_k-scaled normal forces.
  // mu: friction coefficient; eta: the smoothing length ε_v h of f0 (friction_smoothing.hpp).
  void freeze(const ContactSet& set, double kappa, double mu, double eta);
  // Collective over neighbours: current positions from x (mesh-local layout).
  void update_positions(std::span<const double> x) { vertices_.update(x); }

  double energy() const;  // exact global sum, collective
  void for_each_gradient(const ContactBlock& add) const;
  void for_each_hessian(const ContactBlock& add) const;  // PSD by construction (T frozen)
  PetscErrorCode add_gradient(::Vec gradient) const;
  PetscErrorCode add_hessian(::Mat hessian) const;
  std::size_t size() const { return pairs_.size(); }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int dim_ = 0;
  double mu_ = 0.0, eta_ = 1.0;
  ContactVertices vertices_;
  std::vector<ContactPair> pairs_;
  std::vector<LaggedFriction<12, 2>> lagged_;
  std::vector<Vec<12>> previous_;  // x_prev on each pair's stencil
  Vec<12> stencil(std::size_t k) const;
  PairEnergy<12> evaluate(std::size_t k) const;
};

}  // namespace percussion::ipc
