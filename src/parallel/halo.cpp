#include "percussion/parallel/halo.hpp"

#include <algorithm>
#include <array>
#include <cmath>
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

// Cells of a grid with edge h, as integer triples. Coordinates are clamped far out, where a cell's box then
// reaches to infinity, so every test stays conservative.
using Cell = std::array<std::int64_t, 3>;
constexpr std::int64_t kFarCell = std::int64_t{1} << 40;

std::int64_t clamp_cell(std::int64_t i) { return std::clamp(i, -kFarCell, kFarCell); }

Cell cell_of(const Eigen::Vector3d& p, double h) {
  Cell c;
  for (int k = 0; k < 3; ++k) {
    const double f = std::floor(p[k] / h);
    c[k] = !(f > -static_cast<double>(kFarCell)) ? -kFarCell
           : f >= static_cast<double>(kFarCell)  ? kFarCell
                                                  : static_cast<std::int64_t>(f);
  }
  return c;
}

void cell_box(const Cell& c, double h, double* lo, double* hi) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  for (int k = 0; k < 3; ++k) {
    lo[k] = c[k] <= -kFarCell ? -inf : static_cast<double>(c[k]) * h;
    hi[k] = c[k] >= kFarCell ? inf : static_cast<double>(c[k] + 1) * h;
  }
}

// The cells the points occupy, ascending, each once.
std::vector<Cell> occupied_cells(std::span<const Eigen::Vector3d> points, double h) {
  std::vector<Cell> cells;
  cells.reserve(points.size());
  for (const auto& p : points) cells.push_back(cell_of(p, h));
  std::sort(cells.begin(), cells.end());
  cells.erase(std::unique(cells.begin(), cells.end()), cells.end());
  return cells;
}

// Another rank's occupied cells, received as (i, j, k) triples, for within() queries about points whose cells lie
// in [lo, hi] (our items' cells). Where the ring around that range is at most kDenseCells cells, the set is a bitmap
// over it: with about one item per cell and 27 lookups per item, a hash table large enough to hold the cells misses
// the core's cache, where a bitmap of a bit per cell fits in it. Beyond (fragments far apart), an open-addressing
// table (power-of-two size, linear probing).
class CellSet {
 public:
  CellSet(std::span<const std::int64_t> triples, double h, const Cell& lo, const Cell& hi) : h_(h) {
    double cells = 1;
    for (int k = 0; k < 3; ++k) {
      origin_[k] = lo[k] - 1;
      extent_[k] = hi[k] - lo[k] + 3;
      cells *= static_cast<double>(extent_[k]);
    }
    if (cells <= kDenseCells) {
      bits_.assign((static_cast<std::size_t>(cells) + 63) / 64, 0);
      for (std::size_t t = 0; t + 2 < triples.size(); t += 3) {
        const Cell c{triples[t], triples[t + 1], triples[t + 2]};
        if (const std::int64_t i = dense_index(c); i >= 0)
          bits_[static_cast<std::size_t>(i) >> 6] |= std::uint64_t{1} << (i & 63);
      }
      return;
    }
    std::size_t size = 16;
    int bits = 4;
    for (; size < 2 * (triples.size() / 3); size *= 2) ++bits;
    mask_ = size - 1;
    shift_ = 64 - bits;
    slots_.assign(size, Cell{kEmpty, 0, 0});
    for (std::size_t t = 0; t + 2 < triples.size(); t += 3) {
      const Cell c{triples[t], triples[t + 1], triples[t + 2]};
      std::size_t i = slot(c);
      while (slots_[i][0] != kEmpty && !same(slots_[i], c)) i = (i + 1) & mask_;
      slots_[i] = c;
    }
  }

  // Whether a cell of the set lies within sqrt(reach2) <= h of p: only the ring of cells around p's can.
  bool within(const Eigen::Vector3d& p, double reach2) const {
    const Cell c = cell_of(p, h_);
    double lo[3], hi[3];
    for (std::int64_t dz = -1; dz <= 1; ++dz)
      for (std::int64_t dy = -1; dy <= 1; ++dy)
        for (std::int64_t dx = -1; dx <= 1; ++dx) {
          const Cell n{clamp_cell(c[0] + dx), clamp_cell(c[1] + dy), clamp_cell(c[2] + dz)};
          if (!contains(n)) continue;
          cell_box(n, h_, lo, hi);
          if (box_distance2(p, lo, hi) <= reach2) return true;
        }
    return false;
  }

