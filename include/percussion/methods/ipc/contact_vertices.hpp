#pragma once
// The vertices a rank evaluates contact pairs on: its own surface vertices and copies of other ranks' (notes 002
// §7), each with its global id, global dof index and the rank and mesh-local index it is read from. Positions
// are refreshed from the mesh-local position arrays of the source ranks in one neighbour exchange.
#include <mpi.h>
#include <petscsys.h>

#include <cstdint>
#include <span>
#include <vector>

#include "percussion/parallel/exchange_plan.hpp"

namespace percussion::ipc {

class ContactVertices {
 public:
  struct Entry {
    std::int64_t global_id;
    std::int64_t dof;       // global index of the vertex's first dof (dofs dof .. dof + dim − 1)
    std::int32_t rank;      // source rank
    std::int32_t mesh_index;  // mesh-local vertex on the source rank
  };
  // Collective. positions: dim numbers per entry (their current values).
  void assign(MPI_Comm comm, int dim, std::vector<Entry> entries, std::vector<double> positions);
  // Collective over the neighbours: every entry's position from x (dim per mesh-local vertex of this rank).
  void update(std::span<const double> x) { read(x, positions_); }
  // Collective over the neighbours: any per-vertex field of the mesh-local layout (dim per vertex), per entry.
  void read(std::span<const double> x, std::vector<double>& out) const;

  int dim() const { return dim_; }
  std::size_t size() const { return entries_.size(); }
  const Entry& entry(std::size_t i) const { return entries_[i]; }
  std::span<const double> positions() const { return positions_; }

 private:
  static constexpr int kTag = 6511;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int dim_ = 0, rank_ = 0;
  std::vector<Entry> entries_;
  std::vector<double> positions_;
  std::vector<std::int32_t> own_;      // entries read from this rank
  std::vector<std::int32_t> arrival_;  // entry of each arriving position, in arrival order
  std::vector<std::int32_t> served_;   // mesh-local vertices other ranks read, in the plan's send lists
  parallel::ExchangePlan plan_;
  mutable std::vector<double> received_;  // exchange buffers
  mutable std::vector<std::byte> sendbuf_;
};

}  // namespace percussion::ipc
