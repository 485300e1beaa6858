#pragma once
// Smoothed friction (notes 002 §2.8): with y = ‖τ‖ the tangential displacement over the step and η = ε_v Δt,
//   f1(y) = f_η(y) = −y²/η² + 2y/η for y < η, 1 beyond   (the friction force's magnitude factor),
//   f0(y) = −y³/(3η²) + y²/η + η/3 for y < η, y beyond     (f0' = f1; the lagged potential is γ N f0(‖τ‖)).
// f1(y)/y stays finite at y = 0 (→ 2/η), and so does the Hessian's rank-one coefficient (f1' − f1/y)/y².
namespace percussion::ipc {

inline double friction_f0(double y, double eta) {
  return y < eta ? y * y * (1.0 / eta - y / (3.0 * eta * eta)) + eta / 3.0 : y;
}

inline double friction_f1(double y, double eta) { return y < eta ? y * (2.0 - y / eta) / eta : 1.0; }

// f1(y)/y.
inline double friction_f1_over_y(double y, double eta) { return y < eta ? (2.0 - y / eta) / eta : 1.0 / y; }

// (f1'(y) − f1(y)/y)/y², the coefficient c in ∇²_τ f0(‖τ‖) = (f1/y) I + c ττᵀ.
inline double friction_f2_term(double y, double eta) {
  return y < eta ? -1.0 / (eta * eta * y) : -1.0 / (y * y * y);
}

}  // namespace percussion::ipc
