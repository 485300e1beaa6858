#include "percussion/physics/ipc/barrier_potential.hpp"

#include "percussion/geometry/distance/edge_edge.hpp"
#include "percussion/geometry/distance/edge_edge_mollifier.hpp"
#include "percussion/geometry/distance/point_triangle.hpp"

namespace percussion::ipc {

PairEnergy<12> point_triangle_barrier(const Vec<3>& p, const Vec<3>& t0, const Vec<3>& t1, const Vec<3>& t2,
                                      double dhat2, double w) {
  const geometry::PointTriangleCase c = geometry::point_triangle_case(p, t0, t1, t2);
  const double d2 = geometry::point_triangle_distance(p, t0, t1, t2, c);
  if (d2 >= dhat2) return {};
  return barrier_of_distance<12>(d2, geometry::point_triangle_distance_gradient(p, t0, t1, t2, c),
                                 geometry::point_triangle_distance_hessian(p, t0, t1, t2, c), dhat2, w);
}

PairEnergy<12> edge_edge_barrier(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1,
                                 double eps_x, double dhat2, double w) {
  const geometry::EdgeEdgeCase c = geometry::edge_edge_case(ea0, ea1, eb0, eb1);
  const double d2 = geometry::edge_edge_distance(ea0, ea1, eb0, eb1, c);
  if (d2 >= dhat2) return {};
  const PairEnergy<12> b =
      barrier_of_distance<12>(d2, geometry::edge_edge_distance_gradient(ea0, ea1, eb0, eb1, c),
                              geometry::edge_edge_distance_hessian(ea0, ea1, eb0, eb1, c), dhat2, w);
  const double cross = geometry::edge_edge_cross_squarednorm(ea0, ea1, eb0, eb1);
  if (cross >= eps_x || d2 <= 0.0) return b;
  const double m = geometry::mollifier(cross, eps_x);
  const Vec<12> gm = geometry::edge_edge_mollifier_gradient(ea0, ea1, eb0, eb1, eps_x);
  const Mat<12> hm = geometry::edge_edge_mollifier_hessian(ea0, ea1, eb0, eb1, eps_x);
  PairEnergy<12> e;
  e.value = m * b.value;
  e.gradient = m * b.gradient + b.value * gm;
  e.hessian = m * b.hessian + gm * b.gradient.transpose() + b.gradient * gm.transpose() + b.value * hm;
  return e;
}

}  // namespace percussion::ipc
