#include "percussion/parallel/ghost_search.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>

#include "percussion/parallel/messages.hpp"

namespace percussion::parallel {
namespace {

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

// An occupied cell and the largest reach of the items in it: what a rank tells its neighbours.
// Cells above level 0 carry their items' bounding box: a big item's cell is large next to the smallest items,
// which would otherwise be ghosted for coming near an empty corner of it. (Level 0 keeps the whole cell: with one
// reach for all, that is the halo as it always was.)
struct ReachCell {
  int level;
  Cell c;
  double reach;
  double lo[3], hi[3];  // the items' bounding box
};

// An occupied cell's box: the whole cell on level 0, its items' bounding box above.
void occupied_box(const ReachCell& rc, double h, double* lo, double* hi) {
  if (rc.level == 0) return cell_box(rc.c, h, lo, hi);
  std::copy_n(rc.lo, 3, lo);
  std::copy_n(rc.hi, 3, hi);
}

// The grid levels: level L holds the items of reach in (base 2^(L-1), base 2^L] (level 0: up to base), on a grid
// of edge 2 base 2^L (a hair more, so rounding in floor(x / h) loses no cell). A small item is thus looked for in
// small cells, not in cells sized for the largest item; with one reach for all there is one level, of edge 2ρ.
struct Levels {
  double base = 0;
  int level(double reach) const {
    int l = 0;
    while (reach > base * std::ldexp(1.0, l)) ++l;
    return l;
  }
  double edge(int l) const { return 2 * (base * std::ldexp(1.0, l)) * (1 + 1e-9); }
};

// The cells the items occupy, by level and cell, each once with its largest reach.
std::vector<ReachCell> occupied_cells(std::span<const Eigen::Vector3d> points, std::span<const double> reach,
                                      const Levels& levels) {
  std::vector<ReachCell> cells;
  cells.reserve(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    const double r = reach.size() == 1 ? reach[0] : reach[i];
    const int l = levels.level(r);
    const Eigen::Vector3d& p = points[i];
    cells.push_back({l, cell_of(p, levels.edge(l)), r, {p[0], p[1], p[2]}, {p[0], p[1], p[2]}});
  }
  const auto key = [](const ReachCell& a) { return std::tie(a.level, a.c); };
  std::sort(cells.begin(), cells.end(), [&](const ReachCell& a, const ReachCell& b) { return key(a) < key(b); });
  std::size_t n = 0;
  for (std::size_t k = 0; k < cells.size(); ++k) {
    if (n > 0 && key(cells[n - 1]) == key(cells[k])) {
      ReachCell& into = cells[n - 1];
      into.reach = std::max(into.reach, cells[k].reach);
      for (int d = 0; d < 3; ++d) {
        into.lo[d] = std::min(into.lo[d], cells[k].lo[d]);
        into.hi[d] = std::max(into.hi[d], cells[k].hi[d]);
      }
    } else
      cells[n++] = cells[k];
  }
  cells.resize(n);
  return cells;
}

// Another rank's occupied cells of one level, for within() queries about points whose cells lie in [lo, hi] (our
// items' cells on that grid) and whose reach needs at most `margin` rings of cells around them. Where that range
// with its margin is at most kDenseCells cells, membership is a bitmap over it (a hash table of the same cells
// missed the cache on a torn cloth); beyond (fragments far apart), an open-addressing table. The cells' reaches are
// one number when they are all equal, else looked up only for the cells that are present.
class CellSet {
 public:
  CellSet(std::span<const ReachCell> cells, double h, const Cell& lo, const Cell& hi, std::int64_t margin)
      : h_(h), cells_(cells) {
    uniform_ = !cells.empty() ? cells[0].reach : 0;
    for (const ReachCell& rc : cells) {
      uniform_reach_ = uniform_reach_ && rc.reach == uniform_;
      largest_ = std::max(largest_, rc.reach);
    }
    detailed_ = !uniform_reach_ || (!cells.empty() && cells[0].level > 0);
    double count = 1;
    for (int k = 0; k < 3; ++k) {
      origin_[k] = lo[k] - margin;
      extent_[k] = hi[k] - lo[k] + 1 + 2 * margin;
      count *= static_cast<double>(extent_[k]);
    }
    if (count <= kDenseCells) {
      bits_.assign((static_cast<std::size_t>(count) + 63) / 64, 0);
      for (std::size_t k = 0; k < cells.size(); ++k)
        if (const std::int64_t i = dense_index(cells[k].c); i >= 0) {
          bits_[static_cast<std::size_t>(i) >> 6] |= std::uint64_t{1} << (i & 63);
          if (detailed_) dense_cell_.push_back({i, static_cast<std::int64_t>(k)});
        }
      std::sort(dense_cell_.begin(), dense_cell_.end());
      return;
    }
    std::size_t size = 16;
    int bits = 4;
    for (; size < 2 * cells.size(); size *= 2) ++bits;
    mask_ = size - 1;
    shift_ = 64 - bits;
    slots_.assign(size, Cell{kEmpty, 0, 0});
    slot_cell_.assign(size, 0);
    for (std::size_t k = 0; k < cells.size(); ++k) {
      std::size_t i = slot(cells[k].c);
      while (slots_[i][0] != kEmpty && !same(slots_[i], cells[k].c)) i = (i + 1) & mask_;
      slots_[i] = cells[k].c;
      slot_cell_[i] = static_cast<std::int64_t>(k);
    }
  }

