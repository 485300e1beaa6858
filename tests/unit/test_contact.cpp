// Sphere–sphere and sphere–plane contact: energy gradient, momentum, restitution, Coulomb limit; obstacles.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "percussion/geometry/obstacle.hpp"
#include "percussion/physics/contact.hpp"

namespace test_contact {

using namespace percussion;
using physics::ContactForce;
using physics::ContactLaw;
using physics::sphere_plane;
using physics::sphere_sphere;

namespace {

const Eigen::Vector3d kZero = Eigen::Vector3d::Zero();

struct Rng {
  std::mt19937_64 gen;
  explicit Rng(std::uint64_t seed) : gen(seed) {}
  double operator()(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(gen); }
  Eigen::Vector3d vec(double scale) { return Eigen::Vector3d((*this)(-1, 1), (*this)(-1, 1), (*this)(-1, 1)) * scale; }
};

// Random overlapping pair: radii ~1 cm, overlap up to 20% of the smaller radius.
struct Pair {
  Eigen::Vector3d pi, pj, vi, vj, wi, wj;
  double ri, rj, mi, mj;
};
Pair random_pair(Rng& rng, double speed, double spin) {
  Pair s;
  s.ri = rng(0.005, 0.015);
  s.rj = rng(0.005, 0.015);
  s.mi = rng(1e-3, 1e-2);
  s.mj = rng(1e-3, 1e-2);
  s.pi = rng.vec(0.5);
  const Eigen::Vector3d n = rng.vec(1.0).normalized();
  s.pj = s.pi + (s.ri + s.rj - rng(0.0, 0.2) * std::min(s.ri, s.rj)) * n;
  s.vi = rng.vec(speed);
  s.vj = rng.vec(speed);
  s.wi = rng.vec(spin);
  s.wj = rng.vec(spin);
  return s;
}
ContactForce eval(const Pair& s, const ContactLaw& law) {
  return sphere_sphere(s.pi, s.vi, s.wi, s.ri, s.mi, s.pj, s.vj, s.wj, s.rj, s.mj, law);
}

}  // namespace

TEST(Contact, RestitutionModelInvertsAndIsContinuous) {
  for (double e = 0.01; e < 1.0; e += 0.0137) {
    const double z = physics::damping_ratio_for_restitution(e);
    EXPECT_NEAR(physics::restitution_of_damping_ratio(z), e, 1e-12 * (1.0 + e)) << e;
  }
  EXPECT_EQ(physics::damping_ratio_for_restitution(1.0), 0.0);
  // Under-, critically and over-damped branches meet at ζ = 1 (e = e^−2); small ζ: e ≈ 1 − πζ.
  EXPECT_NEAR(physics::restitution_of_damping_ratio(1.0 - 1e-7), std::exp(-2.0), 1e-6);
  EXPECT_NEAR(physics::restitution_of_damping_ratio(1.0 + 1e-7), std::exp(-2.0), 1e-6);
  EXPECT_NEAR(physics::restitution_of_damping_ratio(1e-6), 1.0 - std::acos(-1.0) * 1e-6, 1e-9);
  EXPECT_THROW(ContactLaw(1.0, 0.0, 0.3), std::invalid_argument);
  EXPECT_THROW(ContactLaw(1.0, 1.2, 0.3), std::invalid_argument);
}

TEST(Contact, NormalForceIsMinusEnergyGradient) {
  Rng rng(1);
  const ContactLaw law(2e4, 0.5, 0.4);
  for (int t = 0; t < 50; ++t) {
    Pair s = random_pair(rng, 0.0, 0.0);
    s.vi = s.vj = s.wi = s.wj = kZero;
    const ContactForce f = eval(s, law);
    ASSERT_TRUE(f.active);
    const double h = 1e-7 * s.ri;
    for (int a = 0; a < 3; ++a) {
      Pair p = s, m = s;
      p.pi[a] += h;
      m.pi[a] -= h;
      const double gi = (eval(p, law).energy - eval(m, law).energy) / (2 * h);
      p = s;
      m = s;
      p.pj[a] += h;
      m.pj[a] -= h;
      const double gj = (eval(p, law).energy - eval(m, law).energy) / (2 * h);
      const double scale = law.stiffness * s.ri;
      EXPECT_NEAR(f.fi[a], -gi, 1e-6 * scale);
      EXPECT_NEAR(f.fj[a], -gj, 1e-6 * scale);
    }
    EXPECT_EQ(f.ti, kZero);
    EXPECT_EQ(f.tj, kZero);
    const double delta = s.ri + s.rj - (s.pj - s.pi).norm();
    EXPECT_NEAR(f.energy, 0.5 * law.stiffness * delta * delta, 1e-12 * f.energy);
  }
}

TEST(Contact, NoForceWhenApartOrJustTouching) {
  const ContactLaw law(1e4, 0.7, 0.5);
  const Eigen::Vector3d v(1, 2, 3), w(4, 5, 6);
  for (const double gap : {0.0, 1e-9, 0.5}) {
    const ContactForce f =
        sphere_sphere(kZero, v, w, 0.01, 1e-3, Eigen::Vector3d(0.03 + gap, 0, 0), -v, -w, 0.02, 2e-3, law);
    EXPECT_FALSE(f.active);
    EXPECT_EQ(f.fi, kZero);
    EXPECT_EQ(f.fj, kZero);
    EXPECT_EQ(f.ti, kZero);
    EXPECT_EQ(f.tj, kZero);
    EXPECT_EQ(f.energy, 0.0);
    const ContactForce g = sphere_plane(Eigen::Vector3d(0, 0, 0.01 + gap), v, w, 0.01, 1e-3, kZero,
                                        Eigen::Vector3d::UnitZ(), law);
    EXPECT_FALSE(g.active);
    EXPECT_EQ(g.fi, kZero);
  }
}

TEST(Contact, NeverAttractive) {
  Rng rng(2);
  const ContactLaw law(1e4, 0.3, 0.6);
  long clamped = 0;
  for (int t = 0; t < 2000; ++t) {
    const Pair s = random_pair(rng, 5.0, 300.0);
    const ContactForce f = eval(s, law);
    const Eigen::Vector3d n = (s.pj - s.pi).normalized();
    const double fn = -f.fi.dot(n);  // repulsion on i points away from j
    EXPECT_GE(fn, -1e-12 * f.fi.norm());
    if (fn <= 1e-12 * law.stiffness * s.ri) {
      ++clamped;
      EXPECT_LT(f.fi.norm(), 1e-12);  // no normal force, so no friction either
    }
  }
  EXPECT_GT(clamped, 100);  // fast separations really reached the clamp
}

TEST(Contact, ConservesLinearAndAngularMomentum) {
  Rng rng(3);
  const ContactLaw law(3e4, 0.6, 0.8);
  for (int t = 0; t < 1000; ++t) {
    const Pair s = random_pair(rng, 2.0, 200.0);
    const ContactForce f = eval(s, law);
    ASSERT_TRUE(f.active);
    EXPECT_EQ(f.fi + f.fj, kZero);
    const Eigen::Vector3d L = s.pi.cross(f.fi) + s.pj.cross(f.fj) + f.ti + f.tj;
    const double scale = (s.pi.norm() + s.pj.norm() + s.ri + s.rj) * f.fi.norm();
    EXPECT_LT(L.norm(), 1e-14 * scale + 1e-300);
  }
}

TEST(Contact, FrictionPowerIsMinusCoulombForceTimesSlip) {
  Rng rng(4);
  const ContactLaw law(3e4, 0.6, 0.8);
  long sliding = 0, sticking = 0;
  for (int t = 0; t < 1000; ++t) {
    const Pair s = random_pair(rng, 1.0, 100.0);
    const ContactForce f = eval(s, law);
    const Eigen::Vector3d n = (s.pj - s.pi).normalized();
    const double fn = -f.fi.dot(n);
    const Eigen::Vector3d ft = f.fi + fn * n;
    // Slip at the mid-overlap point.
    const double delta = s.ri + s.rj - (s.pj - s.pi).norm();
    const Eigen::Vector3d slip =
        s.vi + s.wi.cross((s.ri - delta / 2) * n) - s.vj - s.wj.cross(-(s.rj - delta / 2) * n);
    const Eigen::Vector3d vt = slip - slip.dot(n) * n;
    const double power = f.fi.dot(s.vi) + f.fj.dot(s.vj) + f.ti.dot(s.wi) + f.tj.dot(s.wj);
    // Total power = normal part + friction part, and friction takes exactly |F_t| |v_t|.
    EXPECT_NEAR(power, -fn * slip.dot(n) - ft.norm() * vt.norm(), 1e-10 * (std::abs(power) + 1e-12));
    EXPECT_LE(ft.norm(), law.friction * fn * (1 + 1e-12));
    const double viscous = 2.0 * std::sqrt(law.stiffness * s.mi * s.mj / (s.mi + s.mj)) * vt.norm();
    if (viscous < law.friction * fn) {
      ++sticking;
      EXPECT_NEAR(ft.norm(), viscous, 1e-10 * viscous);
    } else {
      ++sliding;
      EXPECT_NEAR(ft.norm(), law.friction * fn, 1e-12 * fn);
    }
  }
  EXPECT_GT(sliding, 10);
  EXPECT_GT(sticking, 10);
}

TEST(Contact, HeadOnCollisionRestitution) {
  // Two spheres meet head on; velocity Verlet with 4000 steps per contact time, as an explicit code would.
  const double ri = 0.01, rj = 0.015, mi = 2e-3, mj = 5e-3, k = 1e4;
  const double meff = mi * mj / (mi + mj);
  const double dt = std::acos(-1.0) * std::sqrt(meff / k) / 4000.0;
  for (const double e : {0.05, 0.3, 0.7, 1.0}) {
    const ContactLaw law(k, e, 0.5);
    Eigen::Vector3d pi(0, 0, 0), pj(0.0251, 0.0, 0.0), vi(1.5, 0, 0), vj(-0.5, 0, 0);
    const double approach = (vi - vj).x();
    ContactForce f = sphere_sphere(pi, vi, kZero, ri, mi, pj, vj, kZero, rj, mj, law);
    bool touched = false;
    for (long step = 0; step < 1000000; ++step) {
      // Half kick, drift, force with the half-step velocities, half kick.
      vi += 0.5 * dt * f.fi / mi;
      vj += 0.5 * dt * f.fj / mj;
      pi += dt * vi;
      pj += dt * vj;
      f = sphere_sphere(pi, vi, kZero, ri, mi, pj, vj, kZero, rj, mj, law);
      vi += 0.5 * dt * f.fi / mi;
      vj += 0.5 * dt * f.fj / mj;
      touched = touched || f.active;
      if (touched && !f.active && (vj - vi).x() > 0) break;
    }
    ASSERT_TRUE(touched);
    const double measured = (vj - vi).x() / approach;
    RecordProperty("e_" + std::to_string(e), std::to_string(measured));
    EXPECT_NEAR(measured, e, 0.02 * e) << "requested e = " << e;
    // Momentum is untouched by the contact.
    EXPECT_NEAR(mi * vi.x() + mj * vj.x(), mi * 1.5 - mj * 0.5, 1e-13);
  }
}

TEST(Contact, SlidingOnAPlaneReachesTheCoulombLimitAgainstTheSlip) {
  const ContactLaw law(5e4, 0.5, 0.35);
  const Eigen::Vector3d normal = Eigen::Vector3d(0.2, -0.3, 1.0).normalized();
  const Eigen::Vector3d point(0.1, 0.2, -0.05);
  const double r = 0.01, m = 4e-3, delta = 0.001;
  const Eigen::Vector3d p = point + (r - delta) * normal;
  Rng rng(5);
  for (int t = 0; t < 100; ++t) {
    Eigen::Vector3d v = rng.vec(1.0);
    v = 10.0 * (v - v.dot(normal) * normal).normalized();  // fast slide: |w × lever| < 0.8 cannot cancel it
    v += rng(-0.05, 0.05) * normal;                         // slightly into or out of the plane
    const Eigen::Vector3d w = rng.vec(50.0);
    const ContactForce f = sphere_plane(p, v, w, r, m, point, normal, law);
    ASSERT_TRUE(f.active);
    const double fn = f.fi.dot(normal);
    const Eigen::Vector3d ft = f.fi - fn * normal;
    const double zeta = law.damping_ratio;
    EXPECT_NEAR(fn, law.stiffness * delta - 2 * zeta * std::sqrt(law.stiffness * m) * v.dot(normal), 1e-10 * fn);
    EXPECT_NEAR(ft.norm(), law.friction * fn, 1e-14 * fn);
    const Eigen::Vector3d lever = -(r - delta) * normal;
    const Eigen::Vector3d slip = v + w.cross(lever);
    const Eigen::Vector3d vt = slip - slip.dot(normal) * normal;
    EXPECT_NEAR(ft.dot(vt), -ft.norm() * vt.norm(), 1e-12 * ft.norm() * vt.norm());  // antiparallel
    EXPECT_LT((f.ti - lever.cross(ft)).norm(), 1e-14 * ft.norm() * r);
    EXPECT_NEAR(f.energy, 0.5 * law.stiffness * delta * delta, 1e-12 * f.energy);
    EXPECT_EQ(f.fj, kZero);
    EXPECT_EQ(f.tj, kZero);
  }
}

TEST(Contact, RollingWithoutSlipFeelsNoFriction) {
  const ContactLaw law(5e4, 0.5, 0.35);
  const double r = 0.01, delta = 2e-4, d = r - delta;
  const Eigen::Vector3d p(0.3, -0.1, d), v(1.2, -0.7, 0.0);
  const Eigen::Vector3d w = Eigen::Vector3d::UnitZ().cross(v) / d;  // v + w × (−d ẑ) = 0
  ASSERT_LT((v + w.cross(Eigen::Vector3d(0, 0, -d))).norm(), 1e-14);
  const ContactForce f = sphere_plane(p, v, w, r, 1e-3, kZero, Eigen::Vector3d::UnitZ(), law);
  ASSERT_TRUE(f.active);
  EXPECT_NEAR(f.fi.z(), law.stiffness * delta, 1e-12);
  EXPECT_LT(f.fi.head<2>().norm(), 1e-12 * f.fi.z());
  EXPECT_LT(f.ti.norm(), 1e-12 * f.fi.z() * r);
}

// Rolling resistance: at a fast relative spin the torque is μ_r F_n r_eff against it, the pair's torques
// cancel (angular momentum), and its power −τ·(ω_i − ω_j) is never positive; μ_r = 0 leaves the torques alone.
TEST(Contact, RollingResistanceOpposesTheRelativeSpinAtTheLimit) {
  Rng rng(8);
  const ContactLaw law(3e4, 0.6, 0.0, 0.2), plain(3e4, 0.6, 0.0);
  for (int t = 0; t < 200; ++t) {
    Pair s = random_pair(rng, 0.0, 0.0);
    s.wi = rng.vec(500.0);
    s.wj = rng.vec(500.0);
    const ContactForce f = eval(s, law), g = eval(s, plain);
    ASSERT_TRUE(f.active);
    EXPECT_EQ(g.ti, kZero);  // no sliding friction, no slip-free torque without μ_r
    const double fn = f.fi.norm();
    const double r_eff = s.ri * s.rj / (s.ri + s.rj);
    const Eigen::Vector3d spin = s.wi - s.wj;
    EXPECT_NEAR(f.ti.norm(), 0.2 * fn * r_eff, 1e-12 * fn * r_eff);
    EXPECT_NEAR(f.ti.dot(spin), -f.ti.norm() * spin.norm(), 1e-12 * f.ti.norm() * spin.norm());
    EXPECT_LT((f.ti + f.tj).norm(), 1e-15 * fn * r_eff);
  }
  // On a plane, about the normal (no slip at the contact point): the whole torque is rolling resistance.
  const double r = 0.01, delta = 1e-4;
  const Eigen::Vector3d w(0, 0, 300.0);
  const ContactForce f = sphere_plane(Eigen::Vector3d(0, 0, r - delta), kZero, w, r, 1e-3, kZero,
                                      Eigen::Vector3d::UnitZ(), law);
  EXPECT_NEAR(f.ti.z(), -0.2 * law.stiffness * delta * r, 1e-12);
  EXPECT_LT(f.ti.head<2>().norm(), 1e-15);
}

TEST(Contact, PlaneActsLikeAHugeHeavySphere) {
  const ContactLaw law(2e4, 0.4, 0.5);
  const Eigen::Vector3d normal = Eigen::Vector3d(1.0, 2.0, -0.5).normalized();
  const double r = 0.01, m = 2e-3, delta = 5e-4, R = 1e4;
  const Eigen::Vector3d point(0.0, 0.1, 0.2);
  const Eigen::Vector3d p = point + (r - delta) * normal;
  const Eigen::Vector3d big = point - R * normal;
  Rng rng(6);
  for (int t = 0; t < 20; ++t) {
    const Eigen::Vector3d v = rng.vec(0.5);
    const ContactForce a = sphere_plane(p, v, kZero, r, m, point, normal, law);
    const ContactForce b = sphere_sphere(p, v, kZero, r, m, big, kZero, kZero, R, 1e30, law);
    ASSERT_TRUE(a.active && b.active);
    EXPECT_LT((a.fi - b.fi).norm(), 1e-9 * a.fi.norm());
    EXPECT_NEAR(a.energy, b.energy, 1e-8 * a.energy);
  }
}

TEST(Contact, CombineUsesGeometricFrictionAndSmallerRestitution) {
  Material a, b;
  a.friction = 0.9;
  a.rolling_friction = 0.08;
  a.restitution = 0.8;
  b.friction = 0.4;
  b.rolling_friction = 0.02;
  b.restitution = 0.5;
  const ContactLaw law = physics::combine(a, b, 123.0);
  EXPECT_EQ(law.stiffness, 123.0);
  EXPECT_NEAR(law.friction, 0.6, 1e-15);
  EXPECT_NEAR(law.rolling_friction, 0.04, 1e-15);
  EXPECT_EQ(law.restitution, 0.5);
  EXPECT_NEAR(physics::restitution_of_damping_ratio(law.damping_ratio), 0.5, 1e-12);
  Obstacle o;
  o.friction = 0.1;
  o.restitution = 0.9;
  const ContactLaw wall = physics::combine(a, o, 7.0);
  EXPECT_NEAR(wall.friction, 0.3, 1e-15);
  EXPECT_EQ(wall.restitution, 0.8);
}

TEST(Obstacle, PlanesOfPlaneAndBox) {
  Obstacle plane;
  plane.point = Eigen::Vector3d(1, 2, 3);
  plane.normal = Eigen::Vector3d(0, 1, 0);
  std::vector<std::pair<Eigen::Vector3d, Eigen::Vector3d>> got;
  geometry::for_each_plane(plane, [&](const Eigen::Vector3d& x, const Eigen::Vector3d& n) { got.emplace_back(x, n); });
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, plane.point);
  EXPECT_EQ(got[0].second, plane.normal);

