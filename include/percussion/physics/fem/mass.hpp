#pragma once
// Element mass and body-force loads (notes 002 §2.2 and §2.5). The scalar matrix M_ab = ∫ ρ φ_a φ_b acts on each
// displacement component alike (the dof matrix is M ⊗ I_D); affine geometry makes it the rest volume times a
// reference-element constant.
#include <Eigen/Core>

#include "percussion/physics/fem/element_rest.hpp"

namespace percussion::fem {

template <int D, int K>
using ScalarMatrix = Eigen::Matrix<double, Lagrange<D, K>::kNodes, Lagrange<D, K>::kNodes>;

template <int D, int K>
using ScalarVector = Eigen::Matrix<double, Lagrange<D, K>::kNodes, 1>;

// Consistent mass ∫ ρ φ_a φ_b dX (degree-2K quadrature, exact); sums to ρ·volume.
template <int D, int K>
ScalarMatrix<D, K> consistent_mass(const ElementRest<D, K>& e, double density) {
  const auto& rule = SimplexQuadrature<D, 2 * K>::rule();
  const double scale = density * e.volume * factorial<D>();  // det Dm
  ScalarMatrix<D, K> m = ScalarMatrix<D, K>::Zero();
  for (int q = 0; q < static_cast<int>(rule.weights.size()); ++q) {
    const auto phi = Lagrange<D, K>::values(rule.points[q]);
    m.noalias() += (scale * rule.weights[q]) * phi * phi.transpose();
  }
  return m;
}

// Lumped mass by diagonal scaling (Hinton–Rock–Zienkiewicz): M_aa scaled to total ρ·volume. Row sums would give
// P2 vertices zero (triangles) or negative (tetrahedra) mass; for P1 both lumpings agree.
template <int D, int K>
ScalarVector<D, K> lumped_mass(const ElementRest<D, K>& e, double density) {
  const ScalarVector<D, K> diag = consistent_mass<D, K>(e, density).diagonal();
  return diag * (density * e.volume / diag.sum());
}

// ∫ φ_a dX: the weights of a uniform body force (negative at P2 tetrahedron vertices, as the consistent load is).
template <int D, int K>
ScalarVector<D, K> shape_integrals(const ElementRest<D, K>& e) {
  const auto& rule = SimplexQuadrature<D, K>::rule();
  const double det = e.volume * factorial<D>();
  ScalarVector<D, K> s = ScalarVector<D, K>::Zero();
  for (int q = 0; q < static_cast<int>(rule.weights.size()); ++q)
    s += (det * rule.weights[q]) * Lagrange<D, K>::values(rule.points[q]);
  return s;
}

// Gravity load f_(a·D+i) = ∫ ρ g_i φ_a dX; its potential is −fᵀu.
template <int D, int K>
ElementVector<D, K> gravity_load(const ElementRest<D, K>& e, double density, const Eigen::Matrix<double, D, 1>& g) {
  const ScalarVector<D, K> s = density * shape_integrals<D, K>(e);
  const NodalField<D, K> f = g * s.transpose();
  return Eigen::Map<const ElementVector<D, K>>(f.data());
}

}  // namespace percussion::fem
