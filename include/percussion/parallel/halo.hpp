#pragma once
// Owned items first, then ghosts: the one routine that moves item data between ranks.
//
// build() decides which owned items every other rank needs as ghosts: all items within `cutoff` of a grid cell
// (edge = cutoff) that one of that rank's items occupies (contact neighbours), plus items it explicitly requests
// (bond partners). forward() copies
// owned values into the ghost slots of the ranks that hold them. The reverse channel carries per-pair results
// computed next to a ghost back to the ghost's owner, entry by entry (never pre-summed), so owners can add
// contributions in a fixed order and results do not depend on the partition.
#include <mpi.h>

#include <Eigen/Core>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <unordered_map>
#include <vector>

namespace percussion::parallel {

class Halo {
 public:
  struct Request { std::int64_t gid; int owner; };
  struct Field { double* data; int stride; };              // an array over owned + ghost items
  struct ReverseTarget { std::int32_t owned; std::int64_t tag; };

  explicit Halo(MPI_Comm comm);

  // Collective. owned_gid must be ascending. Afterwards ghost_gids() lists the ghosts in slot order
  // (slot n_owned + k holds ghost k).
  void build(std::span<const Eigen::Vector3d> owned_x, std::span<const std::int64_t> owned_gid, double cutoff,
             std::span<const Request> requests);

  std::size_t ghost_count() const { return ghost_gid_.size(); }
  const std::vector<std::int64_t>& ghost_gids() const { return ghost_gid_; }
  // The owned slots some other rank holds as ghosts, ascending, each once.
  std::vector<std::int32_t> sent_slots() const;

  // Collective over neighbours: ghost slots receive their owners' current values.
  void forward(std::initializer_list<Field> fields);
  void forward(std::span<int> data);

  // Collective. Entry e will carry values for ghost ghost_index[e] (tagged with `tag[e]`) to that ghost's owner.
  // Owners learn their incoming entries, in arrival order, from reverse_targets().
  void set_reverse(std::span<const std::int32_t> ghost_index, std::span<const std::int64_t> tag);
  const std::vector<ReverseTarget>& reverse_targets() const { return reverse_targets_; }
  // Collective over neighbours: send[e*width ...] for each entry; recv gets reverse_targets().size()*width values.
  void reverse(std::span<const double> send, int width, std::vector<double>& recv);

 private:
  void exchange_fixed(const std::vector<std::vector<std::int32_t>>& send_lists, std::span<const Field> fields,
                      std::size_t recv_total);
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  std::size_t n_owned_ = 0;
  std::unordered_map<std::int64_t, std::int32_t> owned_index_;
  std::vector<std::vector<std::int32_t>> send_idx_;  // per rank: owned slots to send, ascending
  std::vector<std::size_t> recv_count_, recv_offset_;  // per rank: ghost slots received
  std::vector<std::int64_t> ghost_gid_;
  std::vector<int> ghost_owner_;
  std::vector<int> neighbours_;
  // reverse channel
  std::vector<std::vector<std::int32_t>> rev_send_entries_;  // per rank: entry ids in send order
  std::vector<std::size_t> rev_recv_count_, rev_recv_offset_;
  std::vector<ReverseTarget> reverse_targets_;
  std::vector<int> rev_neighbours_;
  std::vector<double> sendbuf_, recvbuf_;
};

}  // namespace percussion::parallel
