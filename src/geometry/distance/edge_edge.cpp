#include "percussion/geometry/distance/edge_edge.hpp"

#include <limits>

#include "percussion/geometry/distance/point_edge.hpp"

namespace percussion::geometry {

EdgeEdgeSub edge_edge_sub_stencil(EdgeEdgeCase c) {
  switch (c) {
    case EdgeEdgeCase::EA0_EB0: return {0, 2, -1};
    case EdgeEdgeCase::EA0_EB1: return {0, 3, -1};
    case EdgeEdgeCase::EA1_EB0: return {1, 2, -1};
    case EdgeEdgeCase::EA1_EB1: return {1, 3, -1};
    case EdgeEdgeCase::EA_EB0: return {2, 0, 1};
    case EdgeEdgeCase::EA_EB1: return {3, 0, 1};
    case EdgeEdgeCase::EA0_EB: return {0, 2, 3};
    case EdgeEdgeCase::EA1_EB: return {1, 2, 3};
    default: return {-1, -1, -1};
  }
}

namespace {

bool is_point_point(EdgeEdgeCase c) {
  return c == EdgeEdgeCase::EA0_EB0 || c == EdgeEdgeCase::EA0_EB1 || c == EdgeEdgeCase::EA1_EB0 ||
         c == EdgeEdgeCase::EA1_EB1;
}

// Case of endpoint `point` (0..3) against the other edge, from that point–edge classification.
EdgeEdgeCase endpoint_case(int point, PointEdgeCase c) {
  static constexpr EdgeEdgeCase pp[4][2] = {{EdgeEdgeCase::EA0_EB0, EdgeEdgeCase::EA0_EB1},
                                            {EdgeEdgeCase::EA1_EB0, EdgeEdgeCase::EA1_EB1},
                                            {EdgeEdgeCase::EA0_EB0, EdgeEdgeCase::EA1_EB0},
                                            {EdgeEdgeCase::EA0_EB1, EdgeEdgeCase::EA1_EB1}};
  static constexpr EdgeEdgeCase pe[4] = {EdgeEdgeCase::EA0_EB, EdgeEdgeCase::EA1_EB, EdgeEdgeCase::EA_EB0,
                                         EdgeEdgeCase::EA_EB1};
  if (c == PointEdgeCase::P_E) return pe[point];
  return pp[point][c == PointEdgeCase::P_E0 ? 0 : 1];
}

// Parallel (or degenerate) edges: the nearest of the endpoint–edge distances.
EdgeEdgeCase parallel_case(const Vec<3>* x[4]) {
  double best = std::numeric_limits<double>::infinity();
  EdgeEdgeCase result = EdgeEdgeCase::EA0_EB0;
  for (int point = 0; point < 4; ++point) {
    const int i = point < 2 ? 2 : 0;
    const PointEdgeCase c = point_edge_case<3>(*x[point], *x[i], *x[i + 1]);
    const double d = point_edge_distance<3>(*x[point], *x[i], *x[i + 1], c);
    if (d < best) {
      best = d;
      result = endpoint_case(point, c);
    }
  }
  return result;
}

}  // namespace

EdgeEdgeCase edge_edge_case(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1) {
  const Vec<3>* x[4] = {&ea0, &ea1, &eb0, &eb1};
  const Vec<3> a = ea1 - ea0, b = eb1 - eb0, w = ea0 - eb0;
  const double A = a.squaredNorm(), B = a.dot(b), C = b.squaredNorm(), D = a.dot(w), E = b.dot(w);
  // ‖a × b‖² rather than AC − B², which cancels for nearly parallel edges.
  const double den = a.cross(b).squaredNorm();
  if (A == 0.0 || C == 0.0 || den <= kParallelEdgesSin2 * A * C) return parallel_case(x);
  // Closest points ea0 + s a, eb0 + t b of the segments, s = sN/sD, t = tN/tD, clamping s first and then t.
  enum Where { kStart, kEnd, kInside };
  double sN = B * E - C * D, tN = A * E - B * D, tD = den;
  Where s = kInside;
  if (sN <= 0.0) {
    s = kStart, tN = E, tD = C;
  } else if (sN >= den) {
    s = kEnd, tN = E + B, tD = C;
  }
  Where t = kInside;
  if (tN <= 0.0 || tN >= tD) {
    t = tN <= 0.0 ? kStart : kEnd;
    const double sNum = t == kStart ? -D : B - D;  // s = sNum / A on the line through a, clamped
    s = sNum <= 0.0 ? kStart : sNum >= A ? kEnd : kInside;
  }
  if (s == kInside && t == kInside) return EdgeEdgeCase::EA_EB;
  if (s == kInside) return t == kStart ? EdgeEdgeCase::EA_EB0 : EdgeEdgeCase::EA_EB1;
  if (t == kInside) return s == kStart ? EdgeEdgeCase::EA0_EB : EdgeEdgeCase::EA1_EB;
  if (s == kStart) return t == kStart ? EdgeEdgeCase::EA0_EB0 : EdgeEdgeCase::EA0_EB1;
  return t == kStart ? EdgeEdgeCase::EA1_EB0 : EdgeEdgeCase::EA1_EB1;
}

namespace {
constexpr StencilDifferences kLineLine = {{0, 2}, {1, 0}, {3, 2}};  // (ea0 − eb0, ea1 − ea0, eb1 − eb0)
}  // namespace

double line_line_distance(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1) {
  const Vec<3> n = (ea1 - ea0).cross(eb1 - eb0);
  const double s = (ea0 - eb0).dot(n);
  return s * s / n.squaredNorm();
}

Vec<12> line_line_distance_gradient(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1) {
  const Vec<3>* const x[4] = {&ea0, &ea1, &eb0, &eb1};
  return plane_kernel_gradient(x, kLineLine);
}

Mat<12> line_line_distance_hessian(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1) {
  const Vec<3>* const x[4] = {&ea0, &ea1, &eb0, &eb1};
  return plane_kernel_hessian(x, kLineLine);
}

double edge_edge_distance(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1,
                          EdgeEdgeCase c) {
  if (c == EdgeEdgeCase::EA_EB) return line_line_distance(ea0, ea1, eb0, eb1);
  const Vec<3>* x[4] = {&ea0, &ea1, &eb0, &eb1};
  const EdgeEdgeSub s = edge_edge_sub_stencil(c);
  if (is_point_point(c)) return point_point_distance<3>(*x[s.point], *x[s.i]);
  return point_line_distance<3>(*x[s.point], *x[s.i], *x[s.j]);
}

Vec<12> edge_edge_distance_gradient(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1,
                                    EdgeEdgeCase c) {
  if (c == EdgeEdgeCase::EA_EB) return line_line_distance_gradient(ea0, ea1, eb0, eb1);
  const Vec<3>* x[4] = {&ea0, &ea1, &eb0, &eb1};
  const EdgeEdgeSub s = edge_edge_sub_stencil(c);
  Vec<12> g = Vec<12>::Zero();
  if (is_point_point(c)) {
    const int idx[2] = {s.point, s.i};
    scatter_gradient<3, 2, 4>(point_point_distance_gradient<3>(*x[s.point], *x[s.i]), idx, g);
  } else {
    const int idx[3] = {s.point, s.i, s.j};
    scatter_gradient<3, 3, 4>(point_line_distance_gradient<3>(*x[s.point], *x[s.i], *x[s.j]), idx, g);
  }
  return g;
}

Mat<12> edge_edge_distance_hessian(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1,
                                   EdgeEdgeCase c) {
  if (c == EdgeEdgeCase::EA_EB) return line_line_distance_hessian(ea0, ea1, eb0, eb1);
  const Vec<3>* x[4] = {&ea0, &ea1, &eb0, &eb1};
  const EdgeEdgeSub s = edge_edge_sub_stencil(c);
  Mat<12> h = Mat<12>::Zero();
  if (is_point_point(c)) {
    const int idx[2] = {s.point, s.i};
    scatter_hessian<3, 2, 4>(point_point_distance_hessian<3>(*x[s.point], *x[s.i]), idx, h);
  } else {
    const int idx[3] = {s.point, s.i, s.j};
    scatter_hessian<3, 3, 4>(point_line_distance_hessian<3>(*x[s.point], *x[s.i], *x[s.j]), idx, h);
  }
  return h;
}

}  // namespace percussion::geometry
