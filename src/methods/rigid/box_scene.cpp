// Boxes in a rigid scene: reading a "box" entry, and the gaps that check none overlaps a body or a wall.
#include <algorithm>
#include <cmath>

#include "percussion/core/json_checker.hpp"
#include "percussion/geometry/box.hpp"
#include "percussion/methods/rigid/scene.hpp"

namespace percussion::rigid {

void parse_box(const JsonChecker& b, int dim, std::vector<Ball>& out) {
  b.expect_object({"type", "half_extents", "position", "orientation", "velocity", "angular_velocity", "mass",
                   "density", "fixed"});
  if (dim != 3) b.fail_at("type", "boxes need \"dimension\": 3");
  Ball box;
  const auto extents = b.at("half_extents").as_array();
  if (extents.size() != 3) b.fail_at("half_extents", "expected 3 numbers");
  for (int i = 0; i < 3; ++i) box.half_extents[i] = extents[i].as_number(Range::positive());
  box.position = b.vector3("position");
  box.velocity = b.vector3_or("velocity", Eigen::Vector3d::Zero());
  box.angular_velocity = b.vector3_or("angular_velocity", Eigen::Vector3d::Zero());
  if (const auto q = b.find("orientation")) {
    const auto items = q->as_array();
    if (items.size() != 4) q->fail("expected a quaternion of 4 numbers (x, y, z, w)");
    for (int i = 0; i < 4; ++i) box.orientation[i] = items[i].as_number();
    if (!(box.orientation.norm() > 0)) q->fail("must not be zero");
    box.orientation /= box.orientation.norm();  // any length: the rotation is what matters
  }
  if (b.has("mass") && b.has("density")) b.fail("give \"mass\" or \"density\", not both");
  const double volume = 8.0 * box.half_extents.prod();
  box.mass = b.has("density") ? b.number("density", Range::positive()) * volume : b.number_or("mass", 1.0,
                                                                                             Range::positive());
  box.radius = box.half_extents.norm();
  box.fixed = b.boolean_or("fixed", false);
  if (box.fixed) box.velocity = box.angular_velocity = Eigen::Vector3d::Zero();
  box.pointer = b.pointer();
  out.push_back(box);
}

namespace {

geometry::OrientedBox shape(const Ball& b) {
  return geometry::OrientedBox::from_quaternion(b.position, b.orientation, b.half_extents);
}

}  // namespace

double box_wall_gap(const Ball& box, const Wall& wall) {
  double gap = INFINITY;
  for (const auto& p : geometry::box_plane_contacts(shape(box), wall.point, wall.normal, 0.0))
    gap = std::min(gap, p.gap);
  return gap;
}

double box_pair_gap(const Ball& a, const Ball& b) {
  double gap = INFINITY;
  if (a.is_box() && b.is_box()) {
    for (const auto& p : geometry::box_box_contacts(shape(a), shape(b), 0.0)) gap = std::min(gap, p.gap);
  } else if (const auto p = a.is_box() ? geometry::box_ball_contact(shape(a), b.position, b.radius, 0.0)
                                       : geometry::box_ball_contact(shape(b), a.position, a.radius, 0.0)) {
    gap = p->gap;
  }
  return gap;
}

}  // namespace percussion::rigid
