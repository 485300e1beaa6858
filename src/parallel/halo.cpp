#include "percussion/parallel/halo.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace percussion::parallel {
namespace {

// Alltoallv of int64 lists: returns the concatenation of what every rank sent us, and per-source counts.
std::vector<std::int64_t> alltoallv_int64(MPI_Comm comm, const std::vector<std::vector<std::int64_t>>& out,
                                          std::vector<int>& recv_counts) {
  int size = static_cast<int>(out.size());
  std::vector<int> send_counts(size), sdispl(size + 1, 0), rdispl(size + 1, 0);
  std::vector<std::int64_t> sendbuf;
  for (int r = 0; r < size; ++r) {
    send_counts[r] = static_cast<int>(out[r].size());
    sdispl[r + 1] = sdispl[r] + send_counts[r];
    sendbuf.insert(sendbuf.end(), out[r].begin(), out[r].end());
  }
  recv_counts.assign(size, 0);
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm);
  for (int r = 0; r < size; ++r) rdispl[r + 1] = rdispl[r] + recv_counts[r];
  std::vector<std::int64_t> recvbuf(rdispl[size]);
  MPI_Alltoallv(sendbuf.data(), send_counts.data(), sdispl.data(), MPI_INT64_T, recvbuf.data(), recv_counts.data(),
                rdispl.data(), MPI_INT64_T, comm);
  return recvbuf;
}

double box_distance2(const Eigen::Vector3d& p, const double* lo, const double* hi) {
  double d2 = 0;
  for (int k = 0; k < 3; ++k) {
    double d = std::max({lo[k] - p[k], 0.0, p[k] - hi[k]});
    d2 += d * d;
  }
  return d2;
}

}  // namespace

Halo::Halo(MPI_Comm comm) : comm_(comm) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

void Halo::build(std::span<const Eigen::Vector3d> owned_x, std::span<const std::int64_t> owned_gid, double cutoff,
                 std::span<const Request> requests) {
  n_owned_ = owned_x.size();
  owned_index_.clear();
  owned_index_.reserve(n_owned_ * 2);
  for (std::size_t i = 0; i < n_owned_; ++i) owned_index_.emplace(owned_gid[i], static_cast<std::int32_t>(i));

  // 1. Bounding boxes of every rank's owned items.
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> box(6 * size_);
  double mine[6] = {inf, inf, inf, -inf, -inf, -inf};
  for (const auto& p : owned_x)
    for (int k = 0; k < 3; ++k) {
      mine[k] = std::min(mine[k], p[k]);
      mine[3 + k] = std::max(mine[3 + k], p[k]);
    }
  MPI_Allgather(mine, 6, MPI_DOUBLE, box.data(), 6, MPI_DOUBLE, comm_);

  // 2. Items within the cut-off of another rank's box.
  std::vector<std::vector<std::int32_t>> send(size_);
  const double c2 = cutoff * cutoff;
  for (int r = 0; r < size_; ++r) {
    if (r == rank_ || n_owned_ == 0) continue;
    const double* lo = &box[6 * r];
    const double* hi = lo + 3;
    if (lo[0] > hi[0]) continue;  // rank r owns nothing
    // Skip ranks whose inflated box misses ours entirely.
    bool overlap = true;
    for (int k = 0; k < 3; ++k)
      if (lo[k] - cutoff > mine[3 + k] || hi[k] + cutoff < mine[k]) overlap = false;
    if (!overlap) continue;
    for (std::size_t i = 0; i < n_owned_; ++i)
      if (box_distance2(owned_x[i], lo, hi) <= c2) send[r].push_back(static_cast<std::int32_t>(i));
  }

  // 3. Explicit requests (bond partners), routed to their owners.
  std::vector<std::vector<std::int64_t>> req(size_);
  for (const auto& q : requests)
    if (q.owner != rank_) req[q.owner].push_back(q.gid);
  std::vector<int> req_counts;
  std::vector<std::int64_t> asked = alltoallv_int64(comm_, req, req_counts);
  std::size_t at = 0;
  for (int r = 0; r < size_; ++r)
    for (int k = 0; k < req_counts[r]; ++k, ++at) {
      auto it = owned_index_.find(asked[at]);
      if (it == owned_index_.end())
        throw std::logic_error("halo: rank " + std::to_string(r) + " requested item " + std::to_string(asked[at]) +
                               " from rank " + std::to_string(rank_) + ", which does not own it");
      send[r].push_back(it->second);
    }

  // 4. Ascending, unique: owned slots are in gid order, so ghosts arrive in gid order per source.
  send_idx_.assign(size_, {});
  std::vector<std::vector<std::int64_t>> send_gid(size_);
  for (int r = 0; r < size_; ++r) {
    auto& s = send[r];
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    send_idx_[r] = s;
    for (auto i : s) send_gid[r].push_back(owned_gid[i]);
  }
  std::vector<int> counts;
  ghost_gid_ = alltoallv_int64(comm_, send_gid, counts);
  ghost_owner_.clear();
  recv_count_.assign(size_, 0);
  recv_offset_.assign(size_ + 1, 0);
  for (int r = 0; r < size_; ++r) {
    recv_count_[r] = counts[r];
    recv_offset_[r + 1] = recv_offset_[r] + counts[r];
    ghost_owner_.insert(ghost_owner_.end(), counts[r], r);
  }
  neighbours_.clear();
  for (int r = 0; r < size_; ++r)
    if (r != rank_ && (!send_idx_[r].empty() || recv_count_[r] > 0)) neighbours_.push_back(r);
  reverse_targets_.clear();
  rev_send_entries_.assign(size_, {});
  rev_neighbours_.clear();
}

