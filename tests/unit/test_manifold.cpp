// Reduced (Riemannian) kernels of the implicit BDEM solver (notes 001 §2.7–2.9, tests T3/T5): bond energy,
// gradient and Hessian along the exp_body retraction (central differences, Taylor ratios), PSD projection,
// exactness of the nullspace reduction, contact penalties and the backward-Euler inertia term.
#include <gtest/gtest.h>

#include "../support/bond_test_support.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "percussion/physics/bond_bendtwist.hpp"
#include "percussion/physics/bond_rest.hpp"
#include "percussion/physics/bond_shear.hpp"
#include "percussion/physics/bond_stretch.hpp"
#include "percussion/physics/manifold_bond.hpp"
#include "percussion/physics/manifold_contact.hpp"
#include "percussion/physics/manifold_inertia.hpp"
#include "percussion/physics/psd_projection.hpp"
#include "percussion/physics/quaternion.hpp"

namespace test_manifold {

namespace {

using percussion::test::material;
using percussion::test::models;

using namespace percussion;
using namespace percussion::physics;
using quat::Quat;
using Eigen::Matrix3d;
using Eigen::Vector3d;
using Vector6d = Eigen::Matrix<double, 6, 1>;
using Matrix6d = Eigen::Matrix<double, 6, 6>;

using State = percussion::test::BondState;
using percussion::test::retract;

struct Rng : percussion::test::RandomSource {
  Rng() : RandomSource(2024) {}
  // Bond between unequal spheres (l0 ≈ 1, stiffnesses O(1..100)), then deformed: strain in
  // [strain_lo, strain_hi], direction tilted, both ends rotated by up to `rotation`. `flip` stores q_j in
  // the opposite hemisphere (q and −q are the same rotation).
  State deformed(const BondModel& model, double rotation, double strain_lo, double strain_hi, bool flip) {
    const double ri = 0.5 + 0.1 * uniform(gen), rj = 0.5 + 0.1 * uniform(gen);
    State s;
    s.pi = vec();
    const Vector3d d0 = vec().normalized();
    s.rest = make_bond_rest(s.pi, s.pi + (ri + rj) * d0, ri, rj, material(100.0, 0.3), material(60.0, 0.2), model);
    const double strain = strain_lo + 0.5 * (uniform(gen) + 1.0) * (strain_hi - strain_lo);
    s.pj = s.pi + s.rest.l0 * (1.0 + strain) * (d0 + 0.15 * vec()).normalized();
    s.qi = quat::from_rotation_vector(rotation * vec());
    s.qj = quat::from_rotation_vector(rotation * vec());
    if (flip) s.qj = -s.qj;
    return s;
  }
};

double energy_of(const State& s) { return bond_energy(s.pi, s.qi, s.pj, s.qj, s.rest); }

BondReduced reduced_of(const State& s, bool project) {
  return bond_reduced(s.pi, s.qi, s.pj, s.qj, s.rest, project);
}

// Error of the second-order model at ε over the error at ε/10: ≈ 1000 when gradient and Hessian are right.
// ε = 2e-3 keeps the fourth-order term out (at 1e-2 some states are still pre-asymptotic, ratio ≈ 300)
// while the error at ε/10 (≳ 1e-12) stays far above the energy's round-off.
template <class Error>
double taylor_ratio(Error error, double eps) {
  return error(eps) / error(0.1 * eps);
}

double min_eigenvalue(const Hessian12& H) {
  return Eigen::SelfAdjointEigenSolver<Hessian12>(H, Eigen::EigenvaluesOnly).eigenvalues()[0];
}

TEST(ManifoldBond, AgreesWithEuclideanPotentialsReducedByG) {
  // gradient = 𝒢∇V, Hessian = 𝒢∇²V𝒢ᵀ − curvature, with the dense 𝒢 and the separate potentials.
  Rng rng;
  for (const BondModel& model : models()) {
    for (int k = 0; k < 10; ++k) {
      const State s = rng.deformed(model, 0.6, -0.1, 0.1, k % 2 == 1);
      const BondDofs x = pack_bond(s.pi, s.qi, s.pj, s.qj);
      const double V = stretch::energy(x, s.rest) + shear::energy(x, s.rest) + bendtwist::energy(x, s.rest);
      const BondDofs g = stretch::gradient(x, s.rest) + shear::gradient(x, s.rest) + bendtwist::gradient(x, s.rest);
      const BondHessian H = stretch::hessian(x, s.rest) + shear::hessian(x, s.rest) + bendtwist::hessian(x, s.rest);
      const Eigen::Matrix<double, 12, 14> G = reduction_operator(s.qi, s.qj);
      Hessian12 Hr = G * H * G.transpose();
      Hr.block<3, 3>(3, 3) -= s.qi.dot(g.segment<4>(kRotI)) * Matrix3d::Identity();
      Hr.block<3, 3>(9, 9) -= s.qj.dot(g.segment<4>(kRotJ)) * Matrix3d::Identity();

      const BondReduced r = reduced_of(s, false);
      EXPECT_NEAR(r.energy, V, 1e-13 * std::max(1.0, V));
      EXPECT_NEAR(energy_of(s), V, 1e-13 * std::max(1.0, V));
      const double gs = std::max(1.0, g.lpNorm<Eigen::Infinity>());
      EXPECT_LE((r.gradient - G * g).lpNorm<Eigen::Infinity>(), 1e-13 * gs);
      EXPECT_LE((reduce_gradient(g, s.qi, s.qj) - G * g).lpNorm<Eigen::Infinity>(), 1e-13 * gs);
      const double hs = std::max(1.0, Hr.lpNorm<Eigen::Infinity>());
      EXPECT_LE((r.hessian - Hr).lpNorm<Eigen::Infinity>(), 1e-12 * hs);
      EXPECT_LE((reduce_hessian(H, s.qi, s.qj) - G * H * G.transpose()).lpNorm<Eigen::Infinity>(), 1e-12 * hs);
    }
  }
}

TEST(ManifoldBond, GradientMatchesCentralDifferencesAlongRetraction) {
  Rng rng;
  const double h = 1e-6;
  for (const BondModel& model : models()) {
    for (int k = 0; k < 12; ++k) {
      const State s = rng.deformed(model, 0.8, -0.1, 0.1, k % 2 == 1);
      const BondReduced r = reduced_of(s, false);
      Reduced12 fd;
      for (int a = 0; a < 12; ++a) {
        const Reduced12 e = h * Reduced12::Unit(a);
        fd[a] = (energy_of(retract(s, e)) - energy_of(retract(s, -e))) / (2.0 * h);
      }
      const double scale = std::max(1.0, r.gradient.lpNorm<Eigen::Infinity>());
      EXPECT_LE((r.gradient - fd).lpNorm<Eigen::Infinity>(), 1e-7 * scale) << "sample " << k;
    }
  }
}

TEST(ManifoldBond, HessianIsSymmetricAndMatchesTaylorExpansionAlongRetraction) {
  // f(R(x, εy)) − f − ε gᵀy − ½ε² yᵀHy = O(ε³) for the geodesic retraction (notes §2.8).
  Rng rng;
  for (const BondModel& model : models()) {
    for (int k = 0; k < 12; ++k) {
      const State s = rng.deformed(model, 0.8, -0.15, 0.15, k % 2 == 1);
      const BondReduced r = reduced_of(s, false);
      EXPECT_EQ((r.hessian - r.hessian.transpose()).lpNorm<Eigen::Infinity>(), 0.0);
      const Reduced12 y = rng.vector<12>();
      auto error = [&](double eps) {
        const Reduced12 e = eps * y;
        return std::abs(energy_of(retract(s, e)) - (r.energy + r.gradient.dot(e) + 0.5 * e.dot(r.hessian * e)));
      };
      const double ratio = taylor_ratio(error, 2e-3);
      EXPECT_GT(ratio, 700.0) << "sample " << k;
      EXPECT_LT(ratio, 1400.0) << "sample " << k;
    }
  }
}

TEST(ManifoldBond, CurvatureTermIsNeeded) {
  // Without −(q·∇_qV) I3 the quadratic model is wrong at second order: the Taylor error drops like ε², not ε³.
  Rng rng;
  const State s = rng.deformed(BondModel{}, 0.8, -0.1, 0.1, false);
  const BondReduced r = reduced_of(s, false);
  const BondDofs x = pack_bond(s.pi, s.qi, s.pj, s.qj);
  const BondDofs g = stretch::gradient(x, s.rest) + shear::gradient(x, s.rest) + bendtwist::gradient(x, s.rest);
  Hessian12 flat = r.hessian;
  flat.block<3, 3>(3, 3) += s.qi.dot(g.segment<4>(kRotI)) * Matrix3d::Identity();
  flat.block<3, 3>(9, 9) += s.qj.dot(g.segment<4>(kRotJ)) * Matrix3d::Identity();
  Reduced12 y = Reduced12::Zero();
  y.segment<3>(3) = rng.vec();
  auto error = [&](double eps) {
    const Reduced12 e = eps * y;
    return std::abs(energy_of(retract(s, e)) - (r.energy + r.gradient.dot(e) + 0.5 * e.dot(flat * e)));
  };
  const double ratio = taylor_ratio(error, 1e-3);
  EXPECT_GT(ratio, 70.0);
  EXPECT_LT(ratio, 140.0);
}

TEST(ManifoldBond, HessianAlongRigidRotationsIsTheCentripetalForceTerm) {
  // V is invariant under rigid rotations, whose orbits are geodesics for q but circles for p; the
  // straight-line retraction of p leaves eᵀHe = |ω|²(g·Δ) − (g·ω)(ω·Δ), g = ∇_{p_j}V, Δ = p_j − p_i.
  // It is negative for some ω whenever g is not parallel to Δ in tension, so bond blocks are indefinite.
  Rng rng;
  for (const BondModel& model : models()) {
    for (int k = 0; k < 6; ++k) {
      const State s = rng.deformed(model, 0.8, -0.1, 0.1, k % 2 == 1);
      const BondReduced r = reduced_of(s, false);
      const Vector3d g = r.gradient.segment<3>(6), delta = s.pj - s.pi;
      for (int n = 0; n < 3; ++n) {
        const Vector3d w = rng.vec();
        Reduced12 e;  // rotation rate ω about p_i: δp = ω × (p − p_i), y = ½ R(q)ᵀ ω (body half-angle)
        e << Vector3d::Zero(), 0.5 * quat::rotate(quat::conj(s.qi), w), w.cross(delta),
            0.5 * quat::rotate(quat::conj(s.qj), w);
        const double expected = w.squaredNorm() * g.dot(delta) - g.dot(w) * w.dot(delta);
        EXPECT_NEAR(e.dot(r.hessian * e), expected, 1e-10 * r.hessian.norm() * e.squaredNorm()) << "sample " << k;
        EXPECT_NEAR(r.gradient.dot(e), 0.0, 1e-12 * r.gradient.norm() * e.norm());  // invariance, first order
      }
    }
  }
}

TEST(ManifoldBond, ProjectedHessianIsPsdAndKeepsThePositiveSpectrum) {
  // Compressed, strongly rotated bonds give indefinite blocks; the projection must be V max(Λ,0) Vᵀ.
  Rng rng;
  int indefinite = 0;
  for (const BondModel& model : models()) {
    for (int k = 0; k < 12; ++k) {
      const State s = rng.deformed(model, 1.2, -0.3, 0.05, k % 2 == 1);
      const BondReduced raw = reduced_of(s, false);
      const BondReduced psd = reduced_of(s, true);
      EXPECT_EQ(psd.energy, raw.energy);
      EXPECT_EQ((psd.gradient - raw.gradient).lpNorm<Eigen::Infinity>(), 0.0);
      const Eigen::SelfAdjointEigenSolver<Hessian12> es(raw.hessian);
      const double lmax = es.eigenvalues().cwiseAbs().maxCoeff();
      if (es.eigenvalues()[0] < -1e-9 * lmax) ++indefinite;
      EXPECT_GE(min_eigenvalue(psd.hessian), -1e-9 * lmax) << "sample " << k;
      EXPECT_LE((psd.hessian - psd.hessian.transpose()).lpNorm<Eigen::Infinity>(), 1e-12 * lmax);
      // The translation-reduced 9×9 projection used by bond_reduced equals the plain 12×12 one.
      Hessian12 full = raw.hessian;
      full = project_to_psd<12>(full);
      EXPECT_LE((psd.hessian - full).lpNorm<Eigen::Infinity>(), 1e-10 * lmax) << "sample " << k;
      for (int a = 0; a < 12; ++a) {
        const double lambda = es.eigenvalues()[a];
        const Reduced12 v = es.eigenvectors().col(a);
        EXPECT_LE((psd.hessian * v - std::max(0.0, lambda) * v).norm(), 1e-10 * lmax) << "eigenpair " << a;
      }
    }
  }
  EXPECT_GE(indefinite, 10);  // the states above really exercise the clamp
}

TEST(ManifoldBond, GenericProjectionClampsAKnownSpectrum) {
  // Q diag(λ) Qᵀ with a random orthogonal Q becomes Q diag(max(λ, 0)) Qᵀ.
  Rng rng;
  for (int n = 0; n < 5; ++n) {
    Hessian12 M;
    for (int a = 0; a < 12; ++a) M.col(a) = rng.vector<12>();
    const Hessian12 Q = Eigen::HouseholderQR<Hessian12>(M).householderQ();
    Reduced12 lambda;
    for (int a = 0; a < 12; ++a) lambda[a] = (a % 3 == 0 ? -1.0 : 1.0) * (1.0 + a);
    Hessian12 H = Q * lambda.asDiagonal() * Q.transpose();
    H = (0.5 * (H + H.transpose())).eval();
    const Hessian12 expected = Q * lambda.cwiseMax(0.0).asDiagonal() * Q.transpose();
    H = project_to_psd<12>(H);
    EXPECT_LE((H - expected).lpNorm<Eigen::Infinity>(), 1e-12 * 12.0);
  }
}

TEST(ManifoldBond, ProjectionLeavesAPsdHessianUnchanged) {
  // Slightly stretched rest state, seen from a rigidly rotated frame: only stretch is loaded, so the reduced
  // Hessian is PSD with six rigid-body null modes.
  Rng rng;
  for (const BondModel& model : models()) {
    for (int k = 0; k < 5; ++k) {
      State s = rng.deformed(model, 0.0, 0.0, 0.0, false);
      const Quat qR = rng.unit_quat();
      const Vector3d d0 = s.rest.d0;
      s.qi = qR;
      s.qj = k % 2 == 1 ? Quat(-qR) : qR;
      s.pj = s.pi + 1.01 * s.rest.l0 * quat::rotate(qR, d0);
      const BondReduced raw = reduced_of(s, false);
      const BondReduced psd = reduced_of(s, true);
      const double scale = raw.hessian.lpNorm<Eigen::Infinity>();
      EXPECT_GE(min_eigenvalue(raw.hessian), -1e-12 * scale);
      EXPECT_LE((psd.hessian - raw.hessian).lpNorm<Eigen::Infinity>(), 1e-12 * scale);
      // Only the stretch is loaded: V = ½ k_n (0.01 l0)², gradient ±k_n (0.01 l0) d on the positions.
      const double dL = 0.01 * s.rest.l0;
      EXPECT_NEAR(raw.energy, 0.5 * s.rest.kn * dL * dL, 1e-10 * s.rest.kn * dL * dL);
      EXPECT_LE(raw.gradient.segment<3>(3).norm() + raw.gradient.segment<3>(9).norm(), 1e-12 * s.rest.kn);
    }
  }
}

TEST(ManifoldReduction, MinNormProjectedSolveEqualsReducedSolve) {
  // Notes T5: with 𝒢ᵀ𝒢 = P and 𝒢𝒢ᵀ = I, the min-norm solution of P H P Δx = −P b is 𝒢ᵀ(𝒢H𝒢ᵀ)⁻¹(−𝒢b).
  Rng rng;
  for (int k = 0; k < 10; ++k) {
    const Quat qi = rng.unit_quat(), qj = rng.unit_quat();
    BondHessian A;
    for (int a = 0; a < 14; ++a) A.col(a) = rng.vector<14>();
    const BondHessian H = A * A.transpose() + 14.0 * BondHessian::Identity();
    const BondDofs b = rng.vector<14>();

    BondHessian P = BondHessian::Identity();
    P.block<4, 4>(kRotI, kRotI) -= qi * qi.transpose();
    P.block<4, 4>(kRotJ, kRotJ) -= qj * qj.transpose();
    const BondHessian PHP = P * H * P;
    const Eigen::SelfAdjointEigenSolver<BondHessian> es(PHP);
    const double lmax = es.eigenvalues().maxCoeff();
    Eigen::Matrix<double, 14, 1> inv;
    int rank = 0;
    for (int a = 0; a < 14; ++a) {
      const double l = es.eigenvalues()[a];
      const bool kept = l > 1e-10 * lmax;  // the two normal directions (0, q_i, 0, 0), (0, 0, 0, q_j) drop
      inv[a] = kept ? 1.0 / l : 0.0;
      rank += kept ? 1 : 0;
    }
    EXPECT_EQ(rank, 12);
    const BondDofs dx_min_norm = es.eigenvectors() * inv.asDiagonal() * es.eigenvectors().transpose() * (-P * b);

    const Reduced12 y = reduce_hessian(H, qi, qj).ldlt().solve(-reduce_gradient(b, qi, qj));
    const BondDofs dx_reduced = reduction_operator(qi, qj).transpose() * y;
    EXPECT_LE((dx_reduced - dx_min_norm).norm(), 1e-10 * dx_min_norm.norm()) << "sample " << k;
    EXPECT_LE(std::abs(qi.dot(dx_reduced.segment<4>(kRotI))) + std::abs(qj.dot(dx_reduced.segment<4>(kRotJ))),
              1e-13 * dx_reduced.norm());
  }
}

TEST(ManifoldContact, SpherePairGradientHessianAndClamp) {
  Rng rng;
  const double k = 37.0;
  for (int n = 0; n < 20; ++n) {
    const double ri = 0.5 + 0.2 * rng.uniform(rng.gen), rj = 0.5 + 0.2 * rng.uniform(rng.gen);
    const Vector3d pi = rng.vec(), dir = rng.vec().normalized();
    const double L = (ri + rj) * (0.7 + 0.25 * (rng.uniform(rng.gen) + 1.0) / 2.0);  // 0.7 .. 0.95 of reach
    const Vector3d pj = pi + L * dir;
    auto pack = [](const Vector3d& a, const Vector3d& b) { return (Vector6d() << a, b).finished(); };
    auto energy = [&](const Vector6d& x) { return contact_penalty(x.head<3>(), ri, x.tail<3>(), rj, k).energy; };
    auto gradient = [&](const Vector6d& x) { return contact_penalty(x.head<3>(), ri, x.tail<3>(), rj, k).gradient; };
    const Vector6d x = pack(pi, pj);
    const PairReduced6 c = contact_penalty(pi, ri, pj, rj, k);
    ASSERT_TRUE(c.active);
    const double gap = L - ri - rj;
    EXPECT_NEAR(c.energy, 0.5 * k * gap * gap, 1e-13 * k);
    EXPECT_LE((c.gradient.tail<3>() - k * gap * dir).norm(), 1e-12 * k);
    EXPECT_LE((c.gradient.head<3>() + c.gradient.tail<3>()).norm(), 1e-15 * k);  // equal and opposite

    const double h = 1e-6;
    Vector6d fd;
    Matrix6d fdH;
    for (int a = 0; a < 6; ++a) {
      const Vector6d e = h * Vector6d::Unit(a);
      fd[a] = (energy(x + e) - energy(x - e)) / (2.0 * h);
      fdH.col(a) = (gradient(x + e) - gradient(x - e)) / (2.0 * h);
    }
    EXPECT_LE((c.gradient - fd).lpNorm<Eigen::Infinity>(), 1e-8 * k);
    // Radial part: the clamp is inactive, H equals the exact Hessian.
    for (const Vector6d& v : {pack(dir, Vector3d::Zero()), pack(Vector3d::Zero(), dir), pack(dir, -dir)})
      EXPECT_LE((c.hessian * v - fdH * v).norm(), 1e-7 * k);
    // Tangential part: exactly the negative k (L − reach)/L (I − d dᵀ) term is dropped.
    const Matrix3d dropped = k * gap / L * (Matrix3d::Identity() - dir * dir.transpose());
    Matrix6d expected = Matrix6d::Zero();
    expected << dropped, -dropped, -dropped, dropped;
    EXPECT_LE((fdH - c.hessian - expected).lpNorm<Eigen::Infinity>(), 1e-7 * k);
    EXPECT_GE(Eigen::SelfAdjointEigenSolver<Matrix6d>(c.hessian).eigenvalues()[0], -1e-12 * k);

    const PairReduced6 apart = contact_penalty(pi, ri, pi + 1.001 * (ri + rj) * dir, rj, k);
    EXPECT_FALSE(apart.active);
    EXPECT_EQ(apart.energy, 0.0);
    EXPECT_EQ(apart.gradient.norm() + apart.hessian.norm(), 0.0);
  }
  const PairReduced6 same = contact_penalty(Vector3d::Ones(), 0.5, Vector3d::Ones(), 0.5, k);
  EXPECT_TRUE(same.active);
  EXPECT_TRUE(same.gradient.allFinite() && same.hessian.allFinite());
  EXPECT_NEAR(same.energy, 0.5 * k, 1e-14 * k);
}

// Along a fixed normal n the gap n·(p_j − p_i) − r_i − r_j is linear: the gradient and the Hessian k [n nᵀ −n nᵀ;
// −n nᵀ n nᵀ] are exact (finite differences), the energy is convex, and it never lies below the penalty along the
// centres' own direction (n·d ≤ |d|), which it equals when n is that direction.
TEST(ManifoldContact, FixedNormalPairIsExactConvexAndBoundsThePenalty) {
  Rng rng;
  const double k = 7.0;
  for (int n = 0; n < 20; ++n) {
    const Vector3d pi = rng.vec(), dir = rng.vec().normalized();
    const double ri = 0.5 + 0.1 * rng.uniform(rng.gen), rj = 0.4 + 0.1 * rng.uniform(rng.gen);
    const double L = (ri + rj) * (0.8 + 0.15 * (rng.uniform(rng.gen) + 1.0) / 2.0);
    const Vector3d pj = pi + L * dir;
    const Vector3d normal = (dir + 0.1 * rng.vec()).normalized();  // a normal taken elsewhere
    auto pack = [](const Vector3d& a, const Vector3d& b) { return (Vector6d() << a, b).finished(); };
    auto at = [&](const Vector6d& x) { return contact_penalty_along(x.head<3>(), ri, x.tail<3>(), rj, k, normal); };
    const Vector6d x = pack(pi, pj);
    const PairReduced6 c = at(x);
    ASSERT_TRUE(c.active);
    const double gap = normal.dot(pj - pi) - ri - rj;
    EXPECT_NEAR(c.energy, 0.5 * k * gap * gap, 1e-13 * k);
    EXPECT_GE(c.energy, contact_penalty(pi, ri, pj, rj, k).energy);
    EXPECT_NEAR(contact_penalty_along(pi, ri, pj, rj, k, dir).energy, contact_penalty(pi, ri, pj, rj, k).energy,
                1e-13 * k);
    const double h = 1e-6;
    Vector6d fd;
    Matrix6d fdH;
    for (int a = 0; a < 6; ++a) {
      const Vector6d e = h * Vector6d::Unit(a);
      fd[a] = (at(x + e).energy - at(x - e).energy) / (2.0 * h);
      fdH.col(a) = (at(x + e).gradient - at(x - e).gradient) / (2.0 * h);
    }
    EXPECT_LE((c.gradient - fd).lpNorm<Eigen::Infinity>(), 1e-8 * k);
    EXPECT_LE((c.hessian - fdH).lpNorm<Eigen::Infinity>(), 1e-7 * k);
    EXPECT_GE(Eigen::SelfAdjointEigenSolver<Matrix6d>(c.hessian).eigenvalues()[0], -1e-12 * k);
    EXPECT_FALSE(at(pack(pi, pi + (ri + rj + 1e-3) * normal + 0.5 * normal.unitOrthogonal())).active);
  }
}

TEST(ManifoldContact, PlaneGradientHessianAndActivation) {
  Rng rng;
  const double k = 11.0;
  for (int n = 0; n < 20; ++n) {
    const Vector3d point = rng.vec(), normal = rng.vec().normalized();
    const double r = 0.5 + 0.2 * rng.uniform(rng.gen);
    const double depth = 0.3 * r * (rng.uniform(rng.gen) + 1.0) / 2.0 + 1e-3;
    const Vector3d p = point + (r - depth) * normal + rng.vec().cross(normal);  // in-plane offset too
    const PlaneReduced3 c = plane_penalty(p, r, point, normal, k);
    ASSERT_TRUE(c.active);
    EXPECT_NEAR(c.energy, 0.5 * k * depth * depth, 1e-12 * k);
    const double h = 1e-6;
    Vector3d fd;
    Matrix3d fdH;
    for (int a = 0; a < 3; ++a) {
      const Vector3d e = h * Vector3d::Unit(a);
      fd[a] = (plane_penalty(p + e, r, point, normal, k).energy - plane_penalty(p - e, r, point, normal, k).energy) /
              (2.0 * h);
      fdH.col(a) = (plane_penalty(p + e, r, point, normal, k).gradient -
                    plane_penalty(p - e, r, point, normal, k).gradient) / (2.0 * h);
    }
    EXPECT_LE((c.gradient - fd).lpNorm<Eigen::Infinity>(), 1e-8 * k);
    EXPECT_LE((c.hessian - fdH).lpNorm<Eigen::Infinity>(), 1e-7 * k);
    EXPECT_LT(c.gradient.dot(normal), 0.0);  // pushes the sphere out along +n

    const PlaneReduced3 free = plane_penalty(point + 1.001 * r * normal, r, point, normal, k);
    EXPECT_FALSE(free.active);
    EXPECT_EQ(free.energy + free.gradient.norm() + free.hessian.norm(), 0.0);
  }
}

struct Body {
  Vector3d p, p_hat;
  Quat q, q_hat;
  double m, r, h;
};

Body random_body(Rng& rng) {
  Body b;
  b.m = 2.0 + rng.uniform(rng.gen);
  b.r = 0.5 + 0.2 * rng.uniform(rng.gen);
  b.h = 0.1;
  b.p = rng.vec();
  b.p_hat = b.p + 0.1 * rng.vec();
  b.q = rng.unit_quat();
  // q̂ = 2q_n − q_{n−1} with q_{n−1} a nearby unit quaternion: not unit, q·q̂ > 0.
  const Quat q_prev = quat::exp_body(b.q, 0.2 * rng.vec());
  b.q_hat = 2.0 * quat::exp_body(b.q, 0.3 * rng.vec()) - q_prev;
  return b;
}

double inertia_along(const Body& b, const Vector6d& e) {
  return inertia_energy(b.p + e.head<3>(), quat::exp_body(b.q, e.tail<3>()), b.p_hat, b.q_hat, b.m, b.r, b.h);
}

TEST(ManifoldInertia, GradientAlongGeodesicsAndClosedForms) {
  Rng rng;
  for (int n = 0; n < 20; ++n) {
    const Body b = random_body(rng);
    const InertiaReduced in = inertia(b.p, b.q, b.p_hat, b.q_hat, b.m, b.r, b.h);
    const double c = 1.6 * b.m * b.r * b.r / (b.h * b.h);
    EXPECT_NEAR(in.energy, inertia_energy(b.p, b.q, b.p_hat, b.q_hat, b.m, b.r, b.h), 1e-14 * in.energy);
    EXPECT_NEAR(in.energy,
                0.5 * b.m / (b.h * b.h) * (b.p - b.p_hat).squaredNorm() + 0.5 * c * (b.q - b.q_hat).squaredNorm(),
                1e-13 * in.energy);
    const double h = 1e-6;
    Vector6d fd;
    for (int a = 0; a < 6; ++a) {
      const Vector6d e = h * Vector6d::Unit(a);
      fd[a] = (inertia_along(b, e) - inertia_along(b, -e)) / (2.0 * h);
    }
    EXPECT_LE((in.gradient - fd).lpNorm<Eigen::Infinity>(), 1e-7 * std::max(1.0, in.gradient.norm()));
    EXPECT_NEAR(in.hessian_diag[0], b.m / (b.h * b.h), 1e-14 * b.m / (b.h * b.h));
    EXPECT_NEAR(in.hessian_diag[3], c * b.q.dot(b.q_hat), 1e-13 * c);
    EXPECT_GT(in.hessian_diag[3], 0.0);

    // The inertia-only optimum of the rotation is q̂/|q̂|: no rotational gradient there.
    const Quat q_star = b.q_hat / b.q_hat.norm();
    const InertiaReduced at = inertia(b.p, q_star, b.p_hat, b.q_hat, b.m, b.r, b.h);
    EXPECT_LE(at.gradient.tail<3>().norm(), 1e-13 * c);
    EXPECT_GT(in.gradient.tail<3>().norm(), 1e-3 * c);  // ...and only there
  }
}

TEST(ManifoldInertia, HessianDiagonalMatchesTaylorExpansionAndIsClamped) {
  Rng rng;
  for (int n = 0; n < 10; ++n) {
    const Body b = random_body(rng);
    const InertiaReduced in = inertia(b.p, b.q, b.p_hat, b.q_hat, b.m, b.r, b.h);
    const Vector6d y = rng.vector<6>();
    auto error = [&](double eps) {
      const Vector6d e = eps * y;
      return std::abs(inertia_along(b, e) -
                      (in.energy + in.gradient.dot(e) + 0.5 * e.dot(in.hessian_diag.asDiagonal() * e)));
    };
    const double ratio = taylor_ratio(error, 2e-3);
    EXPECT_GT(ratio, 700.0) << "sample " << n;
    EXPECT_LT(ratio, 1400.0) << "sample " << n;
  }
  // More than 90° on S³ from q̂: the true curvature c (q·q̂) is negative and the clamp makes it 0.
  Body b = random_body(rng);
  b.q_hat = -b.q_hat;
  const InertiaReduced in = inertia(b.p, b.q, b.p_hat, b.q_hat, b.m, b.r, b.h);
  ASSERT_LT(b.q.dot(b.q_hat), 0.0);
  EXPECT_EQ(in.hessian_diag.tail<3>().norm(), 0.0);
  EXPECT_GT(in.hessian_diag.head<3>().minCoeff(), 0.0);
}

}  // namespace

}  // namespace test_manifold
