#pragma once
// The IPC log barrier (notes 002 §2.7) on squared distances: x = d², x̂ = d̂²,
//   b(x) = −(x − x̂)² ln(x/x̂) for 0 < x < x̂, 0 for x ≥ x̂, +∞ for x ≤ 0,
// with b' and b'' its derivatives in x (so ∇b(d²(u)) = b'(x) ∇d², ∇² = b'' ∇d²∇d²ᵀ + b' ∇²d²).
// b, b' and b'' all vanish at x̂, so the potential is C² where pairs enter or leave the active set.
#include <cmath>
#include <limits>

namespace percussion::ipc {

inline double barrier(double x, double xhat) {
  if (x <= 0.0) return std::numeric_limits<double>::infinity();
  if (x >= xhat) return 0.0;
  const double t = x - xhat;
  return -t * t * std::log(x / xhat);
}

inline double barrier_first_derivative(double x, double xhat) {
  if (x <= 0.0 || x >= xhat) return 0.0;
  return (xhat - x) * (2.0 * std::log(x / xhat) - xhat / x + 1.0);
}

inline double barrier_second_derivative(double x, double xhat) {
  if (x <= 0.0 || x >= xhat) return 0.0;
  const double r = xhat / x;
  return (r + 2.0) * r - 2.0 * std::log(x / xhat) - 3.0;
}

}  // namespace percussion::ipc
