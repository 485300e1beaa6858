#pragma once
// BDF time stepping as the minimisation of an incremental potential (notes 002 §2.6). With the notes' convention
//   u^i + Σ_j α_j u^(i−j) = βΔt v^i,   M(v^i + Σ_j α_j v^(i−j)) = βΔt h^i,
// eliminating v^i gives u^i = argmin ½/(βΔt)² (u − ũ)ᵀM(u − ũ) + Φ(u) with the predictor
//   ũ = −Σ_j α_j u^(i−j) − βΔt Σ_j α_j v^(i−j).
// Histories are passed most recent first: u_history[0] = u^(i−1), u_history[1] = u^(i−2), …
#include <array>
#include <span>

#include <Eigen/Core>

namespace percussion::fem {

struct Bdf {
  int order = 1;
  std::array<double, 4> alpha{};  // α_1 … α_order, the rest zero
  double beta = 1.0;
};

// BDF of order 1–4 (the notes' table); throws std::invalid_argument otherwise.
Bdf bdf(int order);

// The scheme used at step i ≥ 1 of a BDF-m run: BDF_min(i, m), the start-up the adjoint must mirror.
Bdf bdf_at_step(int order, int step);

// ũ from the last `order` displacements and velocities (each history needs at least s.order entries).
Eigen::VectorXd bdf_predictor(const Bdf& s, double dt, std::span<const Eigen::VectorXd> u_history,
                              std::span<const Eigen::VectorXd> v_history);

// v^i = (u^i + Σ_j α_j u^(i−j)) / (βΔt).
Eigen::VectorXd bdf_velocity(const Bdf& s, double dt, const Eigen::VectorXd& u,
                             std::span<const Eigen::VectorXd> u_history);

// 1/(βΔt)²: the inertia term's Hessian is this times M.
double inertia_scale(const Bdf& s, double dt);

// ½/(βΔt)² δᵀMδ and its gradient Mδ/(βΔt)², given δ = u − ũ and Mδ (the mass product stays with the caller, whose
// M may be consistent, lumped or distributed).
double inertia_energy(const Bdf& s, double dt, const Eigen::Ref<const Eigen::VectorXd>& delta,
                      const Eigen::Ref<const Eigen::VectorXd>& m_delta);
Eigen::VectorXd inertia_gradient(const Bdf& s, double dt, const Eigen::Ref<const Eigen::VectorXd>& m_delta);

}  // namespace percussion::fem
