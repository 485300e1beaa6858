#pragma once
// Per-pair lagged friction potential (notes 002 §2.8): D = γ N f0(‖τ‖), τ = Tᵀ(x − x_prev), where the normal
// force N and the tangent operator T (stencil dofs × tangent dimensions; relative-motion weights times an
// orthonormal tangent basis) are frozen at the previous step's positions (friction_pair.hpp). Gradient and
// Hessian are with respect to the current stencil positions x:
//   ∇D = γ N (f1(y)/y) T τ,   ∇²D = γ N T [(f1/y) I + (f1' − f1/y)/y² ττᵀ] Tᵀ   (y = ‖τ‖).
// At y = 0 the gradient is 0 and the Hessian γ N (2/η) T Tᵀ (the smoothed limit). With T frozen the Hessian is
// PSD: its eigenvalues on the tangent space are f1/y and f1' ≥ 0.
#include "percussion/physics/ipc/barrier_potential.hpp"
#include "percussion/physics/ipc/friction_smoothing.hpp"

namespace percussion::ipc {

template <int N, int K>
struct LaggedFriction {
  double normal_force = 0.0;                                        // N_k (includes κ and the area weight)
  Eigen::Matrix<double, N, K> tangent = Eigen::Matrix<double, N, K>::Zero();  // T_k
};

template <int N, int K>
PairEnergy<N> friction_potential(const LaggedFriction<N, K>& pair, const Vec<N>& x, const Vec<N>& x_prev, double mu,
                                 double eta) {
  const Eigen::Matrix<double, K, 1> tau = pair.tangent.transpose() * (x - x_prev);
  const double y = tau.norm(), scale = mu * pair.normal_force;
  PairEnergy<N> e;
  e.value = scale * friction_f0(y, eta);
  const double f1y = friction_f1_over_y(y, eta);
  e.gradient = (scale * f1y) * (pair.tangent * tau);
  Eigen::Matrix<double, K, K> Htau = f1y * Eigen::Matrix<double, K, K>::Identity();
  if (y > 0.0) Htau += friction_f2_term(y, eta) * tau * tau.transpose();
  e.hessian = scale * pair.tangent * Htau * pair.tangent.transpose();
  return e;
}

}  // namespace percussion::ipc
