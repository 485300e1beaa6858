#pragma once
// Rest-configuration data of one P1/P2 simplex element (notes 002 §2.1): the geometry is affine (P1, vertices
// only; P2 edge nodes sit at the midpoints), so the rest Jacobian Dm = [X1−X0 … XD−X0] is constant per element.
// Element kernels take nodal fields as D×N matrices, one column per node; their element vectors and matrices
// flatten them node-major (dof a·D + i is component i of node a), which is the column-major storage of the field.
#include <array>
#include <cmath>
#include <optional>

#include <Eigen/Core>
#include <Eigen/LU>

#include "percussion/physics/fem/lagrange.hpp"
#include "percussion/physics/fem/quadrature.hpp"

namespace percussion::fem {

template <int D>
using Vertices = Eigen::Matrix<double, D, D + 1>;  // rest vertex coordinates, one column per vertex

template <int D, int K>
using NodalField = Eigen::Matrix<double, D, Lagrange<D, K>::kNodes>;

template <int D, int K>
using ElementVector = Eigen::Matrix<double, D * Lagrange<D, K>::kNodes, 1>;

template <int D, int K>
using ElementMatrix = Eigen::Matrix<double, D * Lagrange<D, K>::kNodes, D * Lagrange<D, K>::kNodes>;

template <int D>
using Tensor2 = Eigen::Matrix<double, D, D>;

// ∂P/∂F with P and F flattened column-major: entry (i + D·j, k + D·l) is ∂P_ij/∂F_kl.
template <int D>
using Tensor4 = Eigen::Matrix<double, D * D, D * D>;

template <int D>
constexpr double factorial() {
  if constexpr (D <= 1) {
    return 1.0;
  } else {
    return D * factorial<D - 1>();
  }
}

template <int D>
Tensor2<D> rest_edge_matrix(const Vertices<D>& X) {
  return X.template rightCols<D>().colwise() - X.col(0);
}

// Signed volume (area in 2D) of the simplex; ≤ 0 means the vertex order is inverted or the element degenerate.
template <int D>
double signed_volume(const Vertices<D>& X) {
  return rest_edge_matrix<D>(X).determinant() / factorial<D>();
}

// Rest coordinates of all nodes (vertices, then edge midpoints for P2).
template <int D, int K>
NodalField<D, K> node_positions(const Vertices<D>& X) {
  NodalField<D, K> x;
  x.template leftCols<D + 1>() = X;
  if constexpr (K == 2) {
    constexpr auto edges = simplex_edges<D>();
    for (int e = 0; e < kSimplexEdges<D>; ++e) x.col(D + 1 + e) = 0.5 * (X.col(edges[e][0]) + X.col(edges[e][1]));
  }
  return x;
}

template <int D, int K>
struct ElementRest {
  using Basis = Lagrange<D, K>;
  using Quadrature = SimplexQuadrature<D, K == 1 ? 1 : 2 * (K - 1)>;  // exact for linear elasticity
  static constexpr int kNodes = Basis::kNodes;
  static constexpr int kDofs = D * kNodes;
  static constexpr int kPoints = Quadrature::kPoints;

  double volume = 0.0;                                          // rest volume (area in 2D), > 0
  Tensor2<D> dm_inv;                                            // inverse rest Jacobian, ∂ξ/∂X
  std::array<Eigen::Matrix<double, kNodes, D>, kPoints> grad;  // ∂φ_a/∂X at each quadrature point (row a)
  std::array<double, kPoints> weight;                          // quadrature weight × det Dm (sums to volume)
};

// Rest data of an element, or nothing when its signed volume is not positive (inverted or degenerate input).
template <int D, int K>
std::optional<ElementRest<D, K>> element_rest(const Vertices<D>& X) {
  const Tensor2<D> dm = rest_edge_matrix<D>(X);
  const double det = dm.determinant();
  if (!(det > 0.0) || !std::isfinite(det)) return std::nullopt;
  ElementRest<D, K> e;
  e.volume = det / factorial<D>();
  e.dm_inv = dm.inverse();
  const auto& rule = ElementRest<D, K>::Quadrature::rule();
  for (int q = 0; q < ElementRest<D, K>::kPoints; ++q) {
    e.grad[q] = Lagrange<D, K>::gradients(rule.points[q]) * e.dm_inv;
    e.weight[q] = rule.weights[q] * det;
  }
  return e;
}

// F = I + ∇u at quadrature point q, with u the nodal displacements.
template <int D, int K>
Tensor2<D> deformation_gradient(const ElementRest<D, K>& e, const NodalField<D, K>& u, int q) {
  return Tensor2<D>::Identity() + u * e.grad[q];
}

// Adds w Σ_j P_ij ∂φ_a/∂X_j to dof a·D + i: the element gradient of ∫ W(F) given P = ∂W/∂F at one point.
template <int D, int K>
void add_stress(ElementVector<D, K>& g, const Eigen::Matrix<double, Lagrange<D, K>::kNodes, D>& grad,
                const Tensor2<D>& P, double w) {
  const Eigen::Matrix<double, D, Lagrange<D, K>::kNodes> pg = w * P * grad.transpose();
  g += Eigen::Map<const ElementVector<D, K>>(pg.data());
}

// Adds w Σ_jl ∂φ_a/∂X_j A_(ij),(kl) ∂φ_b/∂X_l to entry (a·D + i, b·D + k): the element matrix of a tangent A,
// one N×N block grad·A_ik·gradᵀ per component pair (i, k).
template <int D, int K>
void add_tangent(ElementMatrix<D, K>& h, const Eigen::Matrix<double, Lagrange<D, K>::kNodes, D>& grad,
                 const Tensor4<D>& A, double w) {
  constexpr int N = Lagrange<D, K>::kNodes;
  for (int k = 0; k < D; ++k)
    for (int i = 0; i < D; ++i) {
      Tensor2<D> a_ik;  // (j, l) ↦ A_(ij),(kl)
      for (int l = 0; l < D; ++l)
        for (int j = 0; j < D; ++j) a_ik(j, l) = A(i + D * j, k + D * l);
      const Eigen::Matrix<double, N, N> block = grad * (w * a_ik) * grad.transpose();
      for (int b = 0; b < N; ++b)
        for (int a = 0; a < N; ++a) h(a * D + i, b * D + k) += block(a, b);
    }
}

}  // namespace percussion::fem
