#pragma once
// Shared helpers of the FE kernel tests: well-shaped random elements and central finite differences.
#include <random>
#include <type_traits>

#include <Eigen/Core>

#include "percussion/physics/fem/element_rest.hpp"

namespace percussion::fem::test {

// The reference simplex scaled by 0.7, with every vertex moved by up to 0.15 and shifted: positive volume.
template <int D>
Vertices<D> random_vertices(std::mt19937& rng) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  Vertices<D> x = Vertices<D>::Zero();
  x.template rightCols<D>() = 0.7 * Eigen::Matrix<double, D, D>::Identity();
  for (int a = 0; a <= D; ++a)
    for (int i = 0; i < D; ++i) x(i, a) += 0.15 * unit(rng) + 0.3;
  return x;
}

template <int D, int K>
NodalField<D, K> random_field(std::mt19937& rng, double scale) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  NodalField<D, K> u;
  for (int j = 0; j < u.cols(); ++j)
    for (int i = 0; i < D; ++i) u(i, j) = scale * unit(rng);
  return u;
}

// I plus a random perturbation of each entry by up to `scale`.
template <int D>
Tensor2<D> random_deformation_gradient(std::mt19937& rng, double scale) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  Tensor2<D> F = Tensor2<D>::Identity();
  for (int k = 0; k < D * D; ++k) F.data()[k] += scale * unit(rng);
  return F;
}

// Calls f(dimension, order) for P1 and P2 in 2D and 3D, as integral constants usable as template arguments.
template <class F>
void for_each_element(F&& f) {
  f(std::integral_constant<int, 2>{}, std::integral_constant<int, 1>{});
  f(std::integral_constant<int, 2>{}, std::integral_constant<int, 2>{});
  f(std::integral_constant<int, 3>{}, std::integral_constant<int, 1>{});
  f(std::integral_constant<int, 3>{}, std::integral_constant<int, 2>{});
}

// Central-difference gradient of f at x (a fixed-size matrix, perturbed entry by entry in storage order).
template <class X, class F>
Eigen::VectorXd fd_gradient(const X& x, F&& f, double h) {
  Eigen::VectorXd g(x.size());
  for (int k = 0; k < x.size(); ++k) {
    X xp = x, xm = x;
    xp.data()[k] += h;
    xm.data()[k] -= h;
    g(k) = (f(xp) - f(xm)) / (2.0 * h);
  }
  return g;
}

// Central-difference Jacobian of a vector-valued f (result flattened in storage order), column k = ∂f/∂x_k.
template <class X, class F>
Eigen::MatrixXd fd_jacobian(const X& x, F&& f, double h) {
  const auto f0 = f(x);
  Eigen::MatrixXd j(f0.size(), x.size());
  for (int k = 0; k < x.size(); ++k) {
    X xp = x, xm = x;
    xp.data()[k] += h;
    xm.data()[k] -= h;
    const auto fp = f(xp), fm = f(xm);
    j.col(k) = (Eigen::Map<const Eigen::VectorXd>(fp.data(), fp.size()) -
                Eigen::Map<const Eigen::VectorXd>(fm.data(), fm.size())) / (2.0 * h);
  }
  return j;
}

inline double relative_error(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return (a - b).norm() / std::max(1e-300, b.norm());
}

}  // namespace percussion::fem::test
