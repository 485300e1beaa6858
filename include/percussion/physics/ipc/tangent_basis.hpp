#pragma once
// Friction's geometry per pair type (notes 002 §2.8), evaluated at the previous step's positions: closest-point
// parameters and orthonormal tangent bases P (D × (D−1) columns orthogonal to the contact normal).
//   point–point: the normal is p1 − p0;  point–edge: the normal lies in the plane of the edge and the point;
//   point–triangle: the triangle's normal;  edge–edge: a × b.
#include "percussion/geometry/distance/distance_type.hpp"

namespace percussion::ipc {

template <int D>
using TangentBasis = Eigen::Matrix<double, D, D - 1>;

template <int D>
TangentBasis<D> point_point_tangent_basis(const geometry::Vec<D>& p0, const geometry::Vec<D>& p1);
template <int D>
TangentBasis<D> point_edge_tangent_basis(const geometry::Vec<D>& p, const geometry::Vec<D>& e0,
                                         const geometry::Vec<D>& e1);
template <>
TangentBasis<2> point_point_tangent_basis<2>(const geometry::Vec<2>& p0, const geometry::Vec<2>& p1);
template <>
TangentBasis<3> point_point_tangent_basis<3>(const geometry::Vec<3>& p0, const geometry::Vec<3>& p1);
template <>
TangentBasis<2> point_edge_tangent_basis<2>(const geometry::Vec<2>& p, const geometry::Vec<2>& e0,
                                            const geometry::Vec<2>& e1);
template <>
TangentBasis<3> point_edge_tangent_basis<3>(const geometry::Vec<3>& p, const geometry::Vec<3>& e0,
                                            const geometry::Vec<3>& e1);
TangentBasis<3> point_triangle_tangent_basis(const geometry::Vec<3>& p, const geometry::Vec<3>& t0,
                                             const geometry::Vec<3>& t1, const geometry::Vec<3>& t2);
TangentBasis<3> edge_edge_tangent_basis(const geometry::Vec<3>& ea0, const geometry::Vec<3>& ea1,
                                        const geometry::Vec<3>& eb0, const geometry::Vec<3>& eb1);

// Closest points on the lines / plane: e0 + α (e1 − e0); t0 + β₁ (t1 − t0) + β₂ (t2 − t0);
// ea0 + s (ea1 − ea0) against eb0 + t (eb1 − eb0), returned as (s, t).
template <int D>
double point_edge_closest_point(const geometry::Vec<D>& p, const geometry::Vec<D>& e0, const geometry::Vec<D>& e1) {
  const geometry::Vec<D> e = e1 - e0;
  return (p - e0).dot(e) / e.squaredNorm();
}
Eigen::Vector2d point_triangle_closest_point(const geometry::Vec<3>& p, const geometry::Vec<3>& t0,
                                             const geometry::Vec<3>& t1, const geometry::Vec<3>& t2);
Eigen::Vector2d edge_edge_closest_point(const geometry::Vec<3>& ea0, const geometry::Vec<3>& ea1,
                                        const geometry::Vec<3>& eb0, const geometry::Vec<3>& eb1);

}  // namespace percussion::ipc
