#pragma once
// Quadrature on the reference simplex {ξ_i ≥ 0, Σξ_i ≤ 1}, positive weights summing to its volume 1/D!.
// SimplexQuadrature<D, Degree> integrates every polynomial of total degree ≤ Degree exactly (some rules more):
// degree 2(K−1) covers the stiffness of linear elasticity on P_K, degree 2K the P_K mass matrix.
#include <array>
#include <cmath>

#include <Eigen/Core>

namespace percussion::fem {

template <int D, int N>
struct QuadratureRule {
  static constexpr int kPoints = N;
  std::array<Eigen::Matrix<double, D, 1>, N> points;
  std::array<double, N> weights;
};

template <int D, int Degree>
struct SimplexQuadrature;  // specialised below for Degree 1, 2, 4

namespace quadrature_detail {

// Points of the fully symmetric orbits of a simplex, given in barycentric coordinates (first D+1 of D+1 used).
template <int D>
Eigen::Matrix<double, D, 1> from_barycentric(const std::array<double, D + 1>& l) {
  Eigen::Matrix<double, D, 1> p;
  for (int i = 0; i < D; ++i) p(i) = l[i + 1];
  return p;
}

}  // namespace quadrature_detail

// Segment [0, 1]: Gauss–Legendre with 1, 2 and 3 points (exact to degree 1, 3, 5).
template <>
struct SimplexQuadrature<1, 1> {
  static constexpr int kPoints = 1;
  static const QuadratureRule<1, 1>& rule() {
    static const QuadratureRule<1, 1> r{{Eigen::Matrix<double, 1, 1>(0.5)}, {1.0}};
    return r;
  }
};
template <>
struct SimplexQuadrature<1, 2> {
  static constexpr int kPoints = 2;
  static const QuadratureRule<1, 2>& rule() {
    static const QuadratureRule<1, 2> r = [] {
      const double h = 0.5 / std::sqrt(3.0);
      return QuadratureRule<1, 2>{{Eigen::Matrix<double, 1, 1>(0.5 - h), Eigen::Matrix<double, 1, 1>(0.5 + h)},
                                  {0.5, 0.5}};
    }();
    return r;
  }
};
template <>
struct SimplexQuadrature<1, 4> {
  static constexpr int kPoints = 3;
  static const QuadratureRule<1, 3>& rule() {
    static const QuadratureRule<1, 3> r = [] {
      const double h = 0.5 * std::sqrt(0.6);
      return QuadratureRule<1, 3>{{Eigen::Matrix<double, 1, 1>(0.5 - h), Eigen::Matrix<double, 1, 1>(0.5),
                                   Eigen::Matrix<double, 1, 1>(0.5 + h)},
                                  {5.0 / 18.0, 8.0 / 18.0, 5.0 / 18.0}};
    }();
    return r;
  }
};

// Triangle: centroid; the 3 interior points (1/6, 1/6, 2/3); Dunavant's 6-point degree-4 rule.
template <>
struct SimplexQuadrature<2, 1> {
  static constexpr int kPoints = 1;
  static const QuadratureRule<2, 1>& rule() {
    static const QuadratureRule<2, 1> r{{Eigen::Vector2d(1.0 / 3.0, 1.0 / 3.0)}, {0.5}};
    return r;
  }
};
template <>
struct SimplexQuadrature<2, 2> {
  static constexpr int kPoints = 3;
  static const QuadratureRule<2, 3>& rule() {
    static const QuadratureRule<2, 3> r{
        {Eigen::Vector2d(1.0 / 6.0, 1.0 / 6.0), Eigen::Vector2d(2.0 / 3.0, 1.0 / 6.0),
         Eigen::Vector2d(1.0 / 6.0, 2.0 / 3.0)},
        {1.0 / 6.0, 1.0 / 6.0, 1.0 / 6.0}};
    return r;
  }
};
template <>
struct SimplexQuadrature<2, 4> {
  static constexpr int kPoints = 6;
  static const QuadratureRule<2, 6>& rule() {
    static const QuadratureRule<2, 6> r = [] {
      QuadratureRule<2, 6> q;
      const double a[2] = {0.44594849091596488632, 0.09157621350977074346};
      const double w[2] = {0.22338158967801146570, 0.10995174365532186764};  // on unit area
      for (int o = 0; o < 2; ++o) {
        const double b = 1.0 - 2.0 * a[o];
        q.points[3 * o + 0] = Eigen::Vector2d(a[o], a[o]);
        q.points[3 * o + 1] = Eigen::Vector2d(b, a[o]);
        q.points[3 * o + 2] = Eigen::Vector2d(a[o], b);
        for (int k = 0; k < 3; ++k) q.weights[3 * o + k] = 0.5 * w[o];
      }
      return q;
    }();
    return r;
  }
};

// Tetrahedron: centroid; the 4-point degree-2 rule; the 14-point degree-5 rule with positive weights (Walkington).
template <>
struct SimplexQuadrature<3, 1> {
  static constexpr int kPoints = 1;
  static const QuadratureRule<3, 1>& rule() {
    static const QuadratureRule<3, 1> r{{Eigen::Vector3d(0.25, 0.25, 0.25)}, {1.0 / 6.0}};
    return r;
  }
};
template <>
struct SimplexQuadrature<3, 2> {
  static constexpr int kPoints = 4;
  static const QuadratureRule<3, 4>& rule() {
    static const QuadratureRule<3, 4> r = [] {
      QuadratureRule<3, 4> q;
      const double a = (5.0 - std::sqrt(5.0)) / 20.0, b = 1.0 - 3.0 * a;
      for (int k = 0; k < 4; ++k) {
        std::array<double, 4> l{a, a, a, a};
        l[k] = b;
        q.points[k] = quadrature_detail::from_barycentric<3>(l);
        q.weights[k] = 1.0 / 24.0;
      }
      return q;
    }();
    return r;
  }
};
template <>
struct SimplexQuadrature<3, 4> {
  static constexpr int kPoints = 14;
  static const QuadratureRule<3, 14>& rule() {
    static const QuadratureRule<3, 14> r = [] {
      QuadratureRule<3, 14> q;
      int n = 0;
      // Two orbits of 4 points (a, a, a, 1 − 3a).
      const double a4[2] = {0.09273525031089122640, 0.31088591926330060980};
      const double w4[2] = {0.01224884051939365826, 0.01878132095300264180};
      for (int o = 0; o < 2; ++o) {
        for (int k = 0; k < 4; ++k) {
          std::array<double, 4> l{a4[o], a4[o], a4[o], a4[o]};
          l[k] = 1.0 - 3.0 * a4[o];
          q.points[n] = quadrature_detail::from_barycentric<3>(l);
          q.weights[n++] = w4[o];
        }
      }
      // One orbit of 6 points (a, a, b, b), a + b = ½.
      const double a6 = 0.45449629587435035050, b6 = 0.5 - a6;
      const double w6 = 0.00709100346284691107;
      const int pairs[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
      for (const auto& p : pairs) {
        std::array<double, 4> l{b6, b6, b6, b6};
        l[p[0]] = a6;
        l[p[1]] = a6;
        q.points[n] = quadrature_detail::from_barycentric<3>(l);
        q.weights[n++] = w6;
      }
      return q;
    }();
    return r;
  }
};

}  // namespace percussion::fem
