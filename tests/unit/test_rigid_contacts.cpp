// Contact order by global ids (issue 64 item 3), predictive activity, and contact-graph components.
#include <gtest/gtest.h>

#include <cmath>

#include "percussion/methods/rigid/contacts.hpp"

namespace test_rigid_contacts {

using namespace percussion::rigid;

namespace {

BallState balls(const std::vector<Eigen::Vector3d>& at, std::vector<char> fixed = {}) {
  BallState s;
  s.position = at;
  s.velocity.assign(at.size(), Eigen::Vector3d::Zero());
  s.mass.assign(at.size(), 1.0);
  s.radius.assign(at.size(), 1.0);
  s.fixed = fixed.empty() ? std::vector<char>(at.size(), 0) : fixed;
  return s;
}

}  // namespace

TEST(RigidContacts, OrderedByLowerBodyThenOtherWithWallsLast) {
  // The mini-geyser of notes 003 §5 case 8: A(-1,0), B(1,0), C(0,-√3), walls x = -2 and x = 2. A–wall0 and
  // B–wall1 touch; A–B, A–C, B–C touch.
  const BallState s = balls({{-1, 0, 0}, {1, 0, 0}, {0, -std::sqrt(3.0), 0}});
  const std::vector<Wall> walls{{{-2, 0, 0}, {1, 0, 0}}, {{2, 0, 0}, {-1, 0, 0}}};
  ContactFinder finder;
  const std::vector<Contact> c = finder.find(s, walls, 1e-9, 0.0);
  ASSERT_EQ(c.size(), 5u);
  const std::int64_t want[5][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 4}};  // A–B, A–C, A–wall0, B–C, B–wall1
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(c[i].a, want[i][0]) << i;
    EXPECT_EQ(c[i].b, want[i][1]) << i;
  }
  EXPECT_NEAR(c[1].normal.dot(Eigen::Vector3d(0.5, -std::sqrt(3.0) / 2, 0)), 1.0, 1e-15);  // from A towards C
  EXPECT_EQ(c[2].normal, Eigen::Vector3d(-1, 0, 0));  // into the wall
  const Components comp = contact_components(s, c);
  ASSERT_EQ(comp.count(), 1);
  EXPECT_EQ(comp.body_list, (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(comp.contact_list, (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
}

TEST(RigidContacts, ApproachWithinAStepIsActiveSeparationIsNot) {
  BallState s = balls({{0, 0, 0}, {2.5, 0, 0}});
  ContactFinder finder;
  s.velocity[0] = {1, 0, 0};  // closes 0.5 in 0.6 s, not in 0.4 s
  EXPECT_EQ(finder.find(s, {}, 1e-9, 0.4).size(), 0u);
  EXPECT_EQ(finder.find(s, {}, 1e-9, 0.6).size(), 1u);
  s.velocity[0] = {-1, 0, 0};  // separating: never
  EXPECT_EQ(finder.find(s, {}, 1e-9, 10.0).size(), 0u);
}

TEST(RigidContacts, FixedBodiesJoinNoComponents) {
  // Two chains 0–1 and 3–4 both touching the fixed ball 2 in the middle: two components, the fixed ball in none.
  const BallState s = balls({{0, 0, 0}, {2, 0, 0}, {4, 0, 0}, {6, 0, 0}, {8, 0, 0}}, {0, 0, 1, 0, 0});
  ContactFinder finder;
  const std::vector<Contact> c = finder.find(s, {}, 1e-9, 0.0);
  ASSERT_EQ(c.size(), 4u);
  const Components comp = contact_components(s, c);
  ASSERT_EQ(comp.count(), 2);
  EXPECT_EQ(comp.body_list, (std::vector<std::int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(comp.body_start, (std::vector<std::int64_t>{0, 2, 4}));
  EXPECT_EQ(comp.contact_start, (std::vector<std::int64_t>{0, 2, 4}));
}

}  // namespace test_rigid_contacts
