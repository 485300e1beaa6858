// Quaternion toolkit: every identity of notes 001 §2.4 on random unit quaternions (test T2), checked
// against independent constructions (Hamilton products, Eigen::AngleAxis) rather than against itself.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <random>

#include "percussion/physics/quaternion.hpp"

namespace test_quaternion {

namespace {

using namespace percussion::quat;
using Eigen::Matrix3d;
using Eigen::Matrix4d;
using Eigen::Vector3d;

constexpr int kSamples = 200;

struct Rng {
  std::mt19937_64 gen{20240611};
  std::normal_distribution<double> normal{0.0, 1.0};
  Quat unit_quat() {
    Quat q(normal(gen), normal(gen), normal(gen), normal(gen));
    return q / q.norm();
  }
  Vector3d vec() { return Vector3d(normal(gen), normal(gen), normal(gen)); }
};

Quat pure(const Vector3d& v) { return Quat(v[0], v[1], v[2], 0.0); }

TEST(Quaternion, ProductMatchesQlQrAndConjugateInverts) {
  Rng rng;
  for (int k = 0; k < kSamples; ++k) {
    const Quat a = rng.unit_quat(), b = rng.unit_quat(), c = rng.unit_quat();
    EXPECT_LE((mul(a, b) - Ql(a) * b).norm(), 1e-15);
    EXPECT_LE((mul(a, b) - Qr(b) * a).norm(), 1e-15);
    EXPECT_LE((mul(mul(a, b), c) - mul(a, mul(b, c))).norm(), 1e-15);
    EXPECT_LE((mul(conj(a), a) - identity()).norm(), 1e-15);
    EXPECT_LE((mul(a, conj(a)) - identity()).norm(), 1e-15);
  }
  // i ⊗ j = k fixes the Hamilton convention (i j = k, not −k).
  EXPECT_EQ(mul(Quat(1, 0, 0, 0), Quat(0, 1, 0, 0)), Quat(0, 0, 1, 0));
}

TEST(Quaternion, CrossMatrixIsCrossProduct) {
  Rng rng;
  for (int k = 0; k < kSamples; ++k) {
    const Vector3d a = rng.vec(), b = rng.vec();
    EXPECT_LE((cross_matrix(a) * b - a.cross(b)).norm(), 1e-14);
  }
}

TEST(Quaternion, NullspaceOperatorsAnnihilateQ) {
  Rng rng;
  for (int k = 0; k < kSamples; ++k) {
    const Quat q = rng.unit_quat();
    EXPECT_LE((Gl(q) * q).norm(), 1e-15);
    EXPECT_LE((Gr(q) * q).norm(), 1e-15);
  }
}

TEST(Quaternion, NullspaceOperatorsAreProjections) {
  Rng rng;
  for (int k = 0; k < kSamples; ++k) {
    const Quat q = rng.unit_quat();
    const Matrix4d P = Matrix4d::Identity() - q * q.transpose();
    EXPECT_LE((Gl(q).transpose() * Gl(q) - P).norm(), 1e-14);
    EXPECT_LE((Gr(q).transpose() * Gr(q) - P).norm(), 1e-14);
    EXPECT_LE((Gl(q) * Gl(q).transpose() - Matrix3d::Identity()).norm(), 1e-14);
    EXPECT_LE((Gr(q) * Gr(q).transpose() - Matrix3d::Identity()).norm(), 1e-14);
  }
}

TEST(Quaternion, QlQrAreGTransposeWithQ) {
  Rng rng;
  for (int k = 0; k < kSamples; ++k) {
    const Quat q = rng.unit_quat();
    Matrix4d ql, qr;
    ql << Gl(q).transpose(), q;
    qr << Gr(q).transpose(), q;
    EXPECT_LE((Ql(q) - ql).norm(), 1e-15);
    EXPECT_LE((Qr(q) - qr).norm(), 1e-15);
    // G_l(q) and G_r(q) are the top rows of Q_l(q̄) and Q_r(q̄).
    EXPECT_LE((Ql(conj(q)).topRows<3>() - Gl(q)).norm(), 1e-15);
    EXPECT_LE((Qr(conj(q)).topRows<3>() - Gr(q)).norm(), 1e-15);
  }
}

TEST(Quaternion, RelativeRotationIdentities) {
  Rng rng;
  for (int k = 0; k < kSamples; ++k) {
    const Quat qi = rng.unit_quat(), qj = rng.unit_quat();
    const Vector3d body = Gl(qj) * qi;
    EXPECT_LE((body - mul(conj(qj), qi).head<3>()).norm(), 1e-15);
    EXPECT_LE((body + Gl(qi) * qj).norm(), 1e-15);
    const Vector3d ti = qi.head<3>(), tj = qj.head<3>();
    EXPECT_LE((body - (qj[3] * ti - qi[3] * tj - tj.cross(ti))).norm(), 1e-15);
    EXPECT_LE((Gr(qj) * qi - mul(qi, conj(qj)).head<3>()).norm(), 1e-15);
  }
}

TEST(Quaternion, GTransposeGivesBodyAndWorldIncrements) {
  Rng rng;
  for (int k = 0; k < kSamples; ++k) {
    const Quat q = rng.unit_quat();
    const Vector3d y = rng.vec();
    EXPECT_LE((Gl(q).transpose() * y - mul(q, pure(y))).norm(), 1e-14);
    EXPECT_LE((Gr(q).transpose() * y - mul(pure(y), q)).norm(), 1e-14);
  }
}

TEST(Quaternion, RotationMatrixIdentities) {
  Rng rng;
  for (int k = 0; k < kSamples; ++k) {
    const Quat q = rng.unit_quat();
    const Matrix3d R = rotation_matrix(q);
    EXPECT_LE((Gl(q) * Gr(q).transpose() - R.transpose()).norm(), 1e-14);
    EXPECT_LE((Gr(q) * Gl(q).transpose() - R).norm(), 1e-14);
    EXPECT_LE((R.transpose() * R - Matrix3d::Identity()).norm(), 1e-14);
    EXPECT_NEAR(R.determinant(), 1.0, 1e-14);
    // Same rotation as Eigen's (scalar-first constructor) and as q ⊗ (v,0) ⊗ q̄.
    const Eigen::Quaterniond e(q[3], q[0], q[1], q[2]);
    EXPECT_LE((R - e.toRotationMatrix()).norm(), 1e-14);
    const Vector3d v = rng.vec();
    EXPECT_LE((rotate(q, v) - R * v).norm(), 1e-14);
    EXPECT_LE((rotate(q, v) - mul(mul(q, pure(v)), conj(q)).head<3>()).norm(), 1e-14);
    // Homogeneous quadratic: R(λ q) = λ² R(q).
    EXPECT_LE((rotation_matrix(1.7 * q) - 1.7 * 1.7 * R).norm(), 1e-13);
  }
}

TEST(Quaternion, FromRotationVectorMatchesAngleAxis) {
  Rng rng;
  for (int k = 0; k < kSamples; ++k) {
    const Vector3d theta = rng.vec();
    const Quat q = from_rotation_vector(theta);
    EXPECT_NEAR(q.norm(), 1.0, 1e-15);
    const Matrix3d ref = Eigen::AngleAxisd(theta.norm(), theta.normalized()).toRotationMatrix();
    EXPECT_LE((rotation_matrix(q) - ref).norm(), 1e-14);
  }
  EXPECT_EQ(from_rotation_vector(Vector3d::Zero()), identity());
  // Tiny angle: first order q ≈ (θ/2, 1), no 0/0.
  const Vector3d tiny(1e-9, -2e-9, 3e-9);
  const Quat qt = from_rotation_vector(tiny);
  EXPECT_LE((qt.head<3>() - 0.5 * tiny).norm(), 1e-24);
  EXPECT_NEAR(qt[3], 1.0, 1e-17);
}

TEST(Quaternion, RotationVectorInvertsFromRotationVector) {
  Rng rng;
  for (int k = 0; k < kSamples; ++k) {
    // Angles up to 6 rad (beyond π: the scalar part turns negative), any axis; positive scale ignored.
    const Vector3d theta = (0.05 + 5.95 * (k % 20) / 19.0) * rng.vec().normalized();
    const Quat q = from_rotation_vector(theta);
    EXPECT_LE((rotation_vector(q) - theta).norm(), 1e-14 * (1.0 + theta.norm())) << theta.norm();
    EXPECT_LE((rotation_vector(2.5 * q) - theta).norm(), 1e-14 * (1.0 + theta.norm()));
    // −q: the same rotation the long way round.
    const Vector3d other = rotation_vector(-q);
    EXPECT_NEAR(other.norm(), 2.0 * std::acos(-1.0) - theta.norm(), 1e-13);
    EXPECT_LE((rotation_matrix(from_rotation_vector(other)) - rotation_matrix(q)).norm(), 1e-13);
  }
  EXPECT_EQ(rotation_vector(identity()), Vector3d::Zero());
  EXPECT_EQ(rotation_vector(-identity()), Vector3d::Zero());
  // Tiny angles, both sides of the series switch, to full relative precision.
  for (const double a : {1e-12, 1e-6, 9e-5, 2e-4, 1e-3}) {
    const Vector3d theta = a * Vector3d(0.6, -0.48, 0.64);
    EXPECT_LE((rotation_vector(from_rotation_vector(theta)) - theta).norm(), 1e-15 * a) << a;
  }
}

TEST(Quaternion, ExpMapFollowsGreatCircle) {
  Rng rng;
  for (int k = 0; k < kSamples; ++k) {
    const Quat q = rng.unit_quat();
    Quat v = rng.unit_quat();
    v -= v.dot(q) * q;  // tangent at q
    v *= 0.9 / v.norm();
    const Quat r = exp_map(q, v);
    EXPECT_NEAR(r.norm(), 1.0, 1e-15);
    EXPECT_NEAR(r.dot(q), std::cos(0.9), 1e-14);          // arc length 0.9
    EXPECT_LE((r - std::cos(0.9) * q - std::sin(0.9) / 0.9 * v).norm(), 1e-14);
  }
  EXPECT_EQ(exp_map(identity(), Quat::Zero()), identity());
}

TEST(Quaternion, ExpBodyRotatesByTwiceNormInBodyFrame) {
  Rng rng;
  for (int k = 0; k < kSamples; ++k) {
    const Quat q = rng.unit_quat();
    const Vector3d y = 0.7 * rng.vec();
    const Quat r = exp_body(q, y);
    EXPECT_NEAR(r.norm(), 1.0, 1e-15);
    // R(r) = R(q) · Rot(2|y|, ŷ): the increment acts on the body side.
    const Matrix3d inc = Eigen::AngleAxisd(2.0 * y.norm(), y.normalized()).toRotationMatrix();
    EXPECT_LE((rotation_matrix(r) - rotation_matrix(q) * inc).norm(), 1e-14);
  }
}

TEST(Quaternion, AdvanceWorldIsLeftMultiplication) {
  Rng rng;
  for (int k = 0; k < kSamples; ++k) {
    const Quat q = rng.unit_quat();
    const Vector3d w = rng.vec();
    const double dt = 0.3;
    const Quat r = advance_world(q, w, dt);
    EXPECT_NEAR(r.norm(), 1.0, 1e-15);
    const Matrix3d inc = Eigen::AngleAxisd(w.norm() * dt, w.normalized()).toRotationMatrix();
    EXPECT_LE((rotation_matrix(r) - inc * rotation_matrix(q)).norm(), 1e-14);
  }
}

TEST(Quaternion, AdvanceWorldDerivativeIsQdotFromOmega) {
  Rng rng;
  for (int k = 0; k < kSamples; ++k) {
    const Quat q = rng.unit_quat();
    const Vector3d w = rng.vec();
    const double dt = 1e-5;
    // Central difference: the exact derivative at dt = 0 is ½ (ω,0) ⊗ q, error O(dt²).
    const Quat fd = (advance_world(q, w, dt) - advance_world(q, w, -dt)) / (2.0 * dt);
    const Quat qdot = qdot_from_omega(q, w);
    EXPECT_LE((fd - qdot).norm(), 1e-9 * (1.0 + w.squaredNorm() * w.norm()));
    EXPECT_NEAR(qdot.dot(q), 0.0, 1e-15);  // tangent
    EXPECT_LE((omega_from_qdot(q, qdot) - w).norm(), 1e-14);
  }
}

TEST(Quaternion, TorqueWorldMatchesLeverArmCrossForce) {
  // V(q) = −F·R(q)e is the work potential of a force F at body point e; its torque is (R e) × F.
  // V is quadratic in q, so the central difference gradient is exact up to round-off.
  Rng rng;
  for (int k = 0; k < kSamples; ++k) {
    const Quat q = rng.unit_quat();
    const Vector3d F = rng.vec(), e = rng.vec();
    auto V = [&](const Quat& x) { return -F.dot(rotate(x, e)); };
    Quat grad;
    const double h = 1e-3;
    for (int a = 0; a < 4; ++a) {
      Quat dq = Quat::Zero();
      dq[a] = h;
      grad[a] = (V(q + dq) - V(q - dq)) / (2.0 * h);
    }
    const Vector3d expected = rotate(q, e).cross(F);
    EXPECT_LE((torque_world(q, grad) - expected).norm(), 1e-12 * (1.0 + F.norm() * e.norm()));
  }
}

// The retraction's cos a and sin(a)/a: series below 0.05 rad, libm above; both within a rounding or two of libm's
// values on either side of the switch (a truncated series, or a wrong coefficient, would be off by far more).
TEST(Quaternion, CosAndSincSeriesMatchLibm) {
  for (double a : {0.0, 1e-12, 1e-6, 1e-4, 3e-3, 0.01, 0.03, 0.0499999, 0.05, 0.2, 1.0, 3.0}) {
    double c = 0, s = 0;
    percussion::quat::detail::cos_sinc(a, c, s);
    EXPECT_NEAR(c, std::cos(a), 4e-16) << a;
    EXPECT_NEAR(s, a == 0 ? 1.0 : std::sin(a) / a, 4e-16) << a;
  }
}

}  // namespace

}  // namespace test_quaternion