void Halo::exchange_fixed(const std::vector<std::vector<std::int32_t>>& send_lists, std::span<const Field> fields,
                          std::size_t) {
  int width = 0;
  for (const auto& f : fields) width += f.stride;
  std::size_t send_total = 0;
  for (int r : neighbours_) send_total += send_lists[r].size();
  sendbuf_.resize(send_total * width);
  recvbuf_.resize(ghost_gid_.size() * width);
  std::vector<MPI_Request> reqs;
  reqs.reserve(2 * neighbours_.size());
  for (int r : neighbours_) {
    std::size_t n = recv_count_[r];
    if (n == 0) continue;
    reqs.emplace_back();
    MPI_Irecv(recvbuf_.data() + recv_offset_[r] * width, static_cast<int>(n * width), MPI_DOUBLE, r, 71, comm_,
              &reqs.back());
  }
  std::size_t at = 0;
  for (int r : neighbours_) {
    const auto& list = send_lists[r];
    if (list.empty()) continue;
    double* start = sendbuf_.data() + at;
    for (auto i : list)
      for (const auto& f : fields)
        for (int c = 0; c < f.stride; ++c) sendbuf_[at++] = f.data[static_cast<std::size_t>(i) * f.stride + c];
    reqs.emplace_back();
    MPI_Isend(start, static_cast<int>(list.size() * width), MPI_DOUBLE, r, 71, comm_, &reqs.back());
  }
  MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
  const std::size_t base = n_owned_;
  std::size_t k = 0;
  for (std::size_t g = 0; g < ghost_gid_.size(); ++g)
    for (const auto& f : fields)
      for (int c = 0; c < f.stride; ++c) f.data[(base + g) * f.stride + c] = recvbuf_[k++];
}

void Halo::forward(std::initializer_list<Field> fields) {
  exchange_fixed(send_idx_, std::span<const Field>(fields.begin(), fields.size()), ghost_gid_.size());
}

void Halo::forward(std::span<int> data) {
  // Small integers travel exactly as doubles; this runs only at rebuilds.
  std::vector<double> tmp(data.size());
  for (std::size_t i = 0; i < data.size(); ++i) tmp[i] = data[i];
  forward({Field{tmp.data(), 1}});
  for (std::size_t i = n_owned_; i < data.size(); ++i) data[i] = static_cast<int>(tmp[i]);
}

void Halo::set_reverse(std::span<const std::int32_t> ghost_index, std::span<const std::int64_t> tag) {
  rev_send_entries_.assign(size_, {});
  std::vector<std::vector<std::int64_t>> out(size_);
  for (std::size_t e = 0; e < ghost_index.size(); ++e) {
    int owner = ghost_owner_[ghost_index[e]];
    rev_send_entries_[owner].push_back(static_cast<std::int32_t>(e));
    out[owner].push_back(ghost_gid_[ghost_index[e]]);
    out[owner].push_back(tag[e]);
  }
  std::vector<int> counts;
  std::vector<std::int64_t> in = alltoallv_int64(comm_, out, counts);
  reverse_targets_.clear();
  rev_recv_count_.assign(size_, 0);
  rev_recv_offset_.assign(size_ + 1, 0);
  std::size_t at = 0;
  for (int r = 0; r < size_; ++r) {
    rev_recv_count_[r] = counts[r] / 2;
    rev_recv_offset_[r + 1] = rev_recv_offset_[r] + rev_recv_count_[r];
    for (std::size_t k = 0; k < rev_recv_count_[r]; ++k, at += 2) {
      auto it = owned_index_.find(in[at]);
      if (it == owned_index_.end()) throw std::logic_error("halo: reverse entry for an item this rank does not own");
      reverse_targets_.push_back({it->second, in[at + 1]});
    }
  }
  rev_neighbours_.clear();
  for (int r = 0; r < size_; ++r)
    if (r != rank_ && (!rev_send_entries_[r].empty() || rev_recv_count_[r] > 0)) rev_neighbours_.push_back(r);
}

void Halo::reverse(std::span<const double> send, int width, std::vector<double>& recv) {
  recv.resize(reverse_targets_.size() * width);
  std::size_t send_total = 0;
  for (int r : rev_neighbours_) send_total += rev_send_entries_[r].size();
  sendbuf_.resize(send_total * width);
  std::vector<MPI_Request> reqs;
  reqs.reserve(2 * rev_neighbours_.size());
  for (int r : rev_neighbours_) {
    std::size_t n = rev_recv_count_[r];
    if (n == 0) continue;
    reqs.emplace_back();
    MPI_Irecv(recv.data() + rev_recv_offset_[r] * width, static_cast<int>(n * width), MPI_DOUBLE, r, 72, comm_,
              &reqs.back());
  }
  std::size_t at = 0;
  for (int r : rev_neighbours_) {
    const auto& entries = rev_send_entries_[r];
    if (entries.empty()) continue;
    double* start = sendbuf_.data() + at;
    for (auto e : entries)
      for (int c = 0; c < width; ++c) sendbuf_[at++] = send[static_cast<std::size_t>(e) * width + c];
    reqs.emplace_back();
    MPI_Isend(start, static_cast<int>(entries.size() * width), MPI_DOUBLE, r, 72, comm_, &reqs.back());
  }
  MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
}

}  // namespace percussion::parallel
