// Impact resolutions with rigid boxes (issue 64): the contact finder's rows and resolve_contacts on random 3D
// packings of balls and boxes with mass ratios up to 1e3 (notes 003 §5 case 18), every operator: terminated,
// n_iᵀv ≥ −eps‖v‖_M, elastic energy to 1e-14, linear and angular momentum kept without walls, impulses ≥ 0 and, in
// one application of the operator, only on violated contacts.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <random>

#include "percussion/geometry/box.hpp"
#include "percussion/methods/rigid/box_contacts.hpp"
#include "percussion/methods/rigid/resolve.hpp"

namespace test_rigid_boxes {

using namespace percussion;
using namespace percussion::rigid;
using Vec = Eigen::Vector3d;

namespace {

struct World {
  BallState bodies;
  std::vector<Wall> walls;
  std::vector<Contact> contacts;  // random_lattice: those touching at the start
};

void add(World& w, const Vec& x, double mass, const Vec& half, double radius) {
  BallState& s = w.bodies;
  s.position.push_back(x);
  s.velocity.push_back(Vec::Zero());
  s.mass.push_back(mass);
  s.radius.push_back(half[0] > 0 ? half.norm() : radius);
  s.fixed.push_back(0);
  s.orientation.emplace_back(0, 0, 0, 1);
  s.angular_velocity.push_back(Vec::Zero());
  s.half_extents.push_back(half);
}

// A side³ cubic lattice of spacing 2: each site a unit ball or a cube of half extent 1 (face to face with its cube
// neighbours: 4 points each), masses 10^(3U), standard normal linear and (boxes) angular velocities; its contacts.
World random_lattice(int side, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(0, 1);
  std::normal_distribution<double> normal;
  World w;
  for (int i = 0; i < side; ++i)
    for (int j = 0; j < side; ++j)
      for (int k = 0; k < side; ++k) {
        const bool box = unit(rng) < 0.5;
        add(w, Vec(2.0 * i, 2.0 * j, 2.0 * k), std::pow(10.0, 3 * unit(rng)), box ? Vec(1, 1, 1) : Vec::Zero(), 1.0);
      }
  for (std::size_t k = 0; k < w.bodies.size(); ++k) {
    w.bodies.velocity[k] = Vec(normal(rng), normal(rng), normal(rng));
    if (w.bodies.is_box(k)) w.bodies.angular_velocity[k] = Vec(normal(rng), normal(rng), normal(rng));
  }
  ContactFinder finder;
  w.contacts = finder.find(w.bodies, {}, 1e-9, 0.0);
  return w;
}

Eigen::Matrix3d world_inertia(const BallState& s, std::size_t k) {
  const Eigen::Matrix3d r = box_of(s, k).axes;
  return r * geometry::box_inertia(s.mass[k], s.half_extents[k]).asDiagonal() * r.transpose();
}

double energy(const BallState& s) {
  double e = 0;
  for (std::size_t k = 0; k < s.size(); ++k) {
    e += 0.5 * s.mass[k] * s.velocity[k].squaredNorm();
    if (s.is_box(k)) e += 0.5 * s.angular_velocity[k].dot(world_inertia(s, k) * s.angular_velocity[k]);
  }
  return e;
}

// Linear momentum and angular momentum about z.
std::pair<Vec, Vec> momenta(const BallState& s, const Vec& z) {
  Vec p = Vec::Zero(), l = Vec::Zero();
  for (std::size_t k = 0; k < s.size(); ++k) {
    p += s.mass[k] * s.velocity[k];
    l += s.mass[k] * (s.position[k] - z).cross(s.velocity[k]);
    if (s.is_box(k)) l += world_inertia(s, k) * s.angular_velocity[k];
  }
  return {p, l};
}

// n_iᵀv for contact c with the gradient normalised in M⁻¹ (notes 003 §2.2's rigid-body formulas).
double slope(const BallState& s, const Contact& c) {
  const std::int64_t n = static_cast<std::int64_t>(s.size());
  double u = 0, k = 0;
  const auto end = [&](std::int64_t b, double sign) {
    if (b >= n || s.fixed[b]) return;
    Vec v = s.velocity[b];
    k += 1.0 / s.mass[b];
    if (s.is_box(b)) {
      const Vec arm = c.point - s.position[b];
      v += s.angular_velocity[b].cross(arm);
      const Vec rn = arm.cross(c.normal);
      k += rn.dot(world_inertia(s, b).inverse() * rn);
    }
    u += sign * c.normal.dot(v);
  };
  end(c.a, -1.0);
  end(c.b, 1.0);
  return u / std::sqrt(k);
}

InstantResult resolve(BallState& bodies, const std::vector<Contact>& contacts, const ImpactSettings& settings) {
  return resolve_contacts(bodies, 3, contacts, contact_components(bodies, contacts), settings);
}

ImpactSettings settings_for(int variant, double eps) {
  ImpactSettings s;
  s.op = variant == 3 ? Operator::generalized_reflections : Operator::gauss_seidel;
  s.order = static_cast<impact::GaussSeidelOrder>(variant % 3);
  s.seed = 5;
  s.resolve.tolerance = eps;
  return s;
}

}  // namespace

TEST(RigidBoxes, ContactRowsOfAStackOnAWall) {
  // Ball 0 on cube 1 on the floor; cube 2 beside cube 1, touching face to face: ball–box 1 point, box–box 4, each
  // cube–floor 4, ordered by (a, b, point).
  World w;
  add(w, {0, 0, 3}, 1.0, Vec::Zero(), 1.0);
  add(w, {0, 0, 1}, 2.0, {1, 1, 1}, 0);
  add(w, {2, 0, 1}, 2.0, {1, 1, 1}, 0);
  w.walls.push_back({{0, 0, 0}, {0, 0, 1}});
  ContactFinder finder;
  const std::vector<Contact> c = finder.find(w.bodies, w.walls, 1e-9, 0.0);
  ASSERT_EQ(c.size(), 1u + 4 + 4 + 4);
  EXPECT_EQ(c[0].a, 0);
  EXPECT_EQ(c[0].b, 1);
  EXPECT_NEAR((c[0].normal - Vec(0, 0, -1)).norm(), 0, 1e-15);  // from the ball (a) down into the cube (b)
  for (int i = 1; i < 5; ++i) {
    EXPECT_EQ(c[i].a, 1);
    EXPECT_EQ(c[i].b, 2);
    EXPECT_EQ(c[i].sub, i - 1);
    EXPECT_NEAR((c[i].normal - Vec(1, 0, 0)).norm(), 0, 1e-15);
  }
  for (int i = 5; i < 13; ++i) {
    EXPECT_EQ(c[i].b, 3);  // the wall: bodies + 0
    EXPECT_EQ(c[i].normal, Vec(0, 0, -1));
  }
  // Sliding at 1 m/s, cube 2 closes its 0.5 gap to cube 1 within a step only when dt is longer than 0.5 s.
  w.walls.clear();
  w.bodies.position[2] = {2.5, 0, 1};
  w.bodies.velocity[2] = {-1, 0, 0};
  EXPECT_EQ(finder.find(w.bodies, {}, 1e-9, 0.4).size(), 1u);  // ball–cube only
  EXPECT_EQ(finder.find(w.bodies, {}, 1e-9, 0.6).size(), 5u);  // and the four face points
}

TEST(RigidBoxes, ACubeFallingFlatBouncesBackElastically) {
  // Four equal corner contacts. Generalized Reflections keep the symmetry: the cube leaves with its normal velocity
  // reversed and no spin. Gauss–Seidel's corner-by-corner reflections may leave it spinning, energy kept.
  World w;
  add(w, {0.3, -0.2, 1}, 2.0, {1, 1, 1}, 0);
  w.bodies.velocity[0] = {0.5, 0, -2};
  w.walls.push_back({{0, 0, 0}, {0, 0, 1}});
  ContactFinder finder;
  const std::vector<Contact> c = finder.find(w.bodies, w.walls, 1e-9, 0.0);
  ASSERT_EQ(c.size(), 4u);
  for (int variant = 0; variant < 4; ++variant) {
    World v = w;
    const InstantResult r = resolve(v.bodies, c, settings_for(variant, 1e-10));
    EXPECT_TRUE(r.terminated) << r.reason;
    EXPECT_NEAR(energy(v.bodies), energy(w.bodies), 1e-14 * energy(w.bodies)) << variant;
    for (const Contact& k : c) EXPECT_GE(slope(v.bodies, k), -1e-10 * std::sqrt(2 * energy(w.bodies))) << variant;
    if (variant < 3) continue;
    EXPECT_NEAR((v.bodies.velocity[0] - Vec(0.5, 0, 2)).norm(), 0, 1e-12);
    EXPECT_NEAR(v.bodies.angular_velocity[0].norm(), 0, 1e-12);
    double total = 0;
    for (double i : r.impulses) total += i;
    EXPECT_NEAR(total, 2.0 * 4, 1e-12);  // m Δv_z
  }
}

TEST(RigidBoxes, InexactTerminationOnRandomPackingsOfBallsAndBoxes) {
  std::mt19937_64 rng(29);
  for (int trial = 0; trial < 8; ++trial) {
    World w = random_lattice(3, rng);
    const std::vector<Contact>& c = w.contacts;
    ASSERT_GT(c.size(), 30u);
    const double eps = trial % 3 == 0 ? 1e-12 : trial % 3 == 1 ? 1e-10 : 1e-8;
    const BallState before = w.bodies;
    const InstantResult r = resolve(w.bodies, c, settings_for(trial % 4, eps));
    ASSERT_TRUE(r.terminated) << r.reason;
    EXPECT_GT(r.reflections + r.iterations, 0);
    const double norm = std::sqrt(2 * energy(w.bodies));
    for (std::size_t i = 0; i < c.size(); ++i) {
      EXPECT_GE(slope(w.bodies, c[i]), -eps * norm * (1 + 1e-9)) << "trial " << trial << " contact " << i;
      EXPECT_GE(r.impulses[i], 0.0);
    }
    const double e0 = energy(before), e1 = energy(w.bodies);
    EXPECT_LE(std::abs(e1 - e0), 1e-14 * e0) << "trial " << trial << ": " << e0 << " -> " << e1;
    const Vec z(1.5, -3, 7);  // any point
    const auto [p0, l0] = momenta(before, z);
    const auto [p1, l1] = momenta(w.bodies, z);
    double scale = 0;  // Σ m|v| (1 + |x − z|): what round-off of the momenta is relative to
    for (std::size_t k = 0; k < before.size(); ++k)
      scale += before.mass[k] * before.velocity[k].norm() * (1 + (before.position[k] - z).norm());
    EXPECT_LE((p1 - p0).norm(), 1e-13 * scale) << trial;
    EXPECT_LE((l1 - l0).norm(), 1e-13 * scale) << trial;
  }
}

TEST(RigidBoxes, OneApplicationPushesOnlyViolatedContacts) {
  // Capped at one reflection (GS) or one QP (GR), the operator's impulses sit on contacts violated at the start.
  std::mt19937_64 rng(3);
  for (int variant = 0; variant < 4; ++variant) {
    World w = random_lattice(3, rng);
    const std::vector<Contact>& c = w.contacts;
    ImpactSettings settings = settings_for(variant, 1e-10);
    settings.anti_locking = false;
    settings.resolve.max_reflections = 1;
    settings.resolve.max_iterations = 1;
    const BallState before = w.bodies;
    const InstantResult r = resolve(w.bodies, c, settings);
    const double e0 = energy(before);
    int pushed = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
      EXPECT_GE(r.impulses[i], 0.0);
      if (r.impulses[i] > 0) {
        ++pushed;
        EXPECT_LT(slope(before, c[i]), 0.0) << "variant " << variant << " contact " << i;
      }
    }
    EXPECT_GT(pushed, 0);
    EXPECT_LE(std::abs(energy(w.bodies) - e0), 1e-14 * e0);
  }
}

}  // namespace test_rigid_boxes
