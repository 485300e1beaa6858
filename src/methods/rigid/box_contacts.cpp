// Contacts of pairs with a box: the narrow phase's points, kept when active within the step.
#include "percussion/methods/rigid/box_contacts.hpp"

#include <algorithm>

#include <Eigen/Geometry>  // cross()

namespace percussion::rigid {

namespace {

// Velocity of body k's material point at p (0 for a fixed body), with the body force's kick.
Eigen::Vector3d point_velocity(const BallState& s, std::size_t k, const Eigen::Vector3d& p,
                               const Eigen::Vector3d& kick) {
  if (s.fixed[k]) return Eigen::Vector3d::Zero();
  Eigen::Vector3d v = s.velocity[k] + kick;
  if (s.is_box(k)) v += s.angular_velocity[k].cross(p - s.position[k]);
  return v;
}

}  // namespace

geometry::OrientedBox box_of(const BallState& bodies, std::size_t k) {
  return geometry::OrientedBox::from_quaternion(bodies.position[k], bodies.orientation[k], bodies.half_extents[k]);
}

void append_box_pair_contacts(const BallState& s, std::size_t i, std::size_t j, double tolerance, double dt,
                              const Eigen::Vector3d& kick, std::vector<Contact>& out) {
  const std::size_t a = s.global_id(i) < s.global_id(j) ? i : j, b = a == i ? j : i;
  const double limit = tolerance * std::min(s.size_of(a), s.size_of(b));
  const auto speed = [&](std::size_t k) { return s.fixed[k] ? 0.0 : s.surface_speed(k) + kick.norm(); };
  const double margin = limit + dt * (speed(a) + speed(b));
  std::vector<geometry::ContactPoint> points;
  if (s.is_box(a) && s.is_box(b)) {
    points = geometry::box_box_contacts(box_of(s, a), box_of(s, b), margin);
  } else if (s.is_box(a)) {
    if (const auto p = geometry::box_ball_contact(box_of(s, a), s.position[b], s.radius[b], margin)) points = {*p};
  } else if (const auto p = geometry::box_ball_contact(box_of(s, b), s.position[a], s.radius[a], margin)) {
    points = {*p};
    points[0].normal = -points[0].normal;  // the narrow phase points from the box (b) to the ball (a)
  }
  int sub = 0;
  for (const geometry::ContactPoint& p : points) {
    const double approach = std::min(0.0, p.normal.dot(point_velocity(s, b, p.point, kick) -
                                                       point_velocity(s, a, p.point, kick)));
    if (p.gap + dt * approach <= limit)
      out.push_back({s.global_id(a), s.global_id(b), p.normal, p.gap, p.point, sub++});
  }
}

void append_box_wall_contacts(const BallState& s, std::size_t k, const Wall& wall, std::int64_t wall_id,
                              double tolerance, double dt, const Eigen::Vector3d& kick, std::vector<Contact>& out) {
  const double limit = tolerance * s.size_of(k);
  const double margin = limit + dt * (s.surface_speed(k) + kick.norm());
  int sub = 0;
  for (const geometry::ContactPoint& p : geometry::box_plane_contacts(box_of(s, k), wall.point, wall.normal, margin)) {
    const double approach = std::min(0.0, wall.normal.dot(point_velocity(s, k, p.point, kick)));
    if (p.gap + dt * approach <= limit) out.push_back({s.global_id(k), wall_id, p.normal, p.gap, p.point, sub++});
  }
}

}  // namespace percussion::rigid
