#pragma once
// Nested discrete penalty layers of asynchronous variational contact (notes 000 §2.5, §2.9, §2.10). Two primitives
// of thickness η at distance d: layer l = 1, 2, … acts while d < 2η/l and stores V_l(d) = l³ k (d − 2η/l)². A fully
// compressed layer stores 4kη²·l, so the layers together are a barrier: no k > 0 lets d reach 0.
#include <cstdint>

namespace percussion::avi {

struct PenaltyLayers {
  double eta = 0.1;        // thickness of each primitive
  double stiffness = 1.0;  // k, the first layer's

  double reach(std::int64_t l) const { return 2.0 * eta / static_cast<double>(l); }  // layer l acts below this gap
  bool active(std::int64_t l, double d) const { return d < reach(l); }
  double energy(std::int64_t l, double d) const;
  double derivative(std::int64_t l, double d) const;  // dV_l/dd, ≤ 0: the layer pushes the primitives apart
  std::int64_t deepest_active(double d) const;         // the largest active l (0: none); d > 0
  double barrier_energy(double d) const;               // Σ_l V_l(d) over the active layers

  // Layer l's fixed time step for a pair of reduced mass mu: stability and accuracy need h ∝ l^(−3/2); courant is
  // the fraction of the layer's spring period scale sqrt(mu / (2 l³ k)).
  double step(std::int64_t l, double mu, double courant) const;
  // The deepest layer a pair of reduced mass mu reaches when it meets at normal speed v (E(N) ≈ kη²N²/3 = ½ mu v²).
  double deepest_layer_estimate(double mu, double v) const;
};

}  // namespace percussion::avi
