#pragma once
// The touching neighbours of a model's rows across ranks, for bonding at set-up and for the partitioner's graph.
#include <mpi.h>

#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <vector>

#include "percussion/methods/bdem/model.hpp"
#include "percussion/parallel/distributed_items.hpp"

namespace percussion::bdem {

// The model's rows (ascending ids) as items with their positions, radii and an integer tag per row, and as ghosts
// every particle of another rank within touching distance (|x_i − x_j| ≤ (r_i + r_j)(1 + tolerance)) of one of
// them, plus the particles asked for by id with the rank that holds them.
class ModelNeighbours {
 public:
  ModelNeighbours(MPI_Comm comm, const Model& model, std::span<const std::int64_t> tags, double tolerance,
                  std::span<const parallel::DistributedItems::Request> requests = {});
  // Calls f(i, j) for every touching pair with i a row (owned) and j any held slot (row or ghost), each pair of
  // rows once (i < j) and each row–ghost pair once, in an order that depends only on the input.
  void for_each_touching(const std::function<void(std::size_t, std::size_t)>& f) const;

  const parallel::DistributedItems& items() const { return items_; }
  const std::vector<Eigen::Vector3d>& x() const { return x_; }
  const std::vector<double>& radius() const { return radius_; }
  const std::vector<std::int64_t>& tag() const { return tag_; }
  std::int32_t slot(std::int64_t gid) const { return items_.slot(gid); }

 private:
  parallel::DistributedItems items_;
  std::vector<Eigen::Vector3d>& x_;
  std::vector<double>& radius_;
  std::vector<std::int64_t>& tag_;
  double scale_;
};

}  // namespace percussion::bdem
