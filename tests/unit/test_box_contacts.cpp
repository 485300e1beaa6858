// The box narrow phase on configurations whose contacts are known exactly: face on face (4 points), edge across
// edge, a corner on a face, a ball at a face, an edge and a corner of a box, a box on a wall.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>

#include "percussion/geometry/box.hpp"

namespace test_box_contacts {

using namespace percussion::geometry;
using Vec = Eigen::Vector3d;

namespace {

Eigen::Vector4d about(const Vec& axis, double angle) {
  const Eigen::Quaterniond q(Eigen::AngleAxisd(angle, axis.normalized()));
  return Eigen::Vector4d(q.x(), q.y(), q.z(), q.w());
}

OrientedBox box(const Vec& centre, const Vec& half, const Eigen::Vector4d& q = Eigen::Vector4d(0, 0, 0, 1)) {
  return OrientedBox::from_quaternion(centre, q, half);
}

}  // namespace

TEST(BoxContacts, FaceOnFaceGivesTheFourCornersOfTheSmallerFace) {
  const double g = 1e-3;
  const OrientedBox a = box({0, 0, 0}, {1, 1, 1});
  const OrientedBox b = box({0.1, -0.2, 2 + g}, {0.5, 0.5, 1});
  BoxFeature feature;
  const std::vector<ContactPoint> p = box_box_contacts(a, b, 1e-2, &feature);
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(feature, BoxFeature::face_of_a);
  for (const ContactPoint& c : p) {
    EXPECT_NEAR((c.normal - Vec(0, 0, 1)).norm(), 0, 1e-15);
    EXPECT_NEAR(c.gap, g, 1e-14);
    EXPECT_NEAR(c.point[2], 1 + g / 2, 1e-14);
    EXPECT_NEAR(std::abs(c.point[0] - 0.1), 0.5, 1e-14);
    EXPECT_NEAR(std::abs(c.point[1] + 0.2), 0.5, 1e-14);
  }
  // Seen from b the normal turns round and the points are the same: both faces overlap by as much, and the tie
  // goes to the first box's face, now b's bottom, which the top of a is clipped against.
  const std::vector<ContactPoint> q = box_box_contacts(b, a, 1e-2, &feature);
  ASSERT_EQ(q.size(), 4u);
  EXPECT_EQ(feature, BoxFeature::face_of_a);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_NEAR((q[i].normal - Vec(0, 0, -1)).norm(), 0, 1e-15);
    EXPECT_NEAR(q[i].gap, g, 1e-14);
    EXPECT_NEAR(q[i].point[2], 1 + g / 2, 1e-14);
  }
  // Overlapping by 1e-3: negative gaps. Beyond the margin: nothing.
  for (const ContactPoint& c : box_box_contacts(a, box({0, 0, 2 - g}, {0.5, 0.5, 1}), 0.0))
    EXPECT_NEAR(c.gap, -g, 1e-14);
  EXPECT_TRUE(box_box_contacts(a, box({0, 0, 2.1}, {0.5, 0.5, 1}), 0.05).empty());
}

TEST(BoxContacts, EqualFacesAndATurnedFaceGiveFourPoints) {
  // Two equal cubes stacked exactly: the clipped corners lie on the clipping planes and are not doubled.
  EXPECT_EQ(box_box_contacts(box({0, 0, 0}, {1, 1, 1}), box({0, 0, 2}, {1, 1, 1}), 1e-9).size(), 4u);
  // A small cube turned 30° about z on a large one: its four bottom corners.
  const OrientedBox b = box({0, 0, 1.5}, {0.5, 0.5, 0.5}, about(Vec::UnitZ(), M_PI / 6));
  const std::vector<ContactPoint> p = box_box_contacts(box({0, 0, 0}, {2, 2, 1}), b, 1e-9);
  ASSERT_EQ(p.size(), 4u);
  for (const ContactPoint& c : p) {
    EXPECT_NEAR(c.gap, 0, 1e-15);
    EXPECT_NEAR(std::hypot(c.point[0], c.point[1]), std::sqrt(0.5), 1e-14);
  }
}

TEST(BoxContacts, EdgeAcrossEdgeGivesOnePointBetweenTheEdges) {
  // a turned 45° about y has its top edge along y at z = √2; b turned 45° about x its bottom edge along x.
  const double g = 2e-3, r2 = std::sqrt(2.0);
  const OrientedBox a = box({0, 0, 0}, {1, 1, 1}, about(Vec::UnitY(), M_PI / 4));
  const OrientedBox b = box({0.3, -0.2, 2 * r2 + g}, {1, 1, 1}, about(Vec::UnitX(), M_PI / 4));
  BoxFeature feature;
  const std::vector<ContactPoint> p = box_box_contacts(a, b, 1e-2, &feature);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(feature, BoxFeature::edges);
  EXPECT_NEAR((p[0].normal - Vec(0, 0, 1)).norm(), 0, 1e-14);
  EXPECT_NEAR(p[0].gap, g, 1e-14);
  // a's edge runs along y through x = 0, b's along x through y = -0.2: they cross above (0, -0.2).
  EXPECT_NEAR((p[0].point - Vec(0, -0.2, r2 + g / 2)).norm(), 0, 1e-14);
}

