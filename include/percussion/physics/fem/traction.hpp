#pragma once
// Surface traction on a boundary face (notes 002 §2.5): an edge in 2D, a triangle in 3D, with the face's own
// Lagrange nodes (its vertices, then for P2 its edge midpoints in simplex_edges<D−1>() order). Its potential is
// −fᵀu, f_(a·D+i) = ∫_face t_i φ_a ds for a constant traction t (force per rest area).
#include <cmath>

#include <Eigen/Core>

#include "percussion/physics/fem/element_rest.hpp"

namespace percussion::fem {

template <int D>
using FaceVertices = Eigen::Matrix<double, D, D>;  // the D vertices of a (D−1)-simplex in R^D, one per column

template <int D, int K>
using FaceVector = Eigen::Matrix<double, D * Lagrange<D - 1, K>::kNodes, 1>;

// Length of an edge (2D) or area of a triangle (3D).
template <int D>
double face_measure(const FaceVertices<D>& X) {
  const Eigen::Matrix<double, D, D - 1> j = X.template rightCols<D - 1>().colwise() - X.col(0);
  return std::sqrt((j.transpose() * j).determinant()) / factorial<D - 1>();
}

// ∫_face φ_a ds: the weights of a uniform traction over the face nodes.
template <int D, int K>
Eigen::Matrix<double, Lagrange<D - 1, K>::kNodes, 1> face_shape_integrals(const FaceVertices<D>& X) {
  const auto& rule = SimplexQuadrature<D - 1, K>::rule();
  const double det = face_measure<D>(X) * factorial<D - 1>();
  Eigen::Matrix<double, Lagrange<D - 1, K>::kNodes, 1> s;
  s.setZero();
  for (int q = 0; q < static_cast<int>(rule.weights.size()); ++q)
    s += (det * rule.weights[q]) * Lagrange<D - 1, K>::values(rule.points[q]);
  return s;
}

template <int D, int K>
FaceVector<D, K> traction_load(const FaceVertices<D>& X, const Eigen::Matrix<double, D, 1>& t) {
  const auto s = face_shape_integrals<D, K>(X);
  const Eigen::Matrix<double, D, Lagrange<D - 1, K>::kNodes> f = t * s.transpose();
  return Eigen::Map<const FaceVector<D, K>>(f.data());
}

}  // namespace percussion::fem