 private:
  static constexpr double kDenseCells = 1 << 26;  // a bitmap of at most 8 MB
  static constexpr std::int64_t kEmpty = std::numeric_limits<std::int64_t>::min();  // below every clamped cell
  // (std::array's == calls memcmp, which the lookups then spent their time in.)
  static bool same(const Cell& a, const Cell& b) { return a[0] == b[0] && a[1] == b[1] && a[2] == b[2]; }
  // The bit of cell c, or −1 outside the bitmap's range.
  std::int64_t dense_index(const Cell& c) const {
    std::int64_t i = 0;
    for (int k = 2; k >= 0; --k) {
      const std::int64_t offset = c[k] - origin_[k];
      if (offset < 0 || offset >= extent_[k]) return -1;
      i = i * extent_[k] + offset;
    }
    return i;
  }
  // The top bits of a multiplicative hash (its low bits mix poorly).
  std::size_t slot(const Cell& c) const {
    const std::uint64_t h = (static_cast<std::uint64_t>(c[0]) * 0x9E3779B97F4A7C15ULL) ^
                            (static_cast<std::uint64_t>(c[1]) * 0xC2B2AE3D27D4EB4FULL) ^
                            (static_cast<std::uint64_t>(c[2]) * 0x165667B19E3779F9ULL);
    return static_cast<std::size_t>((h * 0x9E3779B97F4A7C15ULL) >> shift_);
  }
  bool contains(const Cell& c) const {
    if (!bits_.empty()) {
      const std::int64_t i = dense_index(c);
      return i >= 0 && (bits_[static_cast<std::size_t>(i) >> 6] >> (i & 63) & 1);
    }
    for (std::size_t i = slot(c);; i = (i + 1) & mask_) {
      if (same(slots_[i], c)) return true;
      if (slots_[i][0] == kEmpty) return false;
    }
  }
  double h_;
  Cell origin_{}, extent_{};
  std::vector<std::uint64_t> bits_;
  std::size_t mask_ = 0;
  int shift_ = 60;
  std::vector<Cell> slots_;
};

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

  // 2. Items within the cut-off of another rank's owned items. Once fragments scatter, a rank's bounding box
  // spans the whole body and would ghost nearly everything, so the ranks whose boxes come near ours tell us which
  // cells (edge = cutoff) their items occupy near our box, and an item goes to a rank with one of them in reach.
  std::vector<std::vector<std::int32_t>> send(size_);
  const double c2 = cutoff * cutoff;
  const auto near_box = [&](int r, const double* lo, const double* hi, double reach) {
    const double* other = &box[6 * r];
    if (other[0] > other[3]) return false;  // rank r owns nothing
    for (int k = 0; k < 3; ++k)
      if (other[k] - reach > hi[k] || other[3 + k] + reach < lo[k]) return false;
    return true;
  };
  std::vector<int> near_ranks;
  for (int r = 0; r < size_; ++r)
    if (r != rank_ && n_owned_ > 0 && near_box(r, mine, mine + 3, cutoff)) near_ranks.push_back(r);
  const double edge = cutoff * (1 + 1e-9);  // above the cut-off, so rounding in floor(x / edge) loses no cell
  std::vector<std::vector<std::int64_t>> my_cells(size_);
  Cell cells_lo{}, cells_hi{};  // the range of our items' cells
  if (n_owned_ > 0) {
    cells_lo = cell_of(Eigen::Vector3d(mine[0], mine[1], mine[2]), edge);
    cells_hi = cell_of(Eigen::Vector3d(mine[3], mine[4], mine[5]), edge);
  }
  if (!near_ranks.empty())
    for (const Cell& c : occupied_cells(owned_x, edge)) {
      double lo[3], hi[3];
      cell_box(c, edge, lo, hi);
      for (int r : near_ranks)
        if (near_box(r, lo, hi, cutoff)) my_cells[r].insert(my_cells[r].end(), c.begin(), c.end());
    }
  std::vector<int> cell_counts;
  const std::vector<std::int64_t> their_cells = alltoallv_int64(comm_, my_cells, cell_counts);
  std::size_t at_cell = 0;
  for (int r = 0; r < size_; ++r) {
    const std::size_t begin = at_cell;
    at_cell += static_cast<std::size_t>(cell_counts[r]);
    if (begin == at_cell) continue;
    const CellSet theirs(std::span<const std::int64_t>(their_cells).subspan(begin, at_cell - begin), edge, cells_lo,
                         cells_hi);
    const double* lo = &box[6 * r];
    for (std::size_t i = 0; i < n_owned_; ++i)
      if (box_distance2(owned_x[i], lo, lo + 3) <= c2 && theirs.within(owned_x[i], c2))
        send[r].push_back(static_cast<std::int32_t>(i));
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

std::vector<std::int32_t> Halo::sent_slots() const {
  std::vector<std::int32_t> all;
  for (const auto& list : send_idx_) all.insert(all.end(), list.begin(), list.end());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
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
