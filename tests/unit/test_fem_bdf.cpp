// BDF coefficients and the incremental-potential form of BDF1/BDF2: a free particle under gravity, advanced by
// minimising ½/(βΔt)² (u − ũ)ᵀM(u − ũ) − uᵀMg, reproduces the closed-form solution of each recurrence.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "percussion/physics/fem/bdf.hpp"

namespace test_fem_bdf {

namespace fem = percussion::fem;

TEST(FemBdf, CoefficientsAreConsistentAndExactForPolynomials) {
  for (int order = 1; order <= 4; ++order) {
    const fem::Bdf s = fem::bdf(order);
    EXPECT_EQ(s.order, order);
    // u^i + Σ α_j u^(i−j) = βΔt u'(t_i) exactly for u = t^k, k ≤ order (Δt = 1, t_i = 0).
    for (int k = 0; k <= order; ++k) {
      double lhs = k == 0 ? 1.0 : 0.0;
      for (int j = 1; j <= order; ++j) lhs += s.alpha[j - 1] * std::pow(-double(j), k);
      EXPECT_NEAR(lhs, k == 1 ? s.beta : 0.0, 1e-14) << "order " << order << " k " << k;
    }
  }
  EXPECT_EQ(fem::bdf_at_step(2, 1).order, 1);
  EXPECT_EQ(fem::bdf_at_step(2, 2).order, 2);
  EXPECT_EQ(fem::bdf_at_step(2, 9).order, 2);
  EXPECT_THROW(fem::bdf(5), std::invalid_argument);
  EXPECT_THROW(fem::bdf_at_step(2, 0), std::invalid_argument);
}

namespace {

struct Trajectory {
  std::vector<Eigen::VectorXd> u, v;  // u[i], v[i] at t = iΔt
};

// Each step: one Newton step on the quadratic incremental potential from u^(i−1), then the velocity update.
Trajectory free_fall(int order, int steps, double dt, const Eigen::VectorXd& u0, const Eigen::VectorXd& v0,
                     const Eigen::VectorXd& g, double mass) {
  Trajectory t{{u0}, {v0}};
  for (int i = 1; i <= steps; ++i) {
    const fem::Bdf s = fem::bdf_at_step(order, i);
    std::vector<Eigen::VectorXd> uh, vh;  // most recent first
    for (int j = 1; j <= s.order; ++j) {
      uh.push_back(t.u[i - j]);
      vh.push_back(t.v[i - j]);
    }
    const Eigen::VectorXd u_tilde = fem::bdf_predictor(s, dt, uh, vh);
    Eigen::VectorXd u = uh[0];
    const Eigen::VectorXd delta = u - u_tilde;
    const Eigen::VectorXd grad = fem::inertia_gradient(s, dt, mass * delta) - mass * g;
    u -= grad / (mass * fem::inertia_scale(s, dt));  // Hessian = scale · M
    // The minimiser has zero gradient, and the potential is lower there than at the start.
    const Eigen::VectorXd d1 = u - u_tilde;
    EXPECT_LT((fem::inertia_gradient(s, dt, mass * d1) - mass * g).norm(), 1e-9 * mass * g.norm());
    EXPECT_LT(fem::inertia_energy(s, dt, d1, mass * d1) - mass * g.dot(u),
              fem::inertia_energy(s, dt, delta, mass * delta) - mass * g.dot(uh[0]));
    t.v.push_back(fem::bdf_velocity(s, dt, u, uh));
    t.u.push_back(u);
  }
  return t;
}

}  // namespace

TEST(FemBdf, FreeParticleUnderGravityFollowsTheRecurrences) {
  const double dt = 0.01, mass = 2.0;
  const Eigen::Vector3d u0(0.1, -0.2, 0.3), v0(1.0, 0.5, -2.0), g(0.0, 0.0, -9.81);
  const int n = 40;
  // BDF1: v_i = v0 + g t_i, u_i = u0 + v0 t_i + ½ g t_i² + ½ g Δt t_i.
  const Trajectory b1 = free_fall(1, n, dt, u0, v0, g, mass);
  for (int i = 0; i <= n; ++i) {
    const double t = i * dt;
    EXPECT_LT((b1.v[i] - (v0 + g * t)).norm(), 1e-12);
    EXPECT_LT((b1.u[i] - (u0 + v0 * t + 0.5 * g * t * t + 0.5 * g * dt * t)).norm(), 1e-12);
  }
  // BDF2 after one BDF1 step: v_i = v0 + g t_i exactly, u_i = u0 + v0 t_i + ½ g t_i² + ¾ g Δt² (1 − 3^−i)
  // (the start-up error decays with the parasitic root ⅓).
  const Trajectory b2 = free_fall(2, n, dt, u0, v0, g, mass);
  for (int i = 0; i <= n; ++i) {
    const double t = i * dt;
    EXPECT_LT((b2.v[i] - (v0 + g * t)).norm(), 1e-12);
    const Eigen::Vector3d exact = u0 + v0 * t + 0.5 * g * t * t + 0.75 * g * dt * dt * (1.0 - std::pow(3.0, -i));
    EXPECT_LT((b2.u[i] - exact).norm(), 1e-12) << "step " << i;
  }
  // The two schemes differ by ½ g Δt t_n − ¾ g Δt²: BDF2's error does not grow with time.
  EXPECT_GT((b1.u[n] - b2.u[n]).norm(), 0.1 * 9.81 * dt * n * dt);
}

TEST(FemBdf, HistoriesShorterThanTheOrderAreRefused) {
  const std::vector<Eigen::VectorXd> one{Eigen::VectorXd::Zero(2)};
  EXPECT_THROW(fem::bdf_predictor(fem::bdf(2), 0.1, one, one), std::invalid_argument);
  EXPECT_THROW(fem::bdf_velocity(fem::bdf(2), 0.1, one[0], one), std::invalid_argument);
}

}  // namespace test_fem_bdf
