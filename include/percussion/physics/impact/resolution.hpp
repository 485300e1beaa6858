#pragma once
// What an impact operator reports, and the options every operator shares (notes 003 §3, §7).
#include <cstdint>
#include <string>
#include <vector>

namespace percussion::impact {

struct ResolveOptions {
  // eps of the inexact algorithms (notes 003 Alg. G/H): constraint i counts as violated only when
  // n_iᵀv < −eps‖v‖_M; 0 < eps < 1.
  double tolerance = 1e-10;
  // Rescale v to its initial ‖v‖_M (Alg. G/H line 8); off only to watch the drift.
  bool renormalise = true;
  // The diagnostic cap: an operator stops here only on configurations the guarantee does not cover (implicit
  // equality constraints not removed, restitution inside the reflection), and says so.
  std::int64_t max_reflections = 100'000'000;  // Gauss–Seidel
  std::int64_t max_iterations = 100'000;       // Generalized Reflections (QP solves)
};

struct Resolution {
  bool terminated = false;
  std::string reason;            // "feasible", or why the loop stopped
  std::int64_t iterations = 0;   // GS: passes through the constraint order; GR: QP solves
  std::int64_t reflections = 0;  // GS: pairwise applications
  std::int64_t renormalisations = 0;
  std::vector<double> impulses;  // accumulated multiplier λ_c ≥ 0 per constraint (normalised gradients)
  double norm_before = 0.0;      // ‖v‖_M at the start, and at the end
  double norm_after = 0.0;
};

}  // namespace percussion::impact
