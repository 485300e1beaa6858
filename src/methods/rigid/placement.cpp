// The placement check on each rank's slice of the balls and its ghosts.
#include "percussion/methods/rigid/placement.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>

#include "percussion/core/error.hpp"
#include "percussion/geometry/cell_list.hpp"

namespace percussion::rigid {

namespace {

// The lexicographically smallest (x, y) over ranks; (max, max) when no rank has one.
std::pair<std::int64_t, std::int64_t> lowest(MPI_Comm comm, std::int64_t x, std::int64_t y) {
  std::int64_t gx = x;
  MPI_Allreduce(MPI_IN_PLACE, &gx, 1, MPI_INT64_T, MPI_MIN, comm);
  std::int64_t gy = x == gx ? y : std::numeric_limits<std::int64_t>::max();
  MPI_Allreduce(MPI_IN_PLACE, &gy, 1, MPI_INT64_T, MPI_MIN, comm);
  return {gx, gy};
}

// The message of the lowest rank that has one, thrown on every rank.
[[noreturn]] void fail_everywhere(MPI_Comm comm, const std::string& mine) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int from = mine.empty() ? std::numeric_limits<int>::max() : rank;
  MPI_Allreduce(MPI_IN_PLACE, &from, 1, MPI_INT, MPI_MIN, comm);
  int length = rank == from ? static_cast<int>(mine.size()) : 0;
  MPI_Bcast(&length, 1, MPI_INT, from, comm);
  std::string message = rank == from ? mine : std::string(static_cast<std::size_t>(length), ' ');
  MPI_Bcast(message.data(), length, MPI_CHAR, from, comm);
  throw InputError(message);
}

// Body `id` at `position` as the gap functions take it: a box (from the scene, which holds every box), else a ball.
Ball body_at(const RigidScene& scene, std::int64_t id, const Eigen::Vector3d& position, double radius) {
  if (const auto it = scene.boxes.find(id); it != scene.boxes.end()) return it->second;
  Ball b;
  b.position = position;
  b.radius = radius;
  return b;
}

}  // namespace

void check_placement(MPI_Comm comm, const RigidScene& scene, parallel::DistributedItems& items,
                     std::vector<Eigen::Vector3d>& position, std::vector<double>& radius) {
  constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();
  const double tol = scene.impact.contact_tolerance;
  const std::size_t owned = items.owned();
  const std::vector<std::int64_t>& id = items.gids();
  const auto ball = [&](std::int64_t k) {
    return (scene.boxes.count(k) ? "box " : "ball ") + std::to_string(k) + " (" + entry_pointer(scene, k) + ")";
  };

  // Walls first, as the whole-scene check does: the lowest wall, then its lowest ball.
  std::int64_t wall = kNone, behind = kNone;
  double depth = 0;
  for (std::size_t w = 0; w < scene.walls.size() && wall == kNone; ++w)
    for (std::size_t k = 0; k < owned; ++k) {
      const Ball b = body_at(scene, id[k], position[k], radius[k]);
      const double gap = b.is_box() ? box_wall_gap(b, scene.walls[w])
                                    : (position[k] - scene.walls[w].point).dot(scene.walls[w].normal) - radius[k];
      if (gap < -tol * body_size(b) && id[k] < behind) wall = static_cast<std::int64_t>(w), behind = id[k], depth = -gap;
    }
  const auto [w0, k0] = lowest(comm, wall, behind);
  if (w0 != kNone) {
    std::ostringstream o;
    if (wall == w0 && behind == k0)
      o << scene.path << ": /walls/" << w0 << ": " << ball(k0) << " reaches " << depth << " behind wall " << w0;
    fail_everywhere(comm, o.str());
  }

  // Pairs: every ball that can overlap an owned one is a ghost within the sum of their reaches.
  std::vector<double> reach(owned);
  double r_max = 0;
  for (std::size_t k = 0; k < owned; ++k) reach[k] = radius[k], r_max = std::max(r_max, radius[k]);
  MPI_Allreduce(MPI_IN_PLACE, &r_max, 1, MPI_DOUBLE, MPI_MAX, comm);
  items.build_ghosts(std::span<const Eigen::Vector3d>(position.data(), owned), reach);
  const std::size_t n = items.size();
  std::int64_t lo = kNone, hi = kNone;
  double overlap = 0;
  if (n >= 2 && r_max > 0) {
    geometry::CellList cells;
    cells.build(std::span<const Eigen::Vector3d>(position.data(), n), 2.0 * r_max * 1.01);
    cells.for_each_pair(2.0 * r_max, [&](std::size_t i, std::size_t j, double d2) {
      if (i >= owned && j >= owned) return;
      const Ball bi = body_at(scene, id[i], position[i], radius[i]), bj = body_at(scene, id[j], position[j], radius[j]);
      const double gap = bi.is_box() || bj.is_box() ? box_pair_gap(bi, bj) : std::sqrt(d2) - radius[i] - radius[j];
      if (!(gap < -tol * std::min(body_size(bi), body_size(bj)))) return;
      const std::int64_t a = std::min(id[i], id[j]), b = std::max(id[i], id[j]);
      if (std::make_pair(a, b) < std::make_pair(lo, hi)) lo = a, hi = b, overlap = -gap;
    });
  }
  const auto [a0, b0] = lowest(comm, lo, hi);
  if (a0 == kNone) return;
  std::ostringstream o;
  const bool box = scene.boxes.count(a0) || scene.boxes.count(b0);
  if (lo == a0 && hi == b0)
    o << scene.path << ": /bodies: " << (box ? "bodies " : "balls ") << a0 << " (" << entry_pointer(scene, a0)
      << ") and " << b0 << " (" << entry_pointer(scene, b0) << ") overlap by " << overlap
      << " (more than contact_tolerance " << tol << " x the smaller " << (box ? "size)" : "radius)");
  fail_everywhere(comm, o.str());
}

}  // namespace percussion::rigid
