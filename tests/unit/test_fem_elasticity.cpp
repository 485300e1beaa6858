// Linear elastic and Neo-Hookean densities and element energies: derivatives against central finite
// differences, rigid-motion invariance, agreement at small strain, inversion detection.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include <Eigen/Geometry>

#include "../support/fem_test_support.hpp"
#include "percussion/physics/fem/elastic_element.hpp"
#include "percussion/physics/fem/linear_elastic.hpp"
#include "percussion/physics/fem/neo_hookean.hpp"

namespace test_fem_elasticity {

namespace fem = percussion::fem;
using namespace percussion::fem::test;  // random elements, finite differences

namespace {

const fem::Lame kLame = fem::lame_from_young_poisson(3.0, 0.3);

template <int D, class Material>
void check_density(const Material& m, std::mt19937& rng) {
  for (int trial = 0; trial < 3; ++trial) {
    const fem::Tensor2<D> F = random_deformation_gradient<D>(rng, 0.25);
    const Eigen::VectorXd g = fd_gradient(F, [&](const fem::Tensor2<D>& G) { return m.template energy<D>(G); }, 1e-6);
    const fem::Tensor2<D> P = m.template stress<D>(F);
    EXPECT_LT(relative_error(g, Eigen::Map<const Eigen::VectorXd>(P.data(), D * D)), 1e-8) << "P, D = " << D;
    const Eigen::MatrixXd A = fd_jacobian(F, [&](const fem::Tensor2<D>& G) { return m.template stress<D>(G); }, 1e-6);
    EXPECT_LT(relative_error(A, m.template tangent<D>(F)), 1e-8) << "dP/dF, D = " << D;
    // Material derivatives of the stress.
    Material ml = m, mu = m;
    const double h = 1e-6;
    ml.lame.lambda += h;
    mu.lame.mu += h;
    Material mlm = m, mum = m;
    mlm.lame.lambda -= h;
    mum.lame.mu -= h;
    const fem::Tensor2<D> dl = (ml.template stress<D>(F) - mlm.template stress<D>(F)) / (2 * h);
    const fem::Tensor2<D> dm = (mu.template stress<D>(F) - mum.template stress<D>(F)) / (2 * h);
    EXPECT_LT(relative_error(dl, m.template stress_d_lambda<D>(F)), 1e-8);
    EXPECT_LT(relative_error(dm, m.template stress_d_mu<D>(F)), 1e-8);
  }
}

// Element gradient against FD of the energy, Hessian against FD of the gradient.
template <int D, int K, class Material>
void check_element(const Material& m, std::mt19937& rng) {
  const auto e = fem::element_rest<D, K>(random_vertices<D>(rng));
  ASSERT_TRUE(e.has_value());
  const fem::NodalField<D, K> u = random_field<D, K>(rng, 0.08);
  const auto energy = [&](const fem::NodalField<D, K>& v) { return fem::elastic_energy(*e, v, m); };
  const auto gradient = [&](const fem::NodalField<D, K>& v) { return fem::elastic_gradient(*e, v, m); };
  const auto g = gradient(u);
  const auto H = fem::elastic_hessian(*e, u, m);
  EXPECT_LT(relative_error(fd_gradient(u, energy, 1e-6), g), 1e-7) << "D " << D << " P" << K;
  EXPECT_LT(relative_error(fd_jacobian(u, gradient, 1e-6), H), 1e-7) << "D " << D << " P" << K;
  EXPECT_LT((H - H.transpose()).norm(), 1e-12 * H.norm());
}

template <int D>
fem::Tensor2<D> rotation() {
  if constexpr (D == 2) {
    return Eigen::Rotation2Dd(0.7).toRotationMatrix();
  } else {
    return Eigen::AngleAxisd(1.1, Eigen::Vector3d(1.0, -2.0, 0.5).normalized()).toRotationMatrix();
  }
}

template <int D, int K>
void check_rigid(std::mt19937& rng) {
  const fem::Vertices<D> X = random_vertices<D>(rng);
  const auto e = fem::element_rest<D, K>(X);
  const fem::NeoHookean nh{kLame};
  const fem::NodalField<D, K> x = fem::node_positions<D, K>(X);
  const fem::Tensor2<D> R = rotation<D>();
  const Eigen::Matrix<double, D, 1> c = Eigen::Matrix<double, D, 1>::LinSpaced(0.3, -0.4);
  // A rigid motion stores no energy and exerts no force.
  const fem::NodalField<D, K> rigid = ((R - fem::Tensor2<D>::Identity()) * x).colwise() + c;
  EXPECT_NEAR(fem::elastic_energy(*e, rigid, nh), 0.0, 1e-13);
  EXPECT_LT(fem::elastic_gradient(*e, rigid, nh).norm(), 1e-12);
  // A rigid motion after a deformation leaves the energy unchanged: x' = R(x + u) + c.
  const fem::NodalField<D, K> u = random_field<D, K>(rng, 0.1);
  const fem::NodalField<D, K> moved = ((R * (x + u)).colwise() + c) - x;
  EXPECT_NEAR(fem::elastic_energy(*e, moved, nh), fem::elastic_energy(*e, u, nh),
              1e-13 * fem::elastic_energy(*e, u, nh));
  EXPECT_GT(fem::elastic_energy(*e, u, nh), 1e-4);
}

// At small strain εU: tangents agree at F = I, energies differ by O(ε³), gradients by O(ε²).
template <int D, int K>
void check_small_strain(std::mt19937& rng) {
  const auto e = fem::element_rest<D, K>(random_vertices<D>(rng));
  const fem::NeoHookean nh{kLame};
  const fem::LinearElastic le{kLame};
  const fem::Tensor2<D> I = fem::Tensor2<D>::Identity();
  EXPECT_LT((nh.tangent<D>(I) - le.tangent<D>(I)).norm(), 1e-14);
  const fem::NodalField<D, K> U = random_field<D, K>(rng, 1.0);
  double prev_de = 0.0, prev_dg = 0.0;
  for (double eps : {1e-2, 5e-3}) {
    const fem::NodalField<D, K> u = eps * U;
    const double de = std::abs(fem::elastic_energy(*e, u, nh) - fem::elastic_energy(*e, u, le));
    const double dg = (fem::elastic_gradient(*e, u, nh) - fem::elastic_gradient(*e, u, le)).norm();
    EXPECT_LT(de, 3.0 * eps * fem::elastic_energy(*e, u, le));  // relative gap O(strain)
    if (prev_de > 0.0) {
      EXPECT_NEAR(prev_de / de, 8.0, 0.5);  // third order
      EXPECT_NEAR(prev_dg / dg, 4.0, 0.3);  // second order
    }
    prev_de = de;
    prev_dg = dg;
  }
}

}  // namespace

TEST(FemElasticity, DensityStressAndTangentMatchFiniteDifferences) {
  std::mt19937 rng(11);
  check_density<2>(fem::LinearElastic{kLame}, rng);
  check_density<3>(fem::LinearElastic{kLame}, rng);
  check_density<2>(fem::NeoHookean{kLame}, rng);
  check_density<3>(fem::NeoHookean{kLame}, rng);
}

TEST(FemElasticity, LameFromYoungPoissonAndItsDerivatives) {
  const fem::Lame l = fem::lame_from_young_poisson(210.0, 0.25);
  EXPECT_NEAR(l.mu, 84.0, 1e-12);
  EXPECT_NEAR(l.lambda, 84.0, 1e-12);
  const double E = 3.0, nu = 0.3, h = 1e-6;
  const auto d = fem::lame_derivatives(E, nu);
  const auto dE = [&](auto f) { return (f(E + h, nu) - f(E - h, nu)) / (2 * h); };
  const auto dn = [&](auto f) { return (f(E, nu + h) - f(E, nu - h)) / (2 * h); };
  const auto lam = [](double a, double b) { return fem::lame_from_young_poisson(a, b).lambda; };
  const auto mu = [](double a, double b) { return fem::lame_from_young_poisson(a, b).mu; };
  EXPECT_NEAR(d.d_young.lambda, dE(lam), 1e-8);
  EXPECT_NEAR(d.d_young.mu, dE(mu), 1e-8);
  EXPECT_NEAR(d.d_poisson.lambda, dn(lam), 1e-7);
  EXPECT_NEAR(d.d_poisson.mu, dn(mu), 1e-7);
}

TEST(FemElasticity, ElementGradientAndHessianMatchFiniteDifferences) {
  std::mt19937 rng(12);
  for (int trial = 0; trial < 2; ++trial) {
    for_each_element([&](auto d, auto k) { check_element<d, k>(fem::LinearElastic{kLame}, rng); });
    for_each_element([&](auto d, auto k) { check_element<d, k>(fem::NeoHookean{kLame}, rng); });
  }
}

TEST(FemElasticity, NeoHookeanIsInvariantUnderRigidMotions) {
  std::mt19937 rng(13);
  for_each_element([&](auto d, auto k) { check_rigid<d, k>(rng); });
}

TEST(FemElasticity, LinearElasticityIsNeoHookeanToFirstOrder) {
  std::mt19937 rng(14);
  for_each_element([&](auto d, auto k) { check_small_strain<d, k>(rng); });
}

TEST(FemElasticity, InversionGivesInfiniteEnergy) {
  fem::Vertices<3> X;
  X << 0, 1, 0, 0,  //
      0, 0, 1, 0,   //
      0, 0, 0, 1;
  const auto e1 = fem::element_rest<3, 1>(X);
  const fem::NeoHookean nh{kLame};
  fem::NodalField<3, 1> u = fem::NodalField<3, 1>::Zero();
  u(2, 3) = -0.9;  // apex just above the base: J = 0.1
  EXPECT_TRUE(std::isfinite(fem::elastic_energy(*e1, u, nh)));
  EXPECT_NEAR(fem::min_jacobian(*e1, u), 0.1, 1e-15);
  u(2, 3) = -1.1;  // apex through the base: J = −0.1
  EXPECT_EQ(fem::elastic_energy(*e1, u, nh), std::numeric_limits<double>::infinity());
  EXPECT_NEAR(fem::min_jacobian(*e1, u), -0.1, 1e-15);
  u(2, 3) = -1.0;  // flat: J = 0
  EXPECT_EQ(fem::elastic_energy(*e1, u, nh), std::numeric_limits<double>::infinity());
  // P2: pulling one edge node folds the element at a vertex, and a mirrored element is inverted everywhere.
  const auto e2 = fem::element_rest<3, 2>(X);
  fem::NodalField<3, 2> v = fem::NodalField<3, 2>::Zero();
  v(0, 4) = 0.6;  // midpoint of edge 0–1 pushed past vertex 1: ∂x/∂ξ at vertex 0 turns negative
  EXPECT_LT(fem::min_jacobian(*e2, v), 0.0);
  const fem::NodalField<3, 2> x2 = fem::node_positions<3, 2>(X);
  v.setZero();
  v.row(0) = -2.0 * x2.row(0);
  EXPECT_NEAR(fem::min_jacobian(*e2, v), -1.0, 1e-14);
  EXPECT_EQ(fem::elastic_energy(*e2, v, nh), std::numeric_limits<double>::infinity());
}

}  // namespace test_fem_elasticity
