// The midpoint form of the incremental potential (notes 001 §2.2, eqs. 2–4) in reduced coordinates: V is
// evaluated at the chord midpoint (x + x_n)/2 (quaternions not unit) and differentiated along the iterate's
// geodesics. Φ's reduced gradient against central differences, the exact Hessian against Taylor ratios, and
// the Gauss–Newton Hessian as JᵀWJ of the residuals seen from the iterate.
#include <gtest/gtest.h>

#include "../support/bond_test_support.hpp"

#include <Eigen/Core>
#include <array>
#include <cmath>

#include "percussion/physics/bond_rest.hpp"
#include "percussion/physics/manifold_bond.hpp"
#include "percussion/physics/manifold_bond_gn.hpp"
#include "percussion/physics/manifold_contact.hpp"
#include "percussion/physics/manifold_inertia.hpp"
#include "percussion/physics/quaternion.hpp"

namespace test_manifold_midpoint {

namespace {

using namespace percussion;
using namespace percussion::physics;
using Eigen::Vector3d;
using Reduced18 = Eigen::Matrix<double, 18, 1>;

constexpr double kHalf = 0.5;  // d(midpoint)/d(iterate)

struct Particle {
  Vector3d p, p_n, p_hat;  // iterate, start of the step, predictor ẑ
  quat::Quat q, q_n, q_hat;
  double m, r;
  Vector3d p_mid() const { return 0.5 * (p + p_n); }
  quat::Quat q_mid() const { return 0.5 * (q + q_n); }
};

// Three spheres: a bond between 0 and 1, a contact between 1 and 2 (overlapping at the midpoint), inertia
// towards non-unit targets and gravity on all of them.
struct System {
  std::array<Particle, 3> s;
  BondRest rest;
  double k_contact = 80.0, h = 0.1;
  Vector3d gravity{0.3, -0.2, -9.81};
};

struct Rng : percussion::test::RandomSource {
  Rng() : RandomSource(31337) {}
  System system(const BondModel& model, bool with_contact) {
    System S;
    for (Particle& a : S.s) {
      a.m = 2.0 + uniform(gen);
      a.r = 0.5 + 0.1 * uniform(gen);
    }
    const Vector3d d0 = vec().normalized();
    const Vector3d p0 = vec();
    S.rest = make_bond_rest(p0, p0 + (S.s[0].r + S.s[1].r) * d0, S.s[0].r, S.s[1].r, test::material(100.0, 0.3),
                            test::material(60.0, 0.2), model);
    // Iterates: a deformed bond, turned ends; the step start differs by a translation and a rotation, so the
    // midpoint quaternions are chords (|q_mid| < 1) away from q.
    S.s[0].p = vec();
    S.s[1].p = S.s[0].p + S.rest.l0 * (1.0 + 0.1 * uniform(gen)) * (d0 + 0.15 * vec()).normalized();
    S.s[2].p = vec();
    for (Particle& a : S.s) {
      a.q = quat::from_rotation_vector(0.6 * vec());
      a.q_n = quat::exp_body(a.q, 0.3 * vec());
      a.p_n = a.p + 0.05 * vec();
      a.p_hat = a.p + 0.1 * vec();
      a.q_hat = 2.0 * quat::exp_body(a.q, 0.2 * vec()) - quat::exp_body(a.q, 0.3 * vec());  // 2q_n − q_{n−1}-like
    }
    if (with_contact) {  // put 2's midpoint at 0.8 of the contact reach from 1's midpoint
      const Vector3d target = S.s[1].p_mid() + 0.8 * (S.s[1].r + S.s[2].r) * vec().normalized();
      S.s[2].p = 2.0 * target - S.s[2].p_n;
    }
    return S;
  }
};

double phi(const System& S, bool with_contact) {
  double e = 0.0;
  for (const Particle& a : S.s)
    e += inertia_energy(a.p, a.q, a.p_hat, a.q_hat, a.m, a.r, S.h) - a.m * S.gravity.dot(a.p_mid());
  const Particle &a = S.s[0], &b = S.s[1], &c = S.s[2];
  e += bond_energy(a.p_mid(), a.q_mid(), b.p_mid(), b.q_mid(), S.rest);
  if (with_contact) e += contact_penalty(b.p_mid(), b.r, c.p_mid(), c.r, S.k_contact).energy;
  return e;
}

// Eight random systems for each bond model.
template <class Check>
void for_each_system(bool with_contact, Check check) {
  Rng rng;
  for (const BondModel& model : test::models())
    for (int n = 0; n < 8; ++n) check(rng.system(model, with_contact), rng, n);
}

System retract(const System& S, const Reduced18& e) {
  System T = S;
  for (int k = 0; k < 3; ++k) {
    T.s[k].p += e.segment<3>(6 * k);
    T.s[k].q = quat::exp_body(S.s[k].q, e.segment<3>(6 * k + 3));
  }
  return T;
}

BondReduced bond_at_midpoint(const System& S, bool gauss_newton) {
  const Particle &a = S.s[0], &b = S.s[1];
  const ReducedAt at{a.q, b.q, kHalf};
  return gauss_newton ? bond_reduced_gauss_newton(a.p_mid(), a.q_mid(), b.p_mid(), b.q_mid(), S.rest, at)
                      : bond_reduced(a.p_mid(), a.q_mid(), b.p_mid(), b.q_mid(), S.rest, false, at);
}

// What ImplicitBdem::evaluate assembles: inertia at the iterate, s × the gradients of V at the midpoint.
Reduced18 reduced_gradient(const System& S, bool with_contact) {
  Reduced18 g = Reduced18::Zero();
  for (int k = 0; k < 3; ++k) {
    const Particle& a = S.s[k];
    g.segment<6>(6 * k) = inertia(a.p, a.q, a.p_hat, a.q_hat, a.m, a.r, S.h).gradient;
    g.segment<3>(6 * k) -= kHalf * a.m * S.gravity;
  }
  const BondReduced bond = bond_at_midpoint(S, false);
  g.head<12>() += bond.gradient;
  if (with_contact) {
    const PairReduced6 c = contact_penalty(S.s[1].p_mid(), S.s[1].r, S.s[2].p_mid(), S.s[2].r, S.k_contact);
    EXPECT_TRUE(c.active);
    g.segment<3>(6) += kHalf * c.gradient.head<3>();
    g.segment<3>(12) += kHalf * c.gradient.tail<3>();
  }
  return g;
}

TEST(MidpointForm, ReducedGradientMatchesCentralDifferencesAlongGeodesics) {
  for_each_system(true, [](const System& S, Rng&, int n) {
    const double h = 1e-6;
    ASSERT_GT((S.s[0].q - S.s[0].q_n).norm(), 1e-2);
    ASSERT_LT(S.s[0].q_mid().norm(), 1.0 - 1e-4);  // V really is evaluated off S³
    const Reduced18 g = reduced_gradient(S, true);
    Reduced18 fd;
    for (int a = 0; a < 18; ++a) {
      const Reduced18 e = h * Reduced18::Unit(a);
      fd[a] = (phi(retract(S, e), true) - phi(retract(S, -e), true)) / (2.0 * h);
    }
    const double scale = std::max(1.0, g.lpNorm<Eigen::Infinity>());
    EXPECT_LE((g - fd).lpNorm<Eigen::Infinity>(), 1e-6 * scale) << "sample " << n;
    // The reduction belongs to the iterate: 𝒢 at the midpoint quaternions would be off by O(|q − q_n|).
    const Particle &a = S.s[0], &b = S.s[1];
    const BondReduced wrong =
        bond_reduced(a.p_mid(), a.q_mid(), b.p_mid(), b.q_mid(), S.rest, false, {a.q_mid(), b.q_mid(), kHalf});
    EXPECT_GT((wrong.gradient - bond_at_midpoint(S, false).gradient).norm(), 1e-3 * wrong.gradient.norm());
  });
}

TEST(MidpointForm, ExactHessianMatchesTaylorExpansionAlongGeodesics) {
  // Bond + inertia (no contact: its Hessian is clamped). Checks s² 𝒢∇²V𝒢ᵀ and the curvature term −s(q·∇_qV)
  // at the iterate.
  for_each_system(false, [](const System& S, Rng& rng, int n) {
    const BondReduced bond = bond_at_midpoint(S, false);
    EXPECT_EQ((bond.hessian - bond.hessian.transpose()).lpNorm<Eigen::Infinity>(), 0.0);
    Eigen::Matrix<double, 18, 18> H = Eigen::Matrix<double, 18, 18>::Zero();
    H.topLeftCorner<12, 12>() = bond.hessian;
    for (int k = 0; k < 3; ++k) {
      const Particle& a = S.s[k];
      H.diagonal().segment<6>(6 * k) += inertia(a.p, a.q, a.p_hat, a.q_hat, a.m, a.r, S.h).hessian_diag;
    }
    const double phi0 = phi(S, false);
    const Reduced18 g = reduced_gradient(S, false);
    const Reduced18 y = rng.vector<18>();
    auto error = [&](double eps) {
      const Reduced18 e = eps * y;
      return std::abs(phi(retract(S, e), false) - (phi0 + g.dot(e) + 0.5 * e.dot(H * e)));
    };
    const double ratio = error(2e-3) / error(2e-4);
    EXPECT_GT(ratio, 700.0) << "sample " << n;
    EXPECT_LT(ratio, 1400.0) << "sample " << n;
  });
}

TEST(MidpointForm, GaussNewtonIsJtWJOfTheResidualsAlongTheIterate) {
  for_each_system(false, [](const System& S, Rng&, int n) {
    const double h = 1e-6;
    const BondReduced gn = bond_at_midpoint(S, true), exact = bond_at_midpoint(S, false);
    EXPECT_EQ(gn.energy, exact.energy);
    EXPECT_EQ((gn.gradient - exact.gradient).lpNorm<Eigen::Infinity>(), 0.0);
    EXPECT_EQ((gn.hessian - gn.hessian.transpose()).lpNorm<Eigen::Infinity>(), 0.0);
    // J = ∂r(midpoint(retract(x, e)))/∂e by central differences (e over particles 0 and 1).
    auto residuals = [&](const Reduced12& e12) {
      Reduced18 e = Reduced18::Zero();
      e.head<12>() = e12;
      const System T = retract(S, e);
      return bond_residuals(T.s[0].p_mid(), T.s[0].q_mid(), T.s[1].p_mid(), T.s[1].q_mid(), S.rest);
    };
    BondResidualJacobian J;
    for (int a = 0; a < 12; ++a) {
      const Reduced12 e = h * Reduced12::Unit(a);
      J.col(a) = (residuals(e) - residuals(-e)) / (2.0 * h);
    }
    const Hessian12 JtWJ = J.transpose() * bond_residual_weights(S.rest).asDiagonal() * J;
    EXPECT_LE((gn.hessian - JtWJ).lpNorm<Eigen::Infinity>(), 1e-6 * JtWJ.lpNorm<Eigen::Infinity>())
        << "sample " << n;
  });
}

}  // namespace

}  // namespace test_manifold_midpoint