  Obstacle box;
  box.kind = Obstacle::Kind::Box;
  box.min = Eigen::Vector3d(-1, -2, -3);
  box.max = Eigen::Vector3d(1, 2, 3);
  const ContactLaw law(1e3, 1.0, 0.0);
  const double r = 0.1;
  // A sphere in the min corner overlapping three faces by 0.02 each: pushed inward along +x, +y, +z.
  const Eigen::Vector3d corner = box.min + Eigen::Vector3d::Constant(r - 0.02);
  Eigen::Vector3d total = kZero;
  int planes = 0, active = 0;
  geometry::for_each_plane(box, [&](const Eigen::Vector3d& x, const Eigen::Vector3d& n) {
    ++planes;
    EXPECT_NEAR(n.norm(), 1.0, 1e-15);
    EXPECT_GT((Eigen::Vector3d::Zero() - x).dot(n), 0.0);  // the box centre is on the free side
    const ContactForce f = sphere_plane(corner, kZero, kZero, r, 1.0, x, n, law);
    active += f.active;
    total += f.fi;
  });
  EXPECT_EQ(planes, 6);
  EXPECT_EQ(active, 3);
  EXPECT_LT((total - Eigen::Vector3d::Constant(law.stiffness * 0.02)).norm(), 1e-12);
  // At the centre nothing touches.
  geometry::for_each_plane(box, [&](const Eigen::Vector3d& x, const Eigen::Vector3d& n) {
    EXPECT_FALSE(sphere_plane(kZero, kZero, kZero, r, 1.0, x, n, law).active);
  });
}

}  // namespace test_contact
