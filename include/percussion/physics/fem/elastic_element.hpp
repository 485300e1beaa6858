#pragma once
// Element elastic energy ∫ W(I + ∇u) dX, its gradient and exact (unprojected) Hessian with respect to the nodal
// displacements, by the element's quadrature. Material is LinearElastic or NeoHookean (energy/stress/tangent).
#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Core>
#include <Eigen/LU>

#include "percussion/physics/fem/element_rest.hpp"

namespace percussion::fem {

// +∞ as soon as one quadrature point has W = +∞ (an inverted point for Neo-Hookean).
template <int D, int K, class Material>
double elastic_energy(const ElementRest<D, K>& e, const NodalField<D, K>& u, const Material& m) {
  double w = 0.0;
  for (int q = 0; q < ElementRest<D, K>::kPoints; ++q) {
    const double wq = m.template energy<D>(deformation_gradient(e, u, q));
    if (!std::isfinite(wq)) return std::numeric_limits<double>::infinity();
    w += e.weight[q] * wq;
  }
  return w;
}

template <int D, int K, class Material>
ElementVector<D, K> elastic_gradient(const ElementRest<D, K>& e, const NodalField<D, K>& u, const Material& m) {
  ElementVector<D, K> g = ElementVector<D, K>::Zero();
  for (int q = 0; q < ElementRest<D, K>::kPoints; ++q)
    add_stress<D, K>(g, e.grad[q], m.template stress<D>(deformation_gradient(e, u, q)), e.weight[q]);
  return g;
}

template <int D, int K, class Material>
ElementMatrix<D, K> elastic_hessian(const ElementRest<D, K>& e, const NodalField<D, K>& u, const Material& m) {
  ElementMatrix<D, K> h = ElementMatrix<D, K>::Zero();
  for (int q = 0; q < ElementRest<D, K>::kPoints; ++q)
    add_tangent<D, K>(h, e.grad[q], m.template tangent<D>(deformation_gradient(e, u, q)), e.weight[q]);
  return h;
}

// Smallest det F over the quadrature points and the vertices: ≤ 0 flags an inverted element. (For P1 F is
// constant; for P2 J varies and the vertices are where it usually turns first.)
template <int D, int K>
double min_jacobian(const ElementRest<D, K>& e, const NodalField<D, K>& u) {
  double j = std::numeric_limits<double>::infinity();
  for (int q = 0; q < ElementRest<D, K>::kPoints; ++q) j = std::min(j, deformation_gradient(e, u, q).determinant());
  if constexpr (K > 1) {
    for (int a = 0; a <= D; ++a) {
      const Tensor2<D> F = Tensor2<D>::Identity() + u * Lagrange<D, K>::gradients(Lagrange<D, K>::node(a)) * e.dm_inv;
      j = std::min(j, F.determinant());
    }
  }
  return j;
}

}  // namespace percussion::fem
