#pragma once

#include <cmath>

namespace percussion::solvers {

// Cholesky kernels for the preconditioners' N×N diagonal blocks (row-major). Eigen's LLT solved against a
// matrix right-hand side runs its general blocked triangular solve, which on 6×6 pivots cost more than the
// whole elimination around them.

// M = L⁻¹ (lower triangular, zeros above) for A = L Lᵀ, reading A's lower triangle. False when A is not
// positive definite or holds a NaN. M may alias A.
template <int N>
bool inverse_cholesky_factor(const double* a, double* m) {
  double l[N * N];
  double inverse_diagonal[N];
  for (int j = 0; j < N; ++j) {
    double d = a[j * N + j];
    for (int k = 0; k < j; ++k) d -= l[j * N + k] * l[j * N + k];
    if (!(d > 0)) return false;
    inverse_diagonal[j] = 1.0 / std::sqrt(d);
    for (int i = j + 1; i < N; ++i) {
      double s = a[i * N + j];
      for (int k = 0; k < j; ++k) s -= l[i * N + k] * l[j * N + k];
      l[i * N + j] = s * inverse_diagonal[j];
    }
  }
  // Forward substitution, row by row: M_ij = −(Σ_{j≤k<i} L_ik M_kj) / L_ii.
  for (int i = 0; i < N; ++i) {
    for (int j = 0; j < i; ++j) {
      double s = 0;
      for (int k = j; k < i; ++k) s += l[i * N + k] * m[k * N + j];
      m[i * N + j] = -s * inverse_diagonal[i];
    }
    m[i * N + i] = inverse_diagonal[i];
    for (int j = i + 1; j < N; ++j) m[i * N + j] = 0;
  }
  return true;
}

// A⁻¹ = L⁻ᵀ L⁻¹ (full, symmetric) for A read from its lower triangle; false as above. inverse may alias A.
template <int N>
bool cholesky_inverse(const double* a, double* inverse) {
  double m[N * N];
  if (!inverse_cholesky_factor<N>(a, m)) return false;
  for (int i = 0; i < N; ++i)
    for (int j = 0; j <= i; ++j) {
      double s = 0;
      for (int k = i; k < N; ++k) s += m[k * N + i] * m[k * N + j];
      inverse[i * N + j] = s;
      inverse[j * N + i] = s;
    }
  return true;
}

}  // namespace percussion::solvers
