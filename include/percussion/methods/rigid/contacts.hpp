#pragma once
// Contacts between balls and walls at one instant, in the order every operator uses (issue 64 item 3): by (lower
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
};

// The bodies the contacts need, structure of arrays. `id`: each entry's global id (empty: the index is the id).
struct BallState {
  std::vector<Eigen::Vector3d> position, velocity;
  std::vector<double> mass, radius;
  std::vector<char> fixed;
  std::vector<std::int64_t> id;
  std::size_t size() const { return position.size(); }
  std::int64_t global_id(std::size_t k) const { return id.empty() ? static_cast<std::int64_t>(k) : id[k]; }
};

class ContactFinder {
 public:
  // Active contacts: gap + dt min(0, approach speed) <= tolerance × the smaller radius (dt = 0: touching now), the
  // approach taken with every moving ball's velocity plus `kick` (what a body force adds before the drift). Pairs of
  // fixed bodies are skipped. Ends are global ids (balls.global_id; wall w is `bodies` + w, bodies = balls.size()
  // when negative), a < b; sorted by (a, b).
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
