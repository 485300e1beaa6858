#pragma once
// Squared distance from a point to an edge, 2D or 3D (stencil [p, e0, e1]).
// Point–line: with r = p − e0, e = e1 − e0, d² = r·r − (r·e)²/(e·e); it is the point–edge distance when the
// foot of the perpendicular falls inside the edge, otherwise the distance to the nearer end (point–point).
#include "percussion/geometry/distance/point_point.hpp"

namespace percussion::geometry {

template <int D>
double point_line_distance(const Vec<D>& p, const Vec<D>& e0, const Vec<D>& e1) {
  const Vec<D> r = p - e0, e = e1 - e0;
  const double s = r.dot(e);
  return r.squaredNorm() - s * s / e.squaredNorm();
}

template <int D>
Vec<3 * D> point_line_distance_gradient(const Vec<D>& p, const Vec<D>& e0, const Vec<D>& e1) {
  const Vec<D> r = p - e0, e = e1 - e0;
  const double s = r.dot(e), L = e.squaredNorm();
  const Vec<D> gr = 2.0 * r - (2.0 * s / L) * e;                    // ∂d²/∂r
  const Vec<D> ge = (-2.0 * s / L) * r + (2.0 * s * s / (L * L)) * e;  // ∂d²/∂e
  Vec<3 * D> g;
  g << gr, -gr - ge, ge;  // r = p − e0, e = e1 − e0
  return g;
}

template <int D>
Mat<3 * D> point_line_distance_hessian(const Vec<D>& p, const Vec<D>& e0, const Vec<D>& e1) {
  const Vec<D> r = p - e0, e = e1 - e0;
  const double s = r.dot(e), L = e.squaredNorm();
  const Mat<D> I = Mat<D>::Identity();
  const Mat<D> ee = e * e.transpose();
  const Mat<D> Hrr = 2.0 * I - (2.0 / L) * ee;
  const Mat<D> Hre = (-2.0 / L) * (e * r.transpose() + s * I) + (4.0 * s / (L * L)) * ee;  // ∂²/∂r∂e
  const Mat<D> Hee = (-2.0 / L) * r * r.transpose() + (4.0 * s / (L * L)) * (r * e.transpose() + e * r.transpose()) +
                     (2.0 * s * s / (L * L)) * I - (8.0 * s * s / (L * L * L)) * ee;
  // Chain through (p, e0, e1) ↦ (r, e) with Jacobian rows r: [I, −I, 0], e: [0, −I, I].
  Eigen::Matrix<double, 2 * D, 2 * D> Hy;
  Hy << Hrr, Hre, Hre.transpose(), Hee;
  Eigen::Matrix<double, 2 * D, 3 * D> J = Eigen::Matrix<double, 2 * D, 3 * D>::Zero();
  J.template block<D, D>(0, 0) = I;
  J.template block<D, D>(0, D) = -I;
  J.template block<D, D>(D, D) = -I;
  J.template block<D, D>(D, 2 * D) = I;
  return J.transpose() * Hy * J;
}

// Which region holds the closest point; a zero-length edge counts as its end e0.
template <int D>
PointEdgeCase point_edge_case(const Vec<D>& p, const Vec<D>& e0, const Vec<D>& e1) {
  const Vec<D> e = e1 - e0;
  const double L = e.squaredNorm();
  const double s = (p - e0).dot(e);
  if (L == 0.0 || s <= 0.0) return PointEdgeCase::P_E0;
  if (s >= L) return PointEdgeCase::P_E1;
  return PointEdgeCase::P_E;
}

template <int D>
double point_edge_distance(const Vec<D>& p, const Vec<D>& e0, const Vec<D>& e1, PointEdgeCase c) {
  switch (c) {
    case PointEdgeCase::P_E0: return point_point_distance<D>(p, e0);
    case PointEdgeCase::P_E1: return point_point_distance<D>(p, e1);
    default: return point_line_distance<D>(p, e0, e1);
  }
}

template <int D>
double point_edge_distance(const Vec<D>& p, const Vec<D>& e0, const Vec<D>& e1) {
  return point_edge_distance<D>(p, e0, e1, point_edge_case<D>(p, e0, e1));
}

template <int D>
Vec<3 * D> point_edge_distance_gradient(const Vec<D>& p, const Vec<D>& e0, const Vec<D>& e1, PointEdgeCase c) {
  if (c == PointEdgeCase::P_E) return point_line_distance_gradient<D>(p, e0, e1);
  Vec<3 * D> g = Vec<3 * D>::Zero();
  const int end = c == PointEdgeCase::P_E0 ? 1 : 2;
  const int idx[2] = {0, end};
  scatter_gradient<D, 2, 3>(point_point_distance_gradient<D>(p, end == 1 ? e0 : e1), idx, g);
  return g;
}

template <int D>
Mat<3 * D> point_edge_distance_hessian(const Vec<D>& p, const Vec<D>& e0, const Vec<D>& e1, PointEdgeCase c) {
  if (c == PointEdgeCase::P_E) return point_line_distance_hessian<D>(p, e0, e1);
  Mat<3 * D> h = Mat<3 * D>::Zero();
  const int end = c == PointEdgeCase::P_E0 ? 1 : 2;
  const int idx[2] = {0, end};
  scatter_hessian<D, 2, 3>(point_point_distance_hessian<D>(p, end == 1 ? e0 : e1), idx, h);
  return h;
}

}  // namespace percussion::geometry