TEST(BoxContacts, CornerOnFaceGivesOnePoint) {
  // b's corner (−1, −1, −1) turned to point straight down, √3 below its centre.
  const Vec down = Vec(-1, -1, -1).normalized();
  const Eigen::Quaterniond turn = Eigen::Quaterniond::FromTwoVectors(down, Vec(0, 0, -1));
  const Eigen::Vector4d q(turn.x(), turn.y(), turn.z(), turn.w());
  const double g = 1e-3;
  const OrientedBox b = box({0.5, 0.25, 1 + std::sqrt(3.0) + g}, {1, 1, 1}, q);
  const std::vector<ContactPoint> p = box_box_contacts(box({0, 0, 0}, {3, 3, 1}), b, 1e-2);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NEAR((p[0].normal - Vec(0, 0, 1)).norm(), 0, 1e-15);
  EXPECT_NEAR(p[0].gap, g, 1e-13);
  EXPECT_NEAR((p[0].point - Vec(0.5, 0.25, 1 + g / 2)).norm(), 0, 1e-13);
}

TEST(BoxContacts, BallAtAFaceAnEdgeACornerAndInside) {
  const double r = 0.5, g = 1e-3;
  // Turned boxes too: the answers are those of the upright box, turned.
  for (const Eigen::Vector4d& q : {Eigen::Vector4d(0, 0, 0, 1), about(Vec(1, 2, 3), 0.7)}) {
    const Eigen::Matrix3d rot = box({0, 0, 0}, {1, 1, 1}, q).axes;
    const Vec centre(0.3, -0.1, 0.2);
    const OrientedBox b = box(centre, {1, 2, 3}, q);
    const auto at = [&](const Vec& local) { return Vec(centre + rot * local); };
    const struct {
      Vec surface, normal;
    } cases[3] = {{{0.2, 0.5, 3}, {0, 0, 1}},                         // face
                  {{1, 2, -1}, Vec(1, 1, 0).normalized()},             // edge along z
                  {{-1, 2, -3}, Vec(-1, 1, -1).normalized()}};         // corner
    for (const auto& c : cases) {
      const auto p = box_ball_contact(b, at(c.surface + (r + g) * c.normal), r, 1e-2);
      ASSERT_TRUE(p.has_value());
      EXPECT_NEAR((p->normal - rot * c.normal).norm(), 0, 1e-14);
      EXPECT_NEAR(p->gap, g, 1e-14);
      EXPECT_NEAR((p->point - at(c.surface + 0.5 * g * c.normal)).norm(), 0, 1e-14);
      EXPECT_FALSE(box_ball_contact(b, at(c.surface + (r + 2e-2) * c.normal), r, 1e-2).has_value());
    }
    // A centre inside, 0.5 below the top face: out through the top, overlapping by 0.5 + r.
    const auto inside = box_ball_contact(b, at({0, 0, 2.5}), r, 0.0);
    ASSERT_TRUE(inside.has_value());
    EXPECT_NEAR((inside->normal - rot * Vec(0, 0, 1)).norm(), 0, 1e-14);
    EXPECT_NEAR(inside->gap, -1.0, 1e-14);
  }
}

TEST(BoxContacts, BoxOnAWallGivesTheCornersWithinTheMargin) {
  const double g = 1e-3;
  const std::vector<ContactPoint> flat = box_plane_contacts(box({0, 0, 1 + g}, {2, 1, 1}), {0, 0, 0}, {0, 0, 1}, 1e-2);
  ASSERT_EQ(flat.size(), 4u);
  for (const ContactPoint& c : flat) {
    EXPECT_EQ(c.normal, Vec(0, 0, -1));
    EXPECT_NEAR(c.gap, g, 1e-15);
    EXPECT_NEAR(c.point[2], g / 2, 1e-15);
  }
  // Tilted 10° about x: one edge (two corners) is lowest, the rest well above the margin.
  const double t = 10 * M_PI / 180;
  const double height = std::cos(t) + std::sin(t);  // centre above the lowest edge for half extents 1 in y and z
  const std::vector<ContactPoint> edge =
      box_plane_contacts(box({0, 0, height + g}, {2, 1, 1}, about(Vec::UnitX(), t)), {0, 0, 0}, {0, 0, 1}, 1e-2);
  ASSERT_EQ(edge.size(), 2u);
  for (const ContactPoint& c : edge) EXPECT_NEAR(c.gap, g, 1e-14);
  EXPECT_NEAR(std::abs(edge[0].point[0]), 2, 1e-14);
  EXPECT_NEAR(edge[0].point[1], edge[1].point[1], 1e-14);
}

TEST(BoxContacts, InertiaOfAUniformBox) {
  // A 2 × 4 × 6 box of mass 3: I_x = m (b² + c²) / 12 with full lengths.
  const Vec i = box_inertia(3.0, {1, 2, 3});
  EXPECT_NEAR(i[0], 3.0 * (16 + 36) / 12, 1e-14);
  EXPECT_NEAR(i[1], 3.0 * (4 + 36) / 12, 1e-14);
  EXPECT_NEAR(i[2], 3.0 * (4 + 16) / 12, 1e-14);
}

}  // namespace test_box_contacts
