#pragma once
// The contacts of pairs with a box (geometry/box.hpp's narrow phase) as the contact finder lists them: each point
// a constraint row, active when gap + dt min(0, approach) <= tolerance × the smaller size, the approach taken at the
// point with both bodies' linear and angular velocities (and `kick` on the moving ones).
#include <Eigen/Core>
#include <vector>

#include "percussion/geometry/box.hpp"
#include "percussion/methods/rigid/contacts.hpp"

namespace percussion::rigid {

geometry::OrientedBox box_of(const BallState& bodies, std::size_t k);

// Bodies in slots i and j (at least one a box; a is the one with the lower global id) into `out`, points numbered
// by `sub` in the narrow phase's order.
void append_box_pair_contacts(const BallState& bodies, std::size_t i, std::size_t j, double tolerance, double dt,
                              const Eigen::Vector3d& kick, std::vector<Contact>& out);

// Box in slot k against a wall (global end id `wall_id`).
void append_box_wall_contacts(const BallState& bodies, std::size_t k, const Wall& wall, std::int64_t wall_id,
                              double tolerance, double dt, const Eigen::Vector3d& kick, std::vector<Contact>& out);

}  // namespace percussion::rigid
