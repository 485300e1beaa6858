#pragma once
// Squared distance between two points, 2D or 3D: d² = ‖p − q‖² (stencil [p, q]).
#include "percussion/geometry/distance/distance_type.hpp"

namespace percussion::geometry {

template <int D>
double point_point_distance(const Vec<D>& p, const Vec<D>& q) {
  return (p - q).squaredNorm();
}

template <int D>
Vec<2 * D> point_point_distance_gradient(const Vec<D>& p, const Vec<D>& q) {
  Vec<2 * D> g;
  g.template head<D>() = 2.0 * (p - q);
  g.template tail<D>() = -2.0 * (p - q);
  return g;
}

template <int D>
Mat<2 * D> point_point_distance_hessian(const Vec<D>&, const Vec<D>&) {
  Mat<2 * D> h;
  const Mat<D> I = 2.0 * Mat<D>::Identity();
  h << I, -I, -I, I;
  return h;
}

}  // namespace percussion::geometry
