#include "percussion/geometry/distance/point_triangle.hpp"

#include <limits>

#include "percussion/geometry/distance/point_edge.hpp"

namespace percussion::geometry {

namespace {

PointTriangleCase nearest_edge_case(const Vec<3>& p, const Vec<3>& t0, const Vec<3>& t1, const Vec<3>& t2) {
  const Vec<3>* v[3] = {&t0, &t1, &t2};
  static constexpr PointTriangleCase vertex[3] = {PointTriangleCase::P_T0, PointTriangleCase::P_T1,
                                                  PointTriangleCase::P_T2};
  static constexpr PointTriangleCase edge[3] = {PointTriangleCase::P_E0, PointTriangleCase::P_E1,
                                                PointTriangleCase::P_E2};
  double best = std::numeric_limits<double>::infinity();
  PointTriangleCase result = PointTriangleCase::P_T0;
  for (int e = 0; e < 3; ++e) {
    const int i = e, j = (e + 1) % 3;
    const PointEdgeCase c = point_edge_case<3>(p, *v[i], *v[j]);
    const double d = point_edge_distance<3>(p, *v[i], *v[j], c);
    if (d < best) {
      best = d;
      result = c == PointEdgeCase::P_E ? edge[e] : c == PointEdgeCase::P_E0 ? vertex[i] : vertex[j];
    }
  }
  return result;
}

}  // namespace

PointTriangleCase point_triangle_case(const Vec<3>& p, const Vec<3>& t0, const Vec<3>& t1, const Vec<3>& t2) {
  const Vec<3> ab = t1 - t0, ac = t2 - t0;
  if (ab.cross(ac).squaredNorm() <= 1e-20 * ab.squaredNorm() * ac.squaredNorm())
    return nearest_edge_case(p, t0, t1, t2);
  // Voronoi regions of the vertices and edges (Ericson, Real-Time Collision Detection §5.1.5).
  const Vec<3> ap = p - t0;
  const double d1 = ab.dot(ap), d2 = ac.dot(ap);
  if (d1 <= 0.0 && d2 <= 0.0) return PointTriangleCase::P_T0;
  const Vec<3> bp = p - t1;
  const double d3 = ab.dot(bp), d4 = ac.dot(bp);
  if (d3 >= 0.0 && d4 <= d3) return PointTriangleCase::P_T1;
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) return PointTriangleCase::P_E0;
  const Vec<3> cp = p - t2;
  const double d5 = ab.dot(cp), d6 = ac.dot(cp);
  if (d6 >= 0.0 && d5 <= d6) return PointTriangleCase::P_T2;
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) return PointTriangleCase::P_E2;
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0) return PointTriangleCase::P_E1;
  return PointTriangleCase::P_T;
}

namespace {

int vertex_of(PointTriangleCase c) {
  return c == PointTriangleCase::P_T0 ? 1 : c == PointTriangleCase::P_T1 ? 2 : 3;
}
bool is_vertex(PointTriangleCase c) {
  return c == PointTriangleCase::P_T0 || c == PointTriangleCase::P_T1 || c == PointTriangleCase::P_T2;
}

}  // namespace

double point_triangle_distance(const Vec<3>& p, const Vec<3>& t0, const Vec<3>& t1, const Vec<3>& t2,
                               PointTriangleCase c) {
  const Vec<3>* x[4] = {&p, &t0, &t1, &t2};
  if (c == PointTriangleCase::P_T) return point_plane_distance(p, t0, t1, t2);
  if (is_vertex(c)) return point_point_distance<3>(p, *x[vertex_of(c)]);
  int i, j;
  point_triangle_edge(c, i, j);
  return point_line_distance<3>(p, *x[i], *x[j]);
}

Vec<12> point_triangle_distance_gradient(const Vec<3>& p, const Vec<3>& t0, const Vec<3>& t1, const Vec<3>& t2,
                                         PointTriangleCase c) {
  const Vec<3>* x[4] = {&p, &t0, &t1, &t2};
  if (c == PointTriangleCase::P_T) return point_plane_distance_gradient(p, t0, t1, t2);
  Vec<12> g = Vec<12>::Zero();
  if (is_vertex(c)) {
    const int idx[2] = {0, vertex_of(c)};
    scatter_gradient<3, 2, 4>(point_point_distance_gradient<3>(p, *x[idx[1]]), idx, g);
    return g;
  }
  int i, j;
  point_triangle_edge(c, i, j);
  const int idx[3] = {0, i, j};
  scatter_gradient<3, 3, 4>(point_line_distance_gradient<3>(p, *x[i], *x[j]), idx, g);
  return g;
}

Mat<12> point_triangle_distance_hessian(const Vec<3>& p, const Vec<3>& t0, const Vec<3>& t1, const Vec<3>& t2,
                                        PointTriangleCase c) {
  const Vec<3>* x[4] = {&p, &t0, &t1, &t2};
  if (c == PointTriangleCase::P_T) return point_plane_distance_hessian(p, t0, t1, t2);
  Mat<12> h = Mat<12>::Zero();
  if (is_vertex(c)) {
    const int idx[2] = {0, vertex_of(c)};
    scatter_hessian<3, 2, 4>(point_point_distance_hessian<3>(p, *x[idx[1]]), idx, h);
    return h;
  }
  int i, j;
  point_triangle_edge(c, i, j);
  const int idx[3] = {0, i, j};
  scatter_hessian<3, 3, 4>(point_line_distance_hessian<3>(p, *x[i], *x[j]), idx, h);
  return h;
}

}  // namespace percussion::geometry