  // The rings of cells around a point that can hold a cell within reach + ρ_C of it (1 when reach ≤ ρ_C).
  std::int64_t rings(double reach) const {
    return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil((reach + largest_) / h_)));
  }

  // Whether a cell C of the set lies within reach + ρ_C of p: only the rings of cells around p's can. A big item
  // among small cells has many rings; past as many lookups as there are cells, it tests the cells one by one.
  bool within(const Eigen::Vector3d& p, double reach) const {
    const std::int64_t k = rings(reach);
    double lo[3], hi[3];
    const double reach2_uniform = (reach + uniform_) * (reach + uniform_);
    const auto reach2 = [&](double cell_reach) {
      return uniform_reach_ ? reach2_uniform : (reach + cell_reach) * (reach + cell_reach);
    };
    if (std::pow(2.0 * static_cast<double>(k) + 1, 3) > static_cast<double>(cells_.size())) {
      for (const ReachCell& rc : cells_) {
        occupied_box(rc, h_, lo, hi);
        if (box_distance2(p, lo, hi) <= reach2(rc.reach)) return true;
      }
      return false;
    }
    const Cell c = cell_of(p, h_);
    for (std::int64_t dz = -k; dz <= k; ++dz)
      for (std::int64_t dy = -k; dy <= k; ++dy)
        for (std::int64_t dx = -k; dx <= k; ++dx) {
          const Cell n{clamp_cell(c[0] + dx), clamp_cell(c[1] + dy), clamp_cell(c[2] + dz)};
          const ReachCell* rc = nullptr;
          if (!contains(n, rc)) continue;
          if (rc)
            occupied_box(*rc, h_, lo, hi);
          else
            cell_box(n, h_, lo, hi);
          if (box_distance2(p, lo, hi) <= reach2(rc ? rc->reach : uniform_)) return true;
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
  // Whether c is in the set; rc gets its entry where the set is detailed (reaches differ or boxes are tight).
  bool contains(const Cell& c, const ReachCell*& rc) const {
    if (!bits_.empty()) {
      const std::int64_t i = dense_index(c);
      if (i < 0 || !(bits_[static_cast<std::size_t>(i) >> 6] >> (i & 63) & 1)) return false;
      if (detailed_)
        rc = &cells_[static_cast<std::size_t>(
            std::lower_bound(dense_cell_.begin(), dense_cell_.end(), std::pair<std::int64_t, std::int64_t>{i, -1})
                ->second)];
      return true;
    }
    for (std::size_t i = slot(c);; i = (i + 1) & mask_) {
      if (same(slots_[i], c)) {
        if (detailed_) rc = &cells_[static_cast<std::size_t>(slot_cell_[i])];
        return true;
      }
      if (slots_[i][0] == kEmpty) return false;
    }
  }
  double h_;
  std::span<const ReachCell> cells_;
  double uniform_ = 0, largest_ = 0;
  bool uniform_reach_ = true, detailed_ = false;
  Cell origin_{}, extent_{};
  std::vector<std::uint64_t> bits_;
  std::vector<std::pair<std::int64_t, std::int64_t>> dense_cell_;  // (bit, index into cells_), when detailed
  std::size_t mask_ = 0;
  int shift_ = 60;
  std::vector<Cell> slots_;
  std::vector<std::int64_t> slot_cell_;
};

}  // namespace

std::vector<std::vector<std::int32_t>> ghosts_by_reach(MPI_Comm comm, std::span<const Eigen::Vector3d> x,
                                                       std::span<const double> reach) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const std::size_t n = x.size();
  const auto reach_of = [&](std::size_t i) { return reach.size() == 1 ? reach[0] : reach[i]; };

