#include "percussion/physics/ipc/friction_pair.hpp"

#include <cmath>

#include "percussion/geometry/distance/edge_edge.hpp"
#include "percussion/geometry/distance/point_edge.hpp"
#include "percussion/geometry/distance/point_triangle.hpp"
#include "percussion/physics/ipc/barrier.hpp"

namespace percussion::ipc {

using geometry::Vec;

double lagged_normal_force(double d2, double dhat2, double w, double mollifier) {
  return -w * mollifier * barrier_first_derivative(d2, dhat2) * 2.0 * std::sqrt(d2);
}

namespace {

// A point–point (j < 0) or point–edge sub-case on a 4-point 3D stencil: point `point` against points i (and j).
FrictionGeometry<4, 3> sub_case_geometry(const Vec<3>* const x[4], int point, int i, int j) {
  FrictionGeometry<4, 3> g{Vec<4>::Zero(), TangentBasis<3>()};
  g.weights(point) = 1.0;
  if (j < 0) {
    g.weights(i) = -1.0;
    g.basis = point_point_tangent_basis<3>(*x[point], *x[i]);
  } else {
    const double alpha = point_edge_closest_point<3>(*x[point], *x[i], *x[j]);
    g.weights(i) = -(1.0 - alpha);
    g.weights(j) = -alpha;
    g.basis = point_edge_tangent_basis<3>(*x[point], *x[i], *x[j]);
  }
  return g;
}

}  // namespace

FrictionGeometry<3, 2> point_edge_friction_geometry_2d(const Vec<2>& p, const Vec<2>& e0, const Vec<2>& e1) {
  switch (geometry::point_edge_case<2>(p, e0, e1)) {
    case geometry::PointEdgeCase::P_E0: return {Vec<3>(1.0, -1.0, 0.0), point_point_tangent_basis<2>(p, e0)};
    case geometry::PointEdgeCase::P_E1: return {Vec<3>(1.0, 0.0, -1.0), point_point_tangent_basis<2>(p, e1)};
    default: {
      const double alpha = point_edge_closest_point<2>(p, e0, e1);
      return {Vec<3>(1.0, -(1.0 - alpha), -alpha), point_edge_tangent_basis<2>(p, e0, e1)};
    }
  }
}

FrictionGeometry<4, 3> point_triangle_friction_geometry(const Vec<3>& p, const Vec<3>& t0, const Vec<3>& t1,
                                                        const Vec<3>& t2) {
  using geometry::PointTriangleCase;
  const Vec<3>* const x[4] = {&p, &t0, &t1, &t2};
  const PointTriangleCase c = geometry::point_triangle_case(p, t0, t1, t2);
  switch (c) {
    case PointTriangleCase::P_T0: return sub_case_geometry(x, 0, 1, -1);
    case PointTriangleCase::P_T1: return sub_case_geometry(x, 0, 2, -1);
    case PointTriangleCase::P_T2: return sub_case_geometry(x, 0, 3, -1);
    case PointTriangleCase::P_T: {
      const Eigen::Vector2d beta = point_triangle_closest_point(p, t0, t1, t2);
      return {Vec<4>(1.0, -(1.0 - beta.sum()), -beta(0), -beta(1)), point_triangle_tangent_basis(p, t0, t1, t2)};
    }
    default: {
      int i, j;
      geometry::point_triangle_edge(c, i, j);
      return sub_case_geometry(x, 0, i, j);
    }
  }
}

FrictionGeometry<4, 3> edge_edge_friction_geometry(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0,
                                                   const Vec<3>& eb1) {
  const Vec<3>* const x[4] = {&ea0, &ea1, &eb0, &eb1};
  const geometry::EdgeEdgeCase c = geometry::edge_edge_case(ea0, ea1, eb0, eb1);
  if (c == geometry::EdgeEdgeCase::EA_EB) {
    const Eigen::Vector2d st = edge_edge_closest_point(ea0, ea1, eb0, eb1);
    return {Vec<4>(1.0 - st(0), st(0), -(1.0 - st(1)), -st(1)), edge_edge_tangent_basis(ea0, ea1, eb0, eb1)};
  }
  const geometry::EdgeEdgeSub s = geometry::edge_edge_sub_stencil(c);
  return sub_case_geometry(x, s.point, s.i, s.j);
}

}  // namespace percussion::ipc
