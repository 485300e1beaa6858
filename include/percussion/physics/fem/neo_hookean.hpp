#pragma once
// Compressible Neo-Hookean (notes 002 §2.3): W = ½μ(tr FᵀF − D) − μ ln J + ½λ (ln J)², J = det F, with
// P = μ(F − Q) + λ ln J Q and ∂P_ij/∂F_kl = μ(δ_ik δ_jl + Q_il Q_kj) + λ(Q_ij Q_kl − ln J Q_il Q_kj), Q = F⁻ᵀ.
// W = +∞ when J ≤ 0, so a line search rejects inverting steps; P and ∂P/∂F are only meaningful where W is finite.
#include <cmath>
#include <limits>

#include <Eigen/Core>
#include <Eigen/LU>

#include "percussion/physics/fem/element_rest.hpp"
#include "percussion/physics/fem/lame.hpp"

namespace percussion::fem {

struct NeoHookean {
  Lame lame;

  template <int D>
  double energy(const Tensor2<D>& F) const {
    const double J = F.determinant();
    if (!(J > 0.0)) return std::numeric_limits<double>::infinity();
    const double lj = std::log(J);
    return 0.5 * lame.mu * (F.squaredNorm() - D) - lame.mu * lj + 0.5 * lame.lambda * lj * lj;
  }

  template <int D>
  Tensor2<D> stress(const Tensor2<D>& F) const {
    const Tensor2<D> Q = F.inverse().transpose();
    return lame.mu * (F - Q) + lame.lambda * std::log(F.determinant()) * Q;
  }

  template <int D>
  Tensor4<D> tangent(const Tensor2<D>& F) const {
    const Tensor2<D> Q = F.inverse().transpose();
    const double lj = std::log(F.determinant());
    const double mu = lame.mu, la = lame.lambda;
    Tensor4<D> a;
    for (int l = 0; l < D; ++l)
      for (int k = 0; k < D; ++k)
        for (int j = 0; j < D; ++j)
          for (int i = 0; i < D; ++i)
            a(i + D * j, k + D * l) = (mu - la * lj) * Q(i, l) * Q(k, j) + la * Q(i, j) * Q(k, l) +
                                      ((i == k && j == l) ? mu : 0.0);
    return a;
  }

  template <int D>
  Tensor2<D> stress_d_lambda(const Tensor2<D>& F) const {
    return std::log(F.determinant()) * F.inverse().transpose();
  }
  template <int D>
  Tensor2<D> stress_d_mu(const Tensor2<D>& F) const {
    return F - F.inverse().transpose();
  }
};

}  // namespace percussion::fem
