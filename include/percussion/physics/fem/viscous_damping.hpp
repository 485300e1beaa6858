#pragma once
// Viscous damping of Brown et al. 2018 (notes 002 §2.4) as an incremental potential. With the Green strain
// E(F) = ½(FᵀF − I), the discrete rate Ė = (E(F) − E(F_prev))/Δt and S = 2αĖ + β tr(Ė) I, the density
//   Ψ(F; F_prev) = Δt (α Ė:Ė + ½β (tr Ė)²)   has   ∂Ψ/∂F = F S = P,
// the notes' viscous stress. The notes' Ė = ½(ḞᵀF + FᵀḞ) differs from this one by ½ΔFᵀΔF/Δt (second order) and is
// not a gradient; this one keeps the Newton Hessian symmetric. ∂P/∂F_prev is the cross-step block of the adjoint.
#include <Eigen/Core>

#include "percussion/physics/fem/element_rest.hpp"

namespace percussion::fem {

struct ViscousDamping {
  double alpha = 0.0;  // shear viscosity
  double beta = 0.0;   // bulk viscosity
  double dt = 1.0;     // time step Δt

  template <int D>
  static Tensor2<D> green_strain(const Tensor2<D>& F) {
    return 0.5 * (F.transpose() * F - Tensor2<D>::Identity());
  }

  template <int D>
  Tensor2<D> strain_rate(const Tensor2<D>& F, const Tensor2<D>& F_prev) const {
    return 0.5 / dt * (F.transpose() * F - F_prev.transpose() * F_prev);
  }

  template <int D>
  Tensor2<D> viscous_stress(const Tensor2<D>& rate) const {  // S, symmetric
    return 2.0 * alpha * rate + beta * rate.trace() * Tensor2<D>::Identity();
  }

  template <int D>
  double energy(const Tensor2<D>& F, const Tensor2<D>& F_prev) const {
    const Tensor2<D> r = strain_rate<D>(F, F_prev);
    const double tr = r.trace();
    return dt * (alpha * r.squaredNorm() + 0.5 * beta * tr * tr);
  }

  template <int D>
  Tensor2<D> stress(const Tensor2<D>& F, const Tensor2<D>& F_prev) const {
    return F * viscous_stress<D>(strain_rate<D>(F, F_prev));
  }

  // ∂P/∂F: δP = δF S + F δS with δĖ = ½(δFᵀF + FᵀδF)/Δt; symmetric.
  template <int D>
  Tensor4<D> tangent(const Tensor2<D>& F, const Tensor2<D>& F_prev) const {
    const Tensor2<D> S = viscous_stress<D>(strain_rate<D>(F, F_prev));
    return linearise<D>(F, F, S, 1.0);
  }

  // ∂P/∂F_prev: δF = 0, δĖ = −½(δF_prevᵀF_prev + F_prevᵀδF_prev)/Δt.
  template <int D>
  Tensor4<D> cross_tangent(const Tensor2<D>& F, const Tensor2<D>& F_prev) const {
    return linearise<D>(F, F_prev, Tensor2<D>::Zero(), -1.0);
  }

  // ∂P/∂α = 2FĖ and ∂P/∂β = tr(Ė) F, for gradients with respect to the damping parameters.
  template <int D>
  Tensor2<D> stress_d_alpha(const Tensor2<D>& F, const Tensor2<D>& F_prev) const {
    return 2.0 * F * strain_rate<D>(F, F_prev);
  }
  template <int D>
  Tensor2<D> stress_d_beta(const Tensor2<D>& F, const Tensor2<D>& F_prev) const {
    return strain_rate<D>(F, F_prev).trace() * F;
  }

 private:
  // Column (k + D·l) of ∂P/∂G for the unit perturbation δG = e_k e_lᵀ of G (G = F or F_prev, sign ±1 in Ė):
  // δP = δG S_if_G_is_F + F δS(δĖ), δĖ = sign ½(δGᵀG + GᵀδG)/Δt.
  template <int D>
  Tensor4<D> linearise(const Tensor2<D>& F, const Tensor2<D>& G, const Tensor2<D>& S, double sign) const {
    Tensor4<D> a;
    for (int l = 0; l < D; ++l)
      for (int k = 0; k < D; ++k) {
        Tensor2<D> dG = Tensor2<D>::Zero();
        dG(k, l) = 1.0;
        const Tensor2<D> dE = (0.5 * sign / dt) * (dG.transpose() * G + G.transpose() * dG);
        const Tensor2<D> dP = dG * S + F * viscous_stress<D>(dE);
        a.col(k + D * l) = Eigen::Map<const Eigen::Matrix<double, D * D, 1>>(dP.data());
      }
    return a;
  }
};

template <int D, int K>
double damping_energy(const ElementRest<D, K>& e, const NodalField<D, K>& u, const NodalField<D, K>& u_prev,
                      const ViscousDamping& d) {
  double w = 0.0;
  for (int q = 0; q < ElementRest<D, K>::kPoints; ++q)
    w += e.weight[q] * d.energy<D>(deformation_gradient(e, u, q), deformation_gradient(e, u_prev, q));
  return w;
}

template <int D, int K>
ElementVector<D, K> damping_gradient(const ElementRest<D, K>& e, const NodalField<D, K>& u,
                                     const NodalField<D, K>& u_prev, const ViscousDamping& d) {
  ElementVector<D, K> g = ElementVector<D, K>::Zero();
  for (int q = 0; q < ElementRest<D, K>::kPoints; ++q)
    add_stress<D, K>(g, e.grad[q], d.stress<D>(deformation_gradient(e, u, q), deformation_gradient(e, u_prev, q)),
                     e.weight[q]);
  return g;
}

// ∂²Ψ/∂u², symmetric.
template <int D, int K>
ElementMatrix<D, K> damping_hessian(const ElementRest<D, K>& e, const NodalField<D, K>& u,
                                    const NodalField<D, K>& u_prev, const ViscousDamping& d) {
  ElementMatrix<D, K> h = ElementMatrix<D, K>::Zero();
  for (int q = 0; q < ElementRest<D, K>::kPoints; ++q)
    add_tangent<D, K>(h, e.grad[q],
                      d.tangent<D>(deformation_gradient(e, u, q), deformation_gradient(e, u_prev, q)), e.weight[q]);
  return h;
}

// ∂(∂Ψ/∂u)/∂u_prev: the cross-step block L of the adjoint (notes §3.3), not symmetric.
template <int D, int K>
ElementMatrix<D, K> damping_cross_hessian(const ElementRest<D, K>& e, const NodalField<D, K>& u,
                                          const NodalField<D, K>& u_prev, const ViscousDamping& d) {
  ElementMatrix<D, K> h = ElementMatrix<D, K>::Zero();
  for (int q = 0; q < ElementRest<D, K>::kPoints; ++q)
    add_tangent<D, K>(h, e.grad[q],
                      d.cross_tangent<D>(deformation_gradient(e, u, q), deformation_gradient(e, u_prev, q)),
                      e.weight[q]);
  return h;
}

}  // namespace percussion::fem
