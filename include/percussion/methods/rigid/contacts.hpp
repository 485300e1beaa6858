#pragma once
// Contacts between balls, boxes and walls at one instant, in the order every operator uses (issue 64 item 3): by (lower
// body index, other body index), a wall counting as larger than every body, walls in scene order. And the
// contact-graph components: dynamic bodies joined by contacts (fixed bodies and walls are not nodes).
#include <Eigen/Core>
#include <cstdint>
#include <span>
#include <vector>

#include "percussion/geometry/cell_list.hpp"
#include "percussion/methods/rigid/scene.hpp"

namespace percussion::rigid {

struct Contact {
  std::int64_t a = 0;   // body index
  std::int64_t b = 0;   // body index (> a), or bodies + wall index
  Eigen::Vector3d normal = Eigen::Vector3d::Zero();  // unit, from a towards b (for a wall: minus its normal)
  double gap = 0;
  Eigen::Vector3d point = Eigen::Vector3d::Zero();  // where it acts: boxes' constraint rows turn about it
  int sub = 0;  // the point's rank among the pair's points (a box pair has several): orders them after (a, b)
};

// The bodies the contacts need, structure of arrays. `id`: each entry's global id (empty: the index is the id).
// Boxes: `half_extents` nonzero (empty or zero: a ball), `orientation` (x, y, z, w, body to world) and
// `angular_velocity` (world) one per body when any is a box; `radius` is then the box's bounding radius.
struct BallState {
  std::vector<Eigen::Vector3d> position, velocity;
  std::vector<double> mass, radius;
  std::vector<char> fixed;
  std::vector<std::int64_t> id;
  std::vector<Eigen::Vector4d> orientation;
  std::vector<Eigen::Vector3d> angular_velocity, half_extents;
  std::size_t size() const { return position.size(); }
  std::int64_t global_id(std::size_t k) const { return id.empty() ? static_cast<std::int64_t>(k) : id[k]; }
  bool is_box(std::size_t k) const { return !half_extents.empty() && half_extents[k][0] > 0; }
  // The length the contact tolerance scales: a ball's radius, a box's smallest half extent.
  double size_of(std::size_t k) const { return is_box(k) ? half_extents[k].minCoeff() : radius[k]; }
  // The fastest a surface point of body k moves (|v| + |ω| r).
  double surface_speed(std::size_t k) const {
    return velocity[k].norm() + (angular_velocity.empty() ? 0.0 : angular_velocity[k].norm() * radius[k]);
  }
};

class ContactFinder {
 public:
  // Active contacts: gap + dt min(0, approach speed) <= tolerance × the smaller size (dt = 0: touching now), the
  // approach taken with every moving body's velocity plus `kick` (what a body force adds before the drift). Pairs of
  // fixed bodies are skipped. Ends are global ids (balls.global_id; wall w is `bodies` + w, bodies = balls.size()
  // when negative), a < b; sorted by (a, b, sub). A pair with a box gets its points from box_contacts.hpp.
  std::vector<Contact> find(const BallState& balls, std::span<const Wall> walls, double tolerance, double dt,
                            const Eigen::Vector3d& kick = Eigen::Vector3d::Zero(), std::int64_t bodies = -1);

 private:
  geometry::CellList cells_;
};

// Components of the contact graph: component c holds bodies body_list[body_start[c] .. body_start[c+1]) ascending
// and contacts contact_list[contact_start[c] ..) in contact order; components ordered by their smallest body.
struct Components {
  std::vector<std::int64_t> body_start, body_list, contact_start, contact_list;
  std::int64_t count() const { return static_cast<std::int64_t>(body_start.size()) - 1; }
};
Components contact_components(const BallState& balls, std::span<const Contact> contacts);

}  // namespace percussion::rigid
