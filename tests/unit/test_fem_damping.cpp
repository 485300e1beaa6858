// Viscous damping as an incremental potential: stress, tangent and cross-step block against central finite
// differences, for the density and for P1/P2 elements in 2D and 3D; no dissipation under rigid motion.
#include <gtest/gtest.h>

#include <random>

#include <Eigen/Geometry>

#include "../support/fem_test_support.hpp"
#include "percussion/physics/fem/viscous_damping.hpp"

namespace test_fem_damping {

namespace fem = percussion::fem;
using namespace percussion::fem::test;  // random elements, finite differences

namespace {

const fem::ViscousDamping kDamping{0.7, 0.4, 0.01};

template <int D>
void check_density(std::mt19937& rng) {
  const fem::ViscousDamping& d = kDamping;
  const fem::Tensor2<D> F = random_deformation_gradient<D>(rng, 0.2), Fp = random_deformation_gradient<D>(rng, 0.2);
  using T = fem::Tensor2<D>;
  const Eigen::VectorXd g = fd_gradient(F, [&](const T& G) { return d.energy<D>(G, Fp); }, 1e-6);
  const T P = d.stress<D>(F, Fp);
  EXPECT_LT(relative_error(g, Eigen::Map<const Eigen::VectorXd>(P.data(), D * D)), 1e-8);
  EXPECT_LT(relative_error(fd_jacobian(F, [&](const T& G) { return d.stress<D>(G, Fp); }, 1e-6), d.tangent<D>(F, Fp)),
            1e-8);
  EXPECT_LT(relative_error(fd_jacobian(Fp, [&](const T& G) { return d.stress<D>(F, G); }, 1e-6),
                           d.cross_tangent<D>(F, Fp)),
            1e-8);
  const fem::Tensor4<D> A = d.tangent<D>(F, Fp);
  EXPECT_LT((A - A.transpose()).norm(), 1e-12 * A.norm());
  // Parameter derivatives: P is linear in α and β.
  fem::ViscousDamping only_alpha = d, only_beta = d;
  only_alpha.beta = 0.0;
  only_beta.alpha = 0.0;
  EXPECT_LT(relative_error(only_alpha.stress<D>(F, Fp) / d.alpha, d.stress_d_alpha<D>(F, Fp)), 1e-14);
  EXPECT_LT(relative_error(only_beta.stress<D>(F, Fp) / d.beta, d.stress_d_beta<D>(F, Fp)), 1e-14);
}

template <int D, int K>
void check_element(std::mt19937& rng) {
  const auto e = fem::element_rest<D, K>(random_vertices<D>(rng));
  ASSERT_TRUE(e.has_value());
  using Field = fem::NodalField<D, K>;
  const Field u_prev = random_field<D, K>(rng, 0.1);
  const Field u = u_prev + random_field<D, K>(rng, 0.02);
  const fem::ViscousDamping& d = kDamping;
  const auto g = fem::damping_gradient(*e, u, u_prev, d);
  const auto energy = [&](const Field& v) { return fem::damping_energy(*e, v, u_prev, d); };
  EXPECT_LT(relative_error(fd_gradient(u, energy, 1e-7), g), 1e-7) << "D " << D << " P" << K;
  const auto H = fem::damping_hessian(*e, u, u_prev, d);
  EXPECT_LT(relative_error(fd_jacobian(u, [&](const Field& v) { return fem::damping_gradient(*e, v, u_prev, d); }, 1e-6),
                           H),
            1e-7)
      << "D " << D << " P" << K;
  EXPECT_LT((H - H.transpose()).norm(), 1e-12 * H.norm());
  const auto L = fem::damping_cross_hessian(*e, u, u_prev, d);
  EXPECT_LT(relative_error(fd_jacobian(u_prev, [&](const Field& v) { return fem::damping_gradient(*e, u, v, d); }, 1e-6),
                           L),
            1e-7)
      << "D " << D << " P" << K;
  EXPECT_GT((L - L.transpose()).norm(), 1e-6 * L.norm());  // the cross-step block is not symmetric
}

}  // namespace

TEST(FemDamping, DensityStressTangentAndCrossBlockMatchFiniteDifferences) {
  std::mt19937 rng(21);
  for (int trial = 0; trial < 3; ++trial) {
    check_density<2>(rng);
    check_density<3>(rng);
  }
}

TEST(FemDamping, ElementGradientHessianAndCrossBlockMatchFiniteDifferences) {
  std::mt19937 rng(22);
  for_each_element([&](auto d, auto k) { check_element<d, k>(rng); });
}

TEST(FemDamping, RigidMotionBetweenStepsDissipatesNothing) {
  std::mt19937 rng(23);
  const fem::Vertices<3> X = random_vertices<3>(rng);
  const auto e = fem::element_rest<3, 2>(X);
  const fem::NodalField<3, 2> x = fem::node_positions<3, 2>(X);
  const fem::NodalField<3, 2> u_prev = random_field<3, 2>(rng, 0.1);
  const Eigen::Matrix3d R = Eigen::AngleAxisd(0.4, Eigen::Vector3d(0.3, 1.0, -0.2).normalized()).toRotationMatrix();
  const fem::NodalField<3, 2> u = ((R * (x + u_prev)).colwise() + Eigen::Vector3d(0.1, 0.2, 0.3)) - x;
  EXPECT_NEAR(fem::damping_energy(*e, u, u_prev, kDamping), 0.0, 1e-14);
  EXPECT_LT(fem::damping_gradient(*e, u, u_prev, kDamping).norm(), 1e-12);
  // A straining increment dissipates R(ΔE)/Δt: halving Δt doubles the potential.
  const fem::NodalField<3, 2> v = u_prev + random_field<3, 2>(rng, 0.05);
  fem::ViscousDamping half = kDamping;
  half.dt *= 0.5;
  const double psi = fem::damping_energy(*e, v, u_prev, kDamping);
  EXPECT_GT(psi, 0.0);
  EXPECT_NEAR(fem::damping_energy(*e, v, u_prev, half), 2.0 * psi, 1e-12 * psi);
}

}  // namespace test_fem_damping
