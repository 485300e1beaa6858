#pragma once
// P1 and P2 Lagrange bases on the reference simplex {ξ_i ≥ 0, Σξ_i ≤ 1} (notes 002 §2.1). Nodes: the D+1
// vertices (vertex 0 at the origin, vertex i at e_i), then for P2 one node per edge midpoint in the order of
// simplex_edges<D>(), which is VTK's/XDMF's (Triangle_6, Tetrahedron_10) so output needs no reordering.
#include <array>

#include <Eigen/Core>

namespace percussion::fem {

template <int D>
inline constexpr int kSimplexEdges = D * (D + 1) / 2;

// Vertex pairs of the edges of the reference simplex, in P2 node order (node D+1+e sits on edge e).
template <int D>
constexpr std::array<std::array<int, 2>, kSimplexEdges<D>> simplex_edges() {
  static_assert(D >= 1 && D <= 3, "simplices of dimension 1, 2 or 3");
  if constexpr (D == 1) {
    return {{{0, 1}}};
  } else if constexpr (D == 2) {
    return {{{0, 1}, {1, 2}, {2, 0}}};
  } else {
    return {{{0, 1}, {1, 2}, {2, 0}, {0, 3}, {1, 3}, {2, 3}}};
  }
}

template <int D, int K>
struct Lagrange {
  static_assert(K == 1 || K == 2, "P1 or P2");
  static constexpr int kNodes = K == 1 ? D + 1 : D + 1 + kSimplexEdges<D>;
  using Point = Eigen::Matrix<double, D, 1>;
  using Values = Eigen::Matrix<double, kNodes, 1>;
  using Gradients = Eigen::Matrix<double, kNodes, D>;  // row a: ∂φ_a/∂ξ

  static Eigen::Matrix<double, D + 1, 1> barycentric(const Point& xi) {
    Eigen::Matrix<double, D + 1, 1> l;
    l(0) = 1.0 - xi.sum();
    l.template tail<D>() = xi;
    return l;
  }

  // Rows are ∂λ_a/∂ξ, constant.
  static Eigen::Matrix<double, D + 1, D> barycentric_gradients() {
    Eigen::Matrix<double, D + 1, D> g;
    g.row(0).setConstant(-1.0);
    g.template bottomRows<D>().setIdentity();
    return g;
  }

  static Values values(const Point& xi) {
    const auto l = barycentric(xi);
    Values v;
    if constexpr (K == 1) {
      v = l;
    } else {
      for (int a = 0; a <= D; ++a) v(a) = l(a) * (2.0 * l(a) - 1.0);
      constexpr auto edges = simplex_edges<D>();
      for (int e = 0; e < kSimplexEdges<D>; ++e) v(D + 1 + e) = 4.0 * l(edges[e][0]) * l(edges[e][1]);
    }
    return v;
  }

  static Gradients gradients(const Point& xi) {
    const auto gl = barycentric_gradients();
    Gradients g;
    if constexpr (K == 1) {
      g = gl;
    } else {
      const auto l = barycentric(xi);
      for (int a = 0; a <= D; ++a) g.row(a) = (4.0 * l(a) - 1.0) * gl.row(a);
      constexpr auto edges = simplex_edges<D>();
      for (int e = 0; e < kSimplexEdges<D>; ++e) {
        const int p = edges[e][0], q = edges[e][1];
        g.row(D + 1 + e) = 4.0 * (l(p) * gl.row(q) + l(q) * gl.row(p));
      }
    }
    return g;
  }

  // Reference coordinates of node a (a vertex or an edge midpoint).
  static Point node(int a) {
    auto vertex = [](int v) {
      Point p = Point::Zero();
      if (v > 0) p(v - 1) = 1.0;
      return p;
    };
    if (a <= D) return vertex(a);
    constexpr auto edges = simplex_edges<D>();
    return 0.5 * (vertex(edges[a - D - 1][0]) + vertex(edges[a - D - 1][1]));
  }
};

}  // namespace percussion::fem
