#pragma once
// Small-strain linear elasticity (notes 002 §2.3): ε = sym(F − I), W = μ ε:ε + ½λ (tr ε)², P = σ = 2με + λ tr ε I,
// ∂P/∂F = C. Not rotation invariant: for small displacements only.
#include <Eigen/Core>

#include "percussion/physics/fem/element_rest.hpp"
#include "percussion/physics/fem/lame.hpp"

namespace percussion::fem {

struct LinearElastic {
  Lame lame;

  template <int D>
  static Tensor2<D> strain(const Tensor2<D>& F) {
    return 0.5 * (F + F.transpose()) - Tensor2<D>::Identity();
  }

  template <int D>
  double energy(const Tensor2<D>& F) const {
    const Tensor2<D> eps = strain<D>(F);
    const double tr = eps.trace();
    return lame.mu * eps.squaredNorm() + 0.5 * lame.lambda * tr * tr;
  }

  template <int D>
  Tensor2<D> stress(const Tensor2<D>& F) const {
    const Tensor2<D> eps = strain<D>(F);
    return 2.0 * lame.mu * eps + lame.lambda * eps.trace() * Tensor2<D>::Identity();
  }

  // C_ijkl = λ δ_ij δ_kl + μ (δ_ik δ_jl + δ_il δ_jk), independent of F.
  template <int D>
  Tensor4<D> tangent(const Tensor2<D>& /*F*/) const {
    Tensor4<D> c = Tensor4<D>::Zero();
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < D; ++j) {
        const int ij = i + D * j;
        c(ij, i + D * j) += lame.mu;
        c(ij, j + D * i) += lame.mu;
        if (i == j)
          for (int k = 0; k < D; ++k) c(ij, k + D * k) += lame.lambda;
      }
    return c;
  }

  // ∂P/∂λ and ∂P/∂μ, for gradients with respect to the material.
  template <int D>
  Tensor2<D> stress_d_lambda(const Tensor2<D>& F) const {
    return strain<D>(F).trace() * Tensor2<D>::Identity();
  }
  template <int D>
  Tensor2<D> stress_d_mu(const Tensor2<D>& F) const {
    return 2.0 * strain<D>(F);
  }
};

}  // namespace percussion::fem
