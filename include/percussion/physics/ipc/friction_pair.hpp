#pragma once
// Lagged friction data of one pair (notes 002 §2.8), from the previous step's positions: the normal force N_k
// and the tangent operator T_k = Γᵀ P, where Γ gives the relative displacement of the closest points as
// Σ_i w_i Δx_i over the stencil and P is the orthonormal tangent basis. The pair keeps its full stencil; a
// degenerate sub-case (closest points at a vertex or an edge) gets zero weights on the unused vertices and that
// sub-case's basis.
#include "percussion/geometry/distance/distance_type.hpp"
#include "percussion/physics/ipc/friction_potential.hpp"
#include "percussion/physics/ipc/tangent_basis.hpp"

namespace percussion::ipc {

// N = −∂(w b(d²))/∂d = −w b'(d²) 2d for a pair at squared distance d2 (w = κ A_k, times the edge–edge mollifier
// at the previous step when given): the magnitude of the contact force.
double lagged_normal_force(double d2, double dhat2, double w, double mollifier = 1.0);

// T = Γᵀ P for relative-motion weights w (one per stencil point) and tangent basis P.
template <int D, int M>
Eigen::Matrix<double, D * M, D - 1> tangent_operator(const Eigen::Matrix<double, M, 1>& w, const TangentBasis<D>& P) {
  Eigen::Matrix<double, D * M, D - 1> T;
  for (int i = 0; i < M; ++i) T.template block<D, D - 1>(D * i, 0) = w(i) * P;
  return T;
}

// The closest points' relative-motion weights (one per stencil point, summing to 0) and the tangent basis, kept
// apart so that later derivatives (∂T/∂x_prev for the adjoint) can reach them.
template <int M, int D>
struct FrictionGeometry {
  Eigen::Matrix<double, M, 1> weights;
  TangentBasis<D> basis;
};

// 2D point–edge pair [p, e0, e1] and 3D point–triangle and edge–edge pairs, at the previous step's positions.
FrictionGeometry<3, 2> point_edge_friction_geometry_2d(const geometry::Vec<2>& p, const geometry::Vec<2>& e0,
                                                       const geometry::Vec<2>& e1);
FrictionGeometry<4, 3> point_triangle_friction_geometry(const geometry::Vec<3>& p, const geometry::Vec<3>& t0,
                                                        const geometry::Vec<3>& t1, const geometry::Vec<3>& t2);
FrictionGeometry<4, 3> edge_edge_friction_geometry(const geometry::Vec<3>& ea0, const geometry::Vec<3>& ea1,
                                                   const geometry::Vec<3>& eb0, const geometry::Vec<3>& eb1);

// The lagged pair (6 dofs in 2D, 12 in 3D) from its geometry and normal force.
template <int M, int D>
LaggedFriction<D * M, D - 1> lagged_friction(const FrictionGeometry<M, D>& g, double normal_force) {
  return {normal_force, tangent_operator<D, M>(g.weights, g.basis)};
}

}  // namespace percussion::ipc