  // 1. Bounding boxes of every rank's items, their largest reach and their smallest positive one.
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> box(8 * static_cast<std::size_t>(size));
  double mine[8] = {inf, inf, inf, -inf, -inf, -inf, 0, inf};
  for (std::size_t i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k) {
      mine[k] = std::min(mine[k], x[i][k]);
      mine[3 + k] = std::max(mine[3 + k], x[i][k]);
    }
    const double r = reach_of(i);
    mine[6] = std::isfinite(r) && r >= 0 ? std::max(mine[6], r) : inf;  // inf: every rank then throws
    if (r > 0) mine[7] = std::min(mine[7], r);
  }
  MPI_Allgather(mine, 8, MPI_DOUBLE, box.data(), 8, MPI_DOUBLE, comm);
  for (int r = 0; r < size; ++r)
    if (!std::isfinite(box[8 * r + 6]))
      throw std::invalid_argument("ghost search: rank " + std::to_string(r) +
                                  " has an item whose reach is not a finite number >= 0");
  Levels levels{inf};
  for (int r = 0; r < size; ++r) levels.base = std::min(levels.base, box[8 * r + 7]);
  std::vector<std::vector<std::int32_t>> send(static_cast<std::size_t>(size));
  if (!(levels.base < inf)) return send;  // no item reaches beyond its own point

  // 2. The ranks whose boxes come near ours get the cells our items occupy near their box.
  const auto near_box = [&](int r, const double* lo, const double* hi, double within) {
    const double* other = &box[8 * r];
    if (other[0] > other[3]) return false;  // rank r owns nothing
    const double d = within + other[6];
    for (int k = 0; k < 3; ++k)
      if (other[k] - d > hi[k] || other[3 + k] + d < lo[k]) return false;
    return true;
  };
  std::vector<int> near_ranks;
  for (int r = 0; r < size; ++r)
    if (r != rank && n > 0 && near_box(r, mine, mine + 3, mine[6])) near_ranks.push_back(r);
  std::vector<std::vector<ReachCell>> my_cells(static_cast<std::size_t>(size));
  if (!near_ranks.empty())
    for (const ReachCell& rc : occupied_cells(x, reach, levels)) {
      double lo[3], hi[3];
      occupied_box(rc, levels.edge(rc.level), lo, hi);
      for (int r : near_ranks)
        if (near_box(r, lo, hi, rc.reach)) my_cells[r].push_back(rc);
    }
  std::vector<int> cell_counts;
  const std::vector<ReachCell> their_cells = all_to_all(comm, my_cells, cell_counts);

  // 3. Our items within reach of one of those cells, level by level (each rank's cells come sorted by level).
  std::size_t at = 0;
  for (int r = 0; r < size; ++r) {
    const std::size_t end = at + static_cast<std::size_t>(cell_counts[r]);
    const double* lo = &box[8 * r];
    std::vector<char> taken(n, 0);
    while (at < end) {
      const int l = their_cells[at].level;
      std::size_t stop = at;
      while (stop < end && their_cells[stop].level == l) ++stop;
      const double h = levels.edge(l);
      double level_reach = 0;
      for (std::size_t k = at; k < stop; ++k) level_reach = std::max(level_reach, their_cells[k].reach);
      const auto margin =
          std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil((mine[6] + level_reach) / h)));
      const CellSet theirs(std::span<const ReachCell>(their_cells).subspan(at, stop - at), h,
                           cell_of(Eigen::Vector3d(mine[0], mine[1], mine[2]), h),
                           cell_of(Eigen::Vector3d(mine[3], mine[4], mine[5]), h), margin);
      for (std::size_t i = 0; i < n; ++i) {
        if (taken[i]) continue;
        const double ri = reach_of(i), to_box = ri + lo[6];
        if (box_distance2(x[i], lo, lo + 3) <= to_box * to_box && theirs.within(x[i], ri)) taken[i] = 1;
      }
      at = stop;
    }
    for (std::size_t i = 0; i < n; ++i)
      if (taken[i]) send[r].push_back(static_cast<std::int32_t>(i));
  }
  return send;
}

double ghost_cell_edge(double base, int level) { return Levels{base}.edge(level); }
int ghost_level(double base, double reach) { return Levels{base}.level(reach); }

}  // namespace percussion::parallel
