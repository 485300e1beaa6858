#pragma once
// Per-pair barrier potential (notes 002 §2.7): w · b(d²(x), d̂²) with w = κ·A_k, and for edge–edge pairs
// w · m(c(x)) · b(d²(x), d̂²), with gradient and Hessian on the pair's stencil: 2D point–edge 6 dofs, 3D
// point–triangle and edge–edge 12 dofs. The distance sub-case is classified here, so a pair keeps its stencil
// while its closest points move between regions. Exact Hessians (not projected; see psd_projection.hpp).
#include "percussion/geometry/distance/distance_type.hpp"
#include "percussion/geometry/distance/point_edge.hpp"
#include "percussion/physics/ipc/barrier.hpp"

namespace percussion::ipc {

template <int N>
using Vec = geometry::Vec<N>;
template <int N>
using Mat = geometry::Mat<N>;

template <int N>
struct PairEnergy {
  double value = 0.0;
  Vec<N> gradient = Vec<N>::Zero();
  Mat<N> hessian = Mat<N>::Zero();
};

// w b(d²) from a squared distance and its derivatives (chain rule on d²). An inactive pair (d² ≥ d̂²) is zero;
// d² ≤ 0 gives an infinite value and zero derivatives.
template <int N>
PairEnergy<N> barrier_of_distance(double d2, const Vec<N>& grad_d2, const Mat<N>& hess_d2, double dhat2, double w) {
  PairEnergy<N> e;
  e.value = w * barrier(d2, dhat2);
  const double b1 = w * barrier_first_derivative(d2, dhat2), b2 = w * barrier_second_derivative(d2, dhat2);
  e.gradient = b1 * grad_d2;
  e.hessian = b2 * grad_d2 * grad_d2.transpose() + b1 * hess_d2;
  return e;
}

// Point–edge pair [p, e0, e1] in D dimensions (the 2D contact pair; 3D for tests and planar sub-cases).
template <int D>
PairEnergy<3 * D> point_edge_barrier(const Vec<D>& p, const Vec<D>& e0, const Vec<D>& e1, double dhat2, double w) {
  const geometry::PointEdgeCase c = geometry::point_edge_case<D>(p, e0, e1);
  const double d2 = geometry::point_edge_distance<D>(p, e0, e1, c);
  if (d2 >= dhat2) return {};
  return barrier_of_distance<3 * D>(d2, geometry::point_edge_distance_gradient<D>(p, e0, e1, c),
                                    geometry::point_edge_distance_hessian<D>(p, e0, e1, c), dhat2, w);
}

// Point–triangle pair [p, t0, t1, t2].
PairEnergy<12> point_triangle_barrier(const Vec<3>& p, const Vec<3>& t0, const Vec<3>& t1, const Vec<3>& t2,
                                      double dhat2, double w);

// Edge–edge pair [ea0, ea1, eb0, eb1], mollified with threshold eps_x (edge_edge_mollifier_threshold of the rest
// positions): value m b, gradient m ∇b + b ∇m, Hessian m ∇²b + ∇m ∇bᵀ + ∇b ∇mᵀ + b ∇²m.
PairEnergy<12> edge_edge_barrier(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1,
                                 double eps_x, double dhat2, double w);

}  // namespace percussion::ipc
