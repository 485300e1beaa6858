#pragma once
// Initial barrier stiffness κ (notes 002 §2.7, IPC's heuristic): κ balances the barrier's gradient against the
// other energies', κ = clamp(−∇B·∇E / ‖∇B‖², κ_min, 100 κ_min), with ∇B the gradient of the unit-stiffness
// (weighted) barrier potential and ∇E that of the rest of the incremental potential, and
// κ_min = 1e11 m̄ / (4 d₀ b''(d₀, d̂²)), d₀ = (1e-8 · bbox diagonal)², m̄ the average nodal mass.
// The two reductions are the caller's (global sums across ranks); κ is then frozen for the whole run.
#include <Eigen/Core>

namespace percussion::ipc {

struct BarrierStiffness {
  double kappa, kappa_min, kappa_max;
};

double min_barrier_stiffness(double bbox_diagonal, double dhat2, double average_mass);

// From the reduced scalars ∇B·∇E and ‖∇B‖² (κ = κ_min when ∇B = 0).
BarrierStiffness initial_barrier_stiffness(double grad_barrier_dot_grad_energy, double grad_barrier_squarednorm,
                                           double kappa_min);

// The same from local vectors (one rank, or already gathered).
inline BarrierStiffness initial_barrier_stiffness(const Eigen::VectorXd& grad_barrier,
                                                  const Eigen::VectorXd& grad_energy, double kappa_min) {
  return initial_barrier_stiffness(grad_barrier.dot(grad_energy), grad_barrier.squaredNorm(), kappa_min);
}

}  // namespace percussion::ipc
