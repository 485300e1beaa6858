#pragma once
// The scene's placement check across ranks: each rank holds only its slice of the balls, so overlaps are looked for
// between its owned balls and the ghosts within their reach, and walls against its owned balls.
#include <mpi.h>

#include <Eigen/Core>
#include <span>
#include <vector>

#include "percussion/methods/rigid/scene.hpp"
#include "percussion/parallel/distributed_items.hpp"

namespace percussion::rigid {

// Collective. Balls may touch but not overlap beyond the contact tolerance, and none may reach behind a wall; the
// first problem (a wall before a pair; then the lowest wall and ball, or the lowest pair of ids) throws the same
// InputError "<file>: <pointer>: <what>" on every rank. `position`, `radius`: registered fields of `items`, whose
// ghosts are rebuilt (and every field forwarded).
void check_placement(MPI_Comm comm, const RigidScene& scene, parallel::DistributedItems& items,
                     std::vector<Eigen::Vector3d>& position, std::vector<double>& radius);

}  // namespace percussion::rigid
