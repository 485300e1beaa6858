// Bond potentials (notes 001 §2.5, tests T3/T4): gradients and Hessians against central finite differences
// in R^14, rest state, objectivity, Taylor ratios (Euclidean and on R³×S³), closed-form values, and the
// fused bond_forces kernel against the separate gradients (forces, torques, momentum balance).
#include <gtest/gtest.h>

#include "../support/bond_test_support.hpp"

#include <Eigen/Geometry>
#include <unsupported/Eigen/AutoDiff>
#include <cmath>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "percussion/physics/bond_bendtwist.hpp"
#include "percussion/physics/bond_forces.hpp"
#include "percussion/physics/bond_rest.hpp"
#include "percussion/physics/bond_shear.hpp"
#include "percussion/physics/bond_stretch.hpp"
#include "percussion/physics/quaternion.hpp"

namespace test_bond_potentials {

namespace {

using percussion::test::material;
using percussion::test::models;

using namespace percussion;
using namespace percussion::physics;
using quat::Quat;
using Eigen::Matrix3d;
using Eigen::Vector3d;

struct Potential {
  std::string name;
  double (*energy)(const BondDofs&, const BondRest&);
  BondDofs (*gradient)(const BondDofs&, const BondRest&);
  BondHessian (*hessian)(const BondDofs&, const BondRest&);
};

const std::vector<Potential>& potentials() {
  static const std::vector<Potential> list = {
      {"stretch", stretch::energy, stretch::gradient, stretch::hessian},
      {"shear", shear::energy, shear::gradient, shear::hessian},
      {"bendtwist", bendtwist::energy, bendtwist::gradient, bendtwist::hessian},
  };
  return list;
}

struct Config {
  BondRest rest;
  BondDofs x;
};

struct Rng : percussion::test::RandomSource {
  Rng() : RandomSource(77) {}
  // Unequal radii and materials, l0 = r_i + r_j ≈ 1, stiffnesses O(1..100).
  Config deformed(const BondModel& model, double rotation = 0.4, double strain = 0.1) {
    const double ri = 0.5 + 0.1 * uniform(gen), rj = 0.5 + 0.1 * uniform(gen);
    const Vector3d pi = vec();
    const Vector3d d0 = vec().normalized();
    const Vector3d pj_rest = pi + (ri + rj) * d0;
    Config c;
    c.rest = make_bond_rest(pi, pj_rest, ri, rj, material(100.0, 0.3), material(60.0, 0.2), model);
    const Vector3d dir = (d0 + 0.15 * vec()).normalized();
    const Vector3d pj = pi + c.rest.l0 * (1.0 + strain * uniform(gen)) * dir;
    const Quat qi = quat::from_rotation_vector(rotation * vec());
    Quat qj = quat::from_rotation_vector(rotation * vec());
    if (uniform(gen) < 0.0) qj = -qj;  // the stored sign of a quaternion is arbitrary
    c.x = pack_bond(pi, qi, pj, qj);
    return c;
  }
  // Rigid motion p ← R p + c, q ← q_R ⊗ q.
  BondDofs rigid_motion(const BondDofs& x, const Quat& qR, const Vector3d& shift) {
    const Matrix3d R = quat::rotation_matrix(qR);
    return pack_bond(R * x.segment<3>(kPosI) + shift, quat::mul(qR, x.segment<4>(kRotI)),
                     R * x.segment<3>(kPosJ) + shift, quat::mul(qR, x.segment<4>(kRotJ)));
  }
};

BondDofs fd_gradient(const Potential& p, const BondDofs& x, const BondRest& b, double h) {
  BondDofs g;
  for (int k = 0; k < 14; ++k) {
    BondDofs xp = x, xm = x;
    xp[k] += h;
    xm[k] -= h;
    g[k] = (p.energy(xp, b) - p.energy(xm, b)) / (2.0 * h);
  }
  return g;
}

BondHessian fd_hessian(const Potential& p, const BondDofs& x, const BondRest& b, double h) {
  BondHessian H;
  for (int k = 0; k < 14; ++k) {
    BondDofs xp = x, xm = x;
    xp[k] += h;
    xm[k] -= h;
    H.col(k) = (p.gradient(xp, b) - p.gradient(xm, b)) / (2.0 * h);
  }
  return H;
}

double total_energy(const BondDofs& x, const BondRest& b) {
  return stretch::energy(x, b) + shear::energy(x, b) + bendtwist::energy(x, b);
}
BondDofs total_gradient(const BondDofs& x, const BondRest& b) {
  return stretch::gradient(x, b) + shear::gradient(x, b) + bendtwist::gradient(x, b);
}
BondHessian total_hessian(const BondDofs& x, const BondRest& b) {
  return stretch::hessian(x, b) + shear::hessian(x, b) + bendtwist::hessian(x, b);
}

TEST(BondRest, SectionPropertiesStiffnessesAndFrame) {
  const Material a = material(100.0, 0.3), c = material(60.0, 0.2);
  BondModel model;
  model.shear_length_scaled = true;
  model.full_angle_bending = true;
  const Vector3d pi(0.1, 0.2, 0.3), pj(0.9, -0.1, 0.5);
  const BondRest b = make_bond_rest(pi, pj, 0.4, 0.5, a, c, model);
  const double pi_ = std::numbers::pi, l0 = (pj - pi).norm(), r0 = 0.45;
  const double E = 2.0 * 100.0 * 60.0 / 160.0;                      // harmonic mean: 75
  const double G = 2.0 * (100.0 / 2.6) * (60.0 / 2.4) / (100.0 / 2.6 + 60.0 / 2.4);
  EXPECT_DOUBLE_EQ(b.l0, l0);
  EXPECT_DOUBLE_EQ(b.r0, r0);
  EXPECT_DOUBLE_EQ(b.area, pi_ * r0 * r0);
  EXPECT_DOUBLE_EQ(b.I, pi_ * std::pow(r0, 4) / 4.0);
  EXPECT_DOUBLE_EQ(b.J, pi_ * std::pow(r0, 4) / 2.0);
  EXPECT_DOUBLE_EQ(b.kn, E * b.area / l0);
  EXPECT_DOUBLE_EQ(b.kt, G * b.area * l0);  // G S / l0 · l0²
  EXPECT_DOUBLE_EQ(b.k_twist, G * b.J / l0);
  EXPECT_DOUBLE_EQ(b.k_bend, E * b.I / l0);
  EXPECT_EQ(b.bend_scale, 2.0);
  EXPECT_LE((b.d0 - (pj - pi) / l0).norm(), 1e-16);
  EXPECT_LE((b.R0 * b.R0.transpose() - Matrix3d::Identity()).norm(), 1e-15);
  EXPECT_NEAR(b.R0.determinant(), 1.0, 1e-15);
  EXPECT_LE((b.R0.row(0).transpose() - b.d0).norm(), 1e-16);

  model.shear_length_scaled = false;
  model.full_angle_bending = false;
  const BondRest p = make_bond_rest(pi, pj, 0.4, 0.5, a, c, model);
  EXPECT_DOUBLE_EQ(p.kt, G * p.area / l0);
  EXPECT_EQ(p.bend_scale, 1.0);
  EXPECT_THROW(make_bond_rest(pi, pi, 0.4, 0.5, a, c, model), std::invalid_argument);
}

TEST(BondPotentials, GradientMatchesCentralDifferences) {
  Rng rng;
  for (const BondModel& model : models()) {
    for (int k = 0; k < 20; ++k) {
      const Config c = rng.deformed(model);
      for (const Potential& p : potentials()) {
        const BondDofs g = p.gradient(c.x, c.rest);
        const BondDofs fd = fd_gradient(p, c.x, c.rest, 1e-6);
        const double scale = std::max(1.0, g.lpNorm<Eigen::Infinity>());
        EXPECT_LE((g - fd).lpNorm<Eigen::Infinity>(), 1e-7 * scale) << p.name << " sample " << k;
      }
    }
  }
}

TEST(BondPotentials, HessianMatchesCentralDifferencesOfGradient) {
  Rng rng;
  for (const BondModel& model : models()) {
    for (int k = 0; k < 20; ++k) {
      const Config c = rng.deformed(model);
      for (const Potential& p : potentials()) {
        const BondHessian H = p.hessian(c.x, c.rest);
        const BondHessian fd = fd_hessian(p, c.x, c.rest, 1e-6);
        const double scale = std::max(1.0, H.lpNorm<Eigen::Infinity>());
        EXPECT_LE((H - fd).lpNorm<Eigen::Infinity>(), 1e-7 * scale) << p.name << " sample " << k;
        EXPECT_LE((H - H.transpose()).lpNorm<Eigen::Infinity>(), 1e-12 * scale) << p.name;
      }
    }
  }
}

TEST(BondPotentials, ShearHessianEqualsAutodiffJacobianOfGradient) {
  // Exact comparison (no truncation error): forward-mode autodiff through the templated shear gradient.
  using AD = Eigen::AutoDiffScalar<Eigen::Matrix<double, 14, 1>>;
  Rng rng;
  for (const BondModel& model : models()) {
    for (int k = 0; k < 20; ++k) {
      const Config c = rng.deformed(model, k < 10 ? 0.4 : 1.7, 0.2);
      Eigen::Matrix<AD, 14, 1> xa;
      for (int a = 0; a < 14; ++a) xa(a) = AD(c.x(a), 14, a);
      const double sign = shear::hemisphere_sign(c.x.segment<4>(kRotI), c.x.segment<4>(kRotJ));
      const Eigen::Matrix<AD, 14, 1> ga = shear::detail::gradient<AD>(xa, c.rest, sign);
      BondHessian ad;
      for (int a = 0; a < 14; ++a) ad.row(a) = ga(a).derivatives().transpose();
      const BondHessian H = shear::hessian(c.x, c.rest);
      EXPECT_LE((H - ad).lpNorm<Eigen::Infinity>(), 1e-13 * H.lpNorm<Eigen::Infinity>()) << "sample " << k;
    }
  }
}

// Gradient and Hessian of p at c against central differences.
void expect_derivatives_match_differences(const Potential& p, const Config& c) {
  const BondDofs g = p.gradient(c.x, c.rest);
  const double gs = std::max(1.0, g.lpNorm<Eigen::Infinity>());
  EXPECT_LE((g - fd_gradient(p, c.x, c.rest, 1e-6)).lpNorm<Eigen::Infinity>(), 1e-7 * gs) << p.name;
  const BondHessian H = p.hessian(c.x, c.rest);
  const double hs = std::max(1.0, H.lpNorm<Eigen::Infinity>());
  EXPECT_LE((H - fd_hessian(p, c.x, c.rest, 1e-6)).lpNorm<Eigen::Infinity>(), 1e-7 * hs) << p.name;
}

TEST(BondPotentials, LargeRotationsAndOppositeHemispheres) {
  // Rotations up to ~170° and q_j stored in either hemisphere: derivatives must stay exact on each side.
  Rng rng;
  for (int k = 0; k < 40; ++k) {
    const Config c = rng.deformed(BondModel{}, 1.7, 0.2);
    for (const Potential& p : potentials()) {
      expect_derivatives_match_differences(p, c);
      // Same physical state with q_j negated: same energy.
      BondDofs flipped = c.x;
      flipped.segment<4>(kRotJ) *= -1.0;
      EXPECT_NEAR(p.energy(flipped, c.rest), p.energy(c.x, c.rest), 1e-13 * (1.0 + p.energy(c.x, c.rest)));
    }
  }
}

TEST(BondPotentials, DerivativesHoldOffTheUnitSphere) {
  // The midpoint form evaluates V at chord midpoints (q + q_n)/2, |q| = cos(θ/4) < 1, or further off for tests.
  Rng rng;
  for (const BondModel& model : models()) {
    for (int k = 0; k < 10; ++k) {
      Config c = rng.deformed(model, 0.8, 0.1);
      c.x.segment<4>(kRotI) *= 0.8 + 0.03 * k;
      c.x.segment<4>(kRotJ) *= 0.95 - 0.02 * k;
      for (const Potential& p : potentials()) expect_derivatives_match_differences(p, c);
    }
  }
}

TEST(BondPotentials, RestStateHasZeroEnergyAndGradient) {
  Rng rng;
  for (const BondModel& model : models()) {
    for (int k = 0; k < 20; ++k) {
      const Config c = rng.deformed(model);
      const Vector3d pi = c.x.segment<3>(kPosI);
      const BondDofs rest = pack_bond(pi, quat::identity(), pi + c.rest.l0 * c.rest.d0, quat::identity());
      const BondDofs moved = rng.rigid_motion(rest, rng.unit_quat(), rng.vec());
      for (const BondDofs& x : {rest, moved}) {
        for (const Potential& p : potentials()) {
          EXPECT_LE(std::abs(p.energy(x, c.rest)), 1e-26) << p.name;
          EXPECT_LE(p.gradient(x, c.rest).lpNorm<Eigen::Infinity>(), 1e-12) << p.name;
        }
      }
    }
  }
}

TEST(BondPotentials, ObjectiveUnderRigidMotion) {
  Rng rng;
  for (const BondModel& model : models()) {
    for (int k = 0; k < 20; ++k) {
      const Config c = rng.deformed(model);
      const Quat qR = rng.unit_quat();
      const Vector3d shift = rng.vec();
      const BondDofs y = rng.rigid_motion(c.x, qR, shift);
      const Matrix3d R = quat::rotation_matrix(qR);
      const Eigen::Matrix4d L = quat::Ql(qR);
      for (const Potential& p : potentials()) {
        const double V = p.energy(c.x, c.rest);
        ASSERT_GT(V, 0.0) << p.name;
        EXPECT_NEAR(p.energy(y, c.rest), V, 1e-12 * V) << p.name;
        // Gradients are covariant: ∇_p → R ∇_p and ∇_q → Q_l(q_R) ∇_q.
        const BondDofs g = p.gradient(c.x, c.rest), gy = p.gradient(y, c.rest);
        BondDofs expected;
        expected << R * g.segment<3>(kPosI), L * g.segment<4>(kRotI), R * g.segment<3>(kPosJ), L * g.segment<4>(kRotJ);
        EXPECT_LE((gy - expected).lpNorm<Eigen::Infinity>(), 1e-12 * std::max(1.0, g.lpNorm<Eigen::Infinity>()))
            << p.name;
      }
    }
  }
}

TEST(BondPotentials, ClosedFormValues) {
  // Pure bond rotation by θ with both ends unrotated: shear = ½ k_t |d − d0|² = ½ k_t (2 − 2 cos θ).
  // Pure twist φ of j about d0: t0 = −s_b sin(φ/2) (t_raw = vec(q̄_j) = −sin(φ/2) d0), V = ½ k_twist t0².
  // Pure stretch: ½ k_n ΔL².
  for (const BondModel& model : models()) {
    const Material m = material(100.0, 0.3);
    const Vector3d pi(0.0, 0.0, 0.0), pj(1.0, 0.0, 0.0);
    const BondRest b = make_bond_rest(pi, pj, 0.5, 0.5, m, m, model);
    const double theta = 0.3, phi = 0.8, dL = 0.05;
    const Quat I = quat::identity();
    const BondDofs bent = pack_bond(pi, I, Vector3d(std::cos(theta), std::sin(theta), 0.0), I);
    EXPECT_NEAR(shear::energy(bent, b), 0.5 * b.kt * (2.0 - 2.0 * std::cos(theta)), 1e-15 * b.kt);
    EXPECT_NEAR(stretch::energy(bent, b), 0.0, 1e-28);
    EXPECT_NEAR(bendtwist::energy(bent, b), 0.0, 1e-28);

    const Quat twist = quat::from_rotation_vector(phi * b.d0);
    const BondDofs twisted = pack_bond(pi, I, pj, twist);
    const double t0 = b.bend_scale * std::sin(0.5 * phi);
    EXPECT_NEAR(bendtwist::energy(twisted, b), 0.5 * b.k_twist * t0 * t0, 1e-15 * b.k_twist);
    EXPECT_LE(shear::energy(twisted, b), 1e-30);  // twisting about d0 leaves d_q = d0

    const BondDofs stretched = pack_bond(pi, I, pj + dL * b.d0, I);
    EXPECT_NEAR(stretch::energy(stretched, b), 0.5 * b.kn * dL * dL, 1e-15 * b.kn);
  }
}

// Error of the second-order model; for a correct gradient and Hessian it is O(ε³).
template <class Eval>
double taylor_ratio(Eval error, double eps) {
  return error(eps) / error(0.1 * eps);
}

TEST(BondPotentials, TaylorRatioEuclidean) {
  Rng rng;
  for (int k = 0; k < 10; ++k) {
    const Config c = rng.deformed(BondModel{}, 0.6, 0.1);
    BondDofs dir;
    for (int a = 0; a < 14; ++a) dir[a] = rng.normal(rng.gen);
    for (const Potential& p : {potentials()[1], potentials()[2]}) {
      const double V = p.energy(c.x, c.rest);
      const double slope = p.gradient(c.x, c.rest).dot(dir);
      const double curv = dir.dot(p.hessian(c.x, c.rest) * dir);
      auto error = [&](double eps) {
        return std::abs(p.energy(c.x + eps * dir, c.rest) - (V + eps * slope + 0.5 * eps * eps * curv));
      };
      const double ratio = taylor_ratio(error, 1e-2);
      EXPECT_GT(ratio, 700.0) << p.name;
      EXPECT_LT(ratio, 1400.0) << p.name;
    }
  }
}

TEST(BondPotentials, TaylorRatioOnManifoldWithReducedHessian) {
  // Notes T3 / §2.8: f(Exp(x, ε 𝒢ᵀy)) − [f + ε g_rᵀy + ½ε² yᵀH_r y] = O(ε³) with the body-frame reduction
  // g_r = 𝒢 ∇f, H_r = 𝒢 ∇²f 𝒢ᵀ − diag(0, (q_i·∇_{q_i}f) I, 0, (q_j·∇_{q_j}f) I).
  Rng rng;
  for (int k = 0; k < 10; ++k) {
    const Config c = rng.deformed(BondModel{}, 0.6, 0.1);
    const Quat qi = c.x.segment<4>(kRotI), qj = c.x.segment<4>(kRotJ);
    Eigen::Matrix<double, 12, 14> Gm = Eigen::Matrix<double, 12, 14>::Zero();
    Gm.block<3, 3>(0, kPosI).setIdentity();
    Gm.block<3, 4>(3, kRotI) = quat::Gl(qi);
    Gm.block<3, 3>(6, kPosJ).setIdentity();
    Gm.block<3, 4>(9, kRotJ) = quat::Gl(qj);
    const BondDofs g = total_gradient(c.x, c.rest);
    const Eigen::Matrix<double, 12, 1> gr = Gm * g;
    Eigen::Matrix<double, 12, 12> Hr = Gm * total_hessian(c.x, c.rest) * Gm.transpose();
    Hr.block<3, 3>(3, 3) -= qi.dot(g.segment<4>(kRotI)) * Matrix3d::Identity();
    Hr.block<3, 3>(9, 9) -= qj.dot(g.segment<4>(kRotJ)) * Matrix3d::Identity();

    Eigen::Matrix<double, 12, 1> y;
    for (int a = 0; a < 12; ++a) y[a] = rng.normal(rng.gen);
    const double V = total_energy(c.x, c.rest);
    auto error = [&](double eps) {
      const Eigen::Matrix<double, 12, 1> e = eps * y;
      const BondDofs moved = pack_bond(c.x.segment<3>(kPosI) + e.segment<3>(0), quat::exp_body(qi, e.segment<3>(3)),
                                       c.x.segment<3>(kPosJ) + e.segment<3>(6), quat::exp_body(qj, e.segment<3>(9)));
      return std::abs(total_energy(moved, c.rest) - (V + gr.dot(e) + 0.5 * e.dot(Hr * e)));
    };
    const double ratio = taylor_ratio(error, 1e-2);
    EXPECT_GT(ratio, 700.0);
    EXPECT_LT(ratio, 1400.0);
  }
}

TEST(BondForces, EqualsSumOfGradientsMappedToForcesAndTorques) {
  Rng rng;
  for (const BondModel& model : models()) {
    for (int k = 0; k < 40; ++k) {
      const Config c = rng.deformed(model, k < 20 ? 0.4 : 1.7, 0.1);
      const Vector3d pi = c.x.segment<3>(kPosI), pj = c.x.segment<3>(kPosJ);
      const Quat qi = c.x.segment<4>(kRotI), qj = c.x.segment<4>(kRotJ);
      const BondForces f = bond_forces(pi, qi, pj, qj, c.rest, false);
      const BondDofs g = total_gradient(c.x, c.rest);
      const double fs = std::max(1.0, g.lpNorm<Eigen::Infinity>());
      EXPECT_LE((f.fi + g.segment<3>(kPosI)).norm(), 1e-13 * fs);
      EXPECT_LE((f.fj + g.segment<3>(kPosJ)).norm(), 1e-13 * fs);
      EXPECT_LE((f.ti - quat::torque_world(qi, g.segment<4>(kRotI))).norm(), 1e-13 * fs);
      EXPECT_LE((f.tj - quat::torque_world(qj, g.segment<4>(kRotJ))).norm(), 1e-13 * fs);
      const double V = total_energy(c.x, c.rest);
      EXPECT_NEAR(f.energy, V, 1e-14 * V);
      // The stored sign of q_j is irrelevant.
      const BondForces h = bond_forces(pi, qi, pj, -qj, c.rest, false);
      EXPECT_LE((h.ti - f.ti).norm() + (h.tj - f.tj).norm() + (h.fi - f.fi).norm(), 1e-13 * fs);
      EXPECT_NEAR(h.sigma, f.sigma, 1e-13 * f.sigma);
      EXPECT_NEAR(h.tau, f.tau, 1e-13 * f.tau);
    }
  }
}

TEST(BondForces, LinearAndAngularMomentumBalance) {
  // Objective potentials exert no net force and no net torque about any point.
  Rng rng;
  for (const BondModel& model : models()) {
    for (int k = 0; k < 40; ++k) {
      const Config c = rng.deformed(model, k < 20 ? 0.4 : 1.7, 0.1);
      const Vector3d pi = c.x.segment<3>(kPosI), pj = c.x.segment<3>(kPosJ);
      const BondForces f = bond_forces(pi, c.x.segment<4>(kRotI), pj, c.x.segment<4>(kRotJ), c.rest, true);
      const double scale = f.fi.norm() * std::max(pi.norm(), pj.norm()) + f.ti.norm() + f.tj.norm();
      ASSERT_GT(scale, 0.0);
      EXPECT_LE((f.fi + f.fj).norm(), 1e-15 * scale);
      EXPECT_LE((pi.cross(f.fi) + pj.cross(f.fj) + f.ti + f.tj).norm(), 1e-13 * scale);
    }
  }
}

}  // namespace

}  // namespace test_bond_potentials
