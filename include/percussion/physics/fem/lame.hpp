#pragma once
// Lamé parameters from Young's modulus E and Poisson's ratio ν (notes 002 §2.3), with their derivatives for a
// future material-parameter adjoint. The same λ, μ in 2D give plane strain.
namespace percussion::fem {

struct Lame {
  double lambda = 0.0;
  double mu = 0.0;
};

// Valid for E > 0 and −1 < ν < ½ (the scene checker enforces the range).
inline Lame lame_from_young_poisson(double E, double nu) {
  return {E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu)), E / (2.0 * (1.0 + nu))};
}

struct LameDerivatives {
  Lame d_young;    // ∂λ/∂E, ∂μ/∂E
  Lame d_poisson;  // ∂λ/∂ν, ∂μ/∂ν
};

inline LameDerivatives lame_derivatives(double E, double nu) {
  const double a = 1.0 + nu, b = 1.0 - 2.0 * nu;
  return {{nu / (a * b), 1.0 / (2.0 * a)}, {E * (1.0 + 2.0 * nu * nu) / (a * a * b * b), -E / (2.0 * a * a)}};
}

}  // namespace percussion::fem
