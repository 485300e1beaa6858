// P1/P2 Lagrange bases, quadrature, rest geometry, mass matrices and load vectors of the FE kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include <Eigen/Eigenvalues>

#include "../support/fem_test_support.hpp"
#include "percussion/physics/fem/mass.hpp"
#include "percussion/physics/fem/traction.hpp"

namespace test_fem_basis {

namespace fem = percussion::fem;
using namespace percussion::fem::test;  // random elements, finite differences

namespace {

template <int D, int K>
void check_basis() {
  using B = fem::Lagrange<D, K>;
  // Kronecker property at the nodes, partition of unity and zero-sum gradients at an interior point.
  for (int a = 0; a < B::kNodes; ++a) {
    const auto v = B::values(B::node(a));
    for (int b = 0; b < B::kNodes; ++b) EXPECT_NEAR(v(b), a == b ? 1.0 : 0.0, 1e-15) << a << " " << b;
  }
  typename B::Point xi;
  for (int i = 0; i < D; ++i) xi(i) = 0.1 + 0.13 * i;
  EXPECT_NEAR(B::values(xi).sum(), 1.0, 1e-15);
  EXPECT_LT(B::gradients(xi).colwise().sum().norm(), 1e-14);
  // Gradients against central differences of the values.
  const Eigen::MatrixXd fd = fem::test::fd_jacobian(xi, [](const typename B::Point& p) { return B::values(p); }, 1e-6);
  EXPECT_LT(fem::test::relative_error(fd, B::gradients(xi)), 1e-9);
}

double factorial(int n) { return n <= 1 ? 1.0 : n * factorial(n - 1); }

// ∫ ξ^a η^b ζ^c over the reference simplex = a! b! c! / (a + b + c + D)!.
template <int D, int Degree>
double worst_monomial_error() {
  const auto& r = fem::SimplexQuadrature<D, Degree>::rule();
  double worst = 0.0;
  for (int a = 0; a <= Degree; ++a)
    for (int b = 0; b <= (D > 1 ? Degree - a : 0); ++b)
      for (int c = 0; c <= (D > 2 ? Degree - a - b : 0); ++c) {
        double s = 0.0;
        for (std::size_t q = 0; q < r.weights.size(); ++q) {
          const auto& p = r.points[q];
          s += r.weights[q] * std::pow(p(0), a) * (D > 1 ? std::pow(p(std::min(1, D - 1)), b) : 1.0) *
               (D > 2 ? std::pow(p(std::min(2, D - 1)), c) : 1.0);
        }
        const double exact = factorial(a) * factorial(b) * factorial(c) / factorial(a + b + c + D);
        worst = std::max(worst, std::abs(s - exact) / exact);
      }
  return worst;
}

template <int D, int K>
void check_mass(std::mt19937& rng) {
  const auto X = random_vertices<D>(rng);
  const auto e = fem::element_rest<D, K>(X);
  ASSERT_TRUE(e.has_value());
  const double rho = 2.5;
  const auto m = fem::consistent_mass<D, K>(*e, rho);
  EXPECT_NEAR(m.sum(), rho * e->volume, 1e-14);
  EXPECT_LT((m - m.transpose()).norm(), 1e-16);
  EXPECT_GT(Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(m).eigenvalues().minCoeff(), 0.0);
  const auto lumped = fem::lumped_mass<D, K>(*e, rho);
  EXPECT_NEAR(lumped.sum(), rho * e->volume, 1e-14);
  EXPECT_GT(lumped.minCoeff(), 0.0);
  // The mass reproduces ∫ρ u·w for an affine u and w = 1: Σ_ab M_ab u_b = ρ ∫ u = ρ V u(centroid).
  const auto x = fem::node_positions<D, K>(X);
  const Eigen::Matrix<double, D, 1> centroid = X.rowwise().mean();
  const Eigen::VectorXd ux = x.row(0).transpose();
  EXPECT_NEAR((m * ux).sum(), rho * e->volume * centroid(0), 1e-14);
  // Gravity: total force ρ V g, first moment ρ V g x_c.
  const Eigen::Matrix<double, D, 1> g = Eigen::Matrix<double, D, 1>::LinSpaced(-1.0, 2.0);
  const auto f = fem::gravity_load<D, K>(*e, rho, g);
  const Eigen::Map<const fem::NodalField<D, K>> fn(f.data());
  EXPECT_LT((fn.rowwise().sum() - rho * e->volume * g).norm(), 1e-14);
  EXPECT_NEAR((fn.row(0).array() * x.row(0).array()).sum(), rho * e->volume * g(0) * centroid(0), 1e-14);
}

template <int D, int K>
void check_traction() {
  fem::FaceVertices<D> X;
  if constexpr (D == 2) {
    X << 0.2, 1.0, 0.1, 0.5;  // edge from (0.2, 0.1) to (1.0, 0.5)
  } else {
    X << 0.0, 2.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0;  // triangle in the plane z = 1, area 1
  }
  const double measure = fem::face_measure<D>(X);
  EXPECT_NEAR(measure, D == 2 ? std::sqrt(0.64 + 0.16) : 1.0, 1e-15);
  const Eigen::Matrix<double, D, 1> t = Eigen::Matrix<double, D, 1>::LinSpaced(0.5, 1.5);
  const auto f = fem::traction_load<D, K>(X, t);
  const Eigen::Map<const Eigen::Matrix<double, D, fem::Lagrange<D - 1, K>::kNodes>> fn(f.data());
  EXPECT_LT((fn.rowwise().sum() - measure * t).norm(), 1e-15);
  const auto s = fem::face_shape_integrals<D, K>(X);
  if constexpr (K == 1) {
    EXPECT_NEAR(s(0), measure / D, 1e-15);
  } else if constexpr (D == 2) {
    EXPECT_NEAR(s(0), measure / 6.0, 1e-15);  // Simpson: L/6, L/6, 2L/3
    EXPECT_NEAR(s(2), 2.0 * measure / 3.0, 1e-15);
  } else {
    EXPECT_NEAR(s(0), 0.0, 1e-15);  // P2 triangle: vertices carry nothing, edges A/3
    EXPECT_NEAR(s(4), measure / 3.0, 1e-15);
  }
}

}  // namespace

TEST(FemBasis, LagrangeNodesPartitionOfUnityAndGradients) {
  check_basis<1, 1>();
  check_basis<1, 2>();
  for_each_element([&](auto d, auto k) { check_basis<d, k>(); });
}

TEST(FemBasis, QuadratureIsExactToItsDegree) {
  EXPECT_LT((worst_monomial_error<1, 1>()), 1e-15);
  EXPECT_LT((worst_monomial_error<1, 2>()), 1e-15);
  EXPECT_LT((worst_monomial_error<1, 4>()), 1e-15);
  EXPECT_LT((worst_monomial_error<2, 1>()), 1e-15);
  EXPECT_LT((worst_monomial_error<2, 2>()), 1e-15);
  EXPECT_LT((worst_monomial_error<2, 4>()), 1e-15);
  EXPECT_LT((worst_monomial_error<3, 1>()), 1e-15);
  EXPECT_LT((worst_monomial_error<3, 2>()), 1e-15);
  EXPECT_LT((worst_monomial_error<3, 4>()), 1e-14);
}

TEST(FemBasis, RestGeometryAndInvertedInput) {
  fem::Vertices<3> X;
  X << 0, 2, 0, 0,  //
      0, 0, 3, 0,   //
      0, 0, 0, 4;
  EXPECT_NEAR(fem::signed_volume<3>(X), 4.0, 1e-15);
  const auto e = fem::element_rest<3, 2>(X);
  ASSERT_TRUE(e.has_value());
  double w = 0.0;
  for (double wq : e->weight) w += wq;
  EXPECT_NEAR(w, 4.0, 1e-14);
  EXPECT_NEAR(e->grad[0].col(0).sum(), 0.0, 1e-15);
  // Swapping two vertices inverts the element, collapsing one flattens it: both refused.
  fem::Vertices<3> swapped = X;
  swapped.col(1).swap(swapped.col(2));
  EXPECT_NEAR(fem::signed_volume<3>(swapped), -4.0, 1e-15);
  EXPECT_FALSE((fem::element_rest<3, 1>(swapped).has_value()));
  fem::Vertices<2> flat;
  flat << 0, 1, 2, 0, 1, 2;
  EXPECT_FALSE((fem::element_rest<2, 2>(flat).has_value()));
}

TEST(FemBasis, MassMatrixSumsToElementMassAndLoadsBalance) {
  std::mt19937 rng(7);
  for_each_element([&](auto d, auto k) { check_mass<d, k>(rng); });
  // P1 triangle consistent mass is ρA/12 [2 1 1; 1 2 1; 1 1 2].
  fem::Vertices<2> X;
  X << 0, 1, 0, 0, 0, 1;
  const auto m = fem::consistent_mass<2, 1>(*fem::element_rest<2, 1>(X), 3.0);
  EXPECT_NEAR(m(0, 0), 3.0 * 0.5 * 2.0 / 12.0, 1e-16);
  EXPECT_NEAR(m(0, 1), 3.0 * 0.5 / 12.0, 1e-16);
}

TEST(FemBasis, TractionLoadOnEdgesAndTriangles) {
  for_each_element([&](auto d, auto k) { check_traction<d, k>(); });
}

}  // namespace test_fem_basis
