#pragma once
// Central finite differences of fixed-size kernels: the gradient from the value, the Hessian from the gradient,
// and the relative error ‖analytic − fd‖ / max(‖fd‖, floor) that the derivative tests bound.
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <algorithm>
#include <random>
#include <string>

namespace percussion::test {

template <int N, class F>
Eigen::Matrix<double, N, 1> fd_gradient(F&& f, const Eigen::Matrix<double, N, 1>& x, double h) {
  Eigen::Matrix<double, N, 1> g;
  for (int i = 0; i < N; ++i) {
    Eigen::Matrix<double, N, 1> xp = x, xm = x;
    xp(i) += h;
    xm(i) -= h;
    g(i) = (f(xp) - f(xm)) / (2.0 * h);
  }
  return g;
}

template <int N, class G>
Eigen::Matrix<double, N, N> fd_jacobian(G&& g, const Eigen::Matrix<double, N, 1>& x, double h) {
  Eigen::Matrix<double, N, N> J;
  for (int i = 0; i < N; ++i) {
    Eigen::Matrix<double, N, 1> xp = x, xm = x;
    xp(i) += h;
    xm(i) -= h;
    J.col(i) = (g(xp) - g(xm)) / (2.0 * h);
  }
  return J;
}

template <class A, class B>
double relative_error(const A& analytic, const B& fd, double floor = 1e-12) {
  return (analytic - fd).norm() / std::max(fd.norm(), floor);
}

// Point i (dimension D) of a flattened stencil.
template <int D, int N>
Eigen::Matrix<double, D, 1> point(const Eigen::Matrix<double, N, 1>& x, int i) {
  return x.template segment<D>(D * i);
}

// Expects value f, gradient g and Hessian H (callables on the stencil) to agree with central differences of
// step h at x, to relative error tol (relative to at least `floor`, for derivatives that vanish).
template <int N, class F, class G, class H>
void expect_derivatives(F&& f, G&& g, H&& hess, const Eigen::Matrix<double, N, 1>& x, double h, double tol,
                        const std::string& what = "", double floor = 1e-12) {
  EXPECT_LT(relative_error(g(x), fd_gradient<N>(f, x, h), floor), tol) << what;
  EXPECT_LT(relative_error(hess(x), fd_jacobian<N>(g, x, h), floor), tol) << what;
}

// Seeded random points: coordinates uniform in [-1, 1].
struct RandomPoints {
  std::mt19937 rng{20261206u};
  std::uniform_real_distribution<double> u{-1.0, 1.0};
  template <int N>
  Eigen::Matrix<double, N, 1> vec() {
    Eigen::Matrix<double, N, 1> v;
    for (int i = 0; i < N; ++i) v(i) = u(rng);
    return v;
  }
  double uniform(double lo, double hi) { return lo + (hi - lo) * 0.5 * (u(rng) + 1.0); }
};

}  // namespace percussion::test
