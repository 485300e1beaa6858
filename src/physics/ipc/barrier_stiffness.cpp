#include "percussion/physics/ipc/barrier_stiffness.hpp"

#include <algorithm>

#include "percussion/physics/ipc/barrier.hpp"

namespace percussion::ipc {

double min_barrier_stiffness(double bbox_diagonal, double dhat2, double average_mass) {
  double d0 = 1e-8 * bbox_diagonal;
  d0 *= d0;
  if (d0 >= dhat2) d0 = 0.5 * dhat2;  // d̂ below 1e-8 of the scene: evaluate inside the barrier's support
  // 4 d₀ b''(d₀) approximates the barrier's curvature in the (unsquared) distance at d₀.
  return 1e11 * average_mass / (4.0 * d0 * barrier_second_derivative(d0, dhat2));
}

BarrierStiffness initial_barrier_stiffness(double grad_barrier_dot_grad_energy, double grad_barrier_squarednorm,
                                           double kappa_min) {
  const double kappa_max = 100.0 * kappa_min;
  double kappa = kappa_min;
  if (grad_barrier_squarednorm > 0.0) kappa = -grad_barrier_dot_grad_energy / grad_barrier_squarednorm;
  return {std::clamp(kappa, kappa_min, kappa_max), kappa_min, kappa_max};
}

}  // namespace percussion::ipc
