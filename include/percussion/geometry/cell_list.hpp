#pragma once
// Uniform grid over a point array: all pairs closer than a cut-off, or all points near a query point.
// Points are sorted (radix sort, O(n)) by cell in (z, y, x) order, so the grid costs O(points) memory however
// far apart the points are (a fragment flying off does not inflate anything), cells of one x-row are
// contiguous, and neighbour cells are reached by merging sorted rows instead of hashing each cell.
// Positions are copied in cell order, so the inner loops read contiguous memory. Storage is reused across
// build() calls and nothing is allocated while enumerating. Visiting order depends only on the input.
//
// A pair is reported iff its squared distance is < cutoff²; pairs within a relative ~1e-13 of the cut-off
// may be missed through round-off in the cell coordinates.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace percussion::geometry {

class CellList {
 public:
  // cell_size > 0; best slightly above the cut-offs used later (one ring of neighbour cells then suffices).
  void build(std::span<const Eigen::Vector3d> points, double cell_size);

  std::size_t size() const { return index_.size(); }
  double cell_size() const { return h_; }

  // f(i, j, dist2) once for every pair i < j (indices into the built array) with dist2 < cutoff².
  template <class F>
  void for_each_pair(double cutoff, F&& f) const;

  // f(i, dist2) for every point with dist2 < cutoff² from p (p may lie anywhere).
  template <class F>
  void for_each_near(const Eigen::Vector3d& p, double cutoff, F&& f) const;

 private:
  // Cell coordinates count from the bounding box's min corner and are clamped to 21 bits. Clamping is
  // monotone and 1-Lipschitz, so two points within `reach` cells stay within `reach` clamped cells: no
  // pair is lost, far-out cells merely merge.
  static constexpr std::int64_t kMaxCoord = (std::int64_t{1} << 21) - 1;

  std::int64_t cell_coord(double x, double origin) const {
    const double c = std::floor((x - origin) * inv_h_);
    if (!(c >= 0.0)) return 0;  // also catches NaN
    return c >= static_cast<double>(kMaxCoord) ? kMaxCoord : static_cast<std::int64_t>(c);
  }
  std::uint64_t row_key(std::int64_t y, std::int64_t z) const {
    return static_cast<std::uint64_t>(y) | (static_cast<std::uint64_t>(z) << bits_);
  }
  std::int64_t row_y(std::size_t r) const { return static_cast<std::int64_t>(row_key_[r] & coord_mask_); }
  std::int64_t row_z(std::size_t r) const { return static_cast<std::int64_t>(row_key_[r] >> bits_); }
  // Row with the given (y, z) among rows [from, end), or SIZE_MAX.
  std::size_t find_row(std::int64_t y, std::int64_t z, std::size_t from) const {
    const std::uint64_t key = row_key(y, z);
    const auto it = std::lower_bound(row_key_.begin() + static_cast<std::ptrdiff_t>(from), row_key_.end(), key);
    return it != row_key_.end() && *it == key ? static_cast<std::size_t>(it - row_key_.begin()) : SIZE_MAX;
  }
  int reach_for(double cutoff) const {
    const double cells = std::ceil(cutoff * inv_h_);
    return cells < 1.0 ? 1 : static_cast<int>(std::min(cells, static_cast<double>(kMaxCoord)));
  }
  template <class F>
  void cell_pairs(std::size_t c, std::size_t d, double c2, F& f) const;

  double h_ = 0, inv_h_ = 0;
  Eigen::Vector3d origin_ = Eigen::Vector3d::Zero();
  int bits_ = 1;                                      // bits per packed cell coordinate
  std::uint64_t coord_mask_ = 1;
  std::int64_t dims_[3] = {0, 0, 0};                  // 1 + largest cell coordinate per axis
  std::vector<Eigen::Vector3d> pos_;                  // positions in cell order
  std::vector<std::uint32_t> index_;                  // original index of each entry of pos_
  std::vector<std::uint32_t> cell_x_;                 // x coordinate of each non-empty cell
  std::vector<std::uint32_t> cell_begin_;             // first entry of each cell in pos_, plus the end
  std::vector<std::uint64_t> row_key_;                // (y, z) of each non-empty row, ascending
  std::vector<std::uint32_t> row_begin_;              // first cell of each row, plus the end
  std::vector<std::uint64_t> key_, key_tmp_;          // radix-sort scratch
  std::vector<std::uint32_t> order_tmp_;
};

template <class F>
void CellList::cell_pairs(std::size_t c, std::size_t d, double c2, F& f) const {
  const std::uint32_t a1 = cell_begin_[c + 1], b0 = cell_begin_[d], b1 = cell_begin_[d + 1];
  for (std::uint32_t a = cell_begin_[c]; a < a1; ++a) {
    const Eigen::Vector3d pa = pos_[a];
    // Same cell: each pair once.
    for (std::uint32_t b = (c == d ? a + 1 : b0); b < b1; ++b) {
      const double d2 = (pos_[b] - pa).squaredNorm();
      if (d2 < c2) {
        const std::uint32_t i = index_[a], j = index_[b];
        i < j ? f(std::size_t{i}, std::size_t{j}, d2) : f(std::size_t{j}, std::size_t{i}, d2);
      }
    }
  }
}

template <class F>
void CellList::for_each_pair(double cutoff, F&& f) const {
  if (!(cutoff > 0.0) || index_.empty()) return;
  const double c2 = cutoff * cutoff;
  const std::int64_t R = reach_for(cutoff);
  const std::size_t nrow = row_key_.size();
  for (std::size_t r = 0; r < nrow; ++r) {
    const std::uint32_t r0 = row_begin_[r], r1 = row_begin_[r + 1];
    // Own row: the cell itself and the next cells up to R to the right.
    for (std::uint32_t c = r0; c < r1; ++c) {
      for (std::uint32_t d = c; d < r1 && cell_x_[d] <= cell_x_[c] + R; ++d) cell_pairs(c, d, c2, f);
    }
    // Rows lexicographically after this one in (z, y) within reach: every pair of rows is met once.
    const std::int64_t y = row_y(r), z = row_z(r);
    for (std::int64_t dz = 0; dz <= R && z + dz < dims_[2]; ++dz) {
      for (std::int64_t dy = (dz == 0 ? 1 : -R); dy <= R; ++dy) {
        if (y + dy < 0) continue;
        if (y + dy >= dims_[1]) break;
        const std::size_t o = find_row(y + dy, z + dz, r + 1);
        if (o == SIZE_MAX) continue;
        // Merge the two x-sorted rows: for each cell, the window [x − R, x + R] of the other row.
        const std::uint32_t o1 = row_begin_[o + 1];
        std::uint32_t lo = row_begin_[o];
        for (std::uint32_t c = r0; c < r1 && lo < o1; ++c) {
          const std::int64_t x = cell_x_[c];
          while (lo < o1 && cell_x_[lo] + R < x) ++lo;
          for (std::uint32_t d = lo; d < o1 && cell_x_[d] <= x + R; ++d) cell_pairs(c, d, c2, f);
        }
      }
    }
  }
}

template <class F>
void CellList::for_each_near(const Eigen::Vector3d& p, double cutoff, F&& f) const {
  if (!(cutoff > 0.0) || index_.empty()) return;
  const double c2 = cutoff * cutoff;
  const std::int64_t R = reach_for(cutoff);
  const std::int64_t qx = cell_coord(p.x(), origin_.x()), qy = cell_coord(p.y(), origin_.y()),
                     qz = cell_coord(p.z(), origin_.z());
  for (std::int64_t z = std::max<std::int64_t>(qz - R, 0); z <= qz + R && z < dims_[2]; ++z) {
    for (std::int64_t y = std::max<std::int64_t>(qy - R, 0); y <= qy + R && y < dims_[1]; ++y) {
      const std::size_t r = find_row(y, z, 0);
      if (r == SIZE_MAX) continue;
      const auto first = cell_x_.begin() + row_begin_[r], last = cell_x_.begin() + row_begin_[r + 1];
      const std::int64_t xlo = std::max<std::int64_t>(qx - R, 0);
      for (auto it = std::lower_bound(first, last, static_cast<std::uint32_t>(std::min(xlo, kMaxCoord)));
           it != last && *it <= qx + R; ++it) {
        const std::size_t c = static_cast<std::size_t>(it - cell_x_.begin());
        for (std::uint32_t b = cell_begin_[c]; b < cell_begin_[c + 1]; ++b) {
          const double d2 = (pos_[b] - p).squaredNorm();
          if (d2 < c2) f(std::size_t{index_[b]}, d2);
        }
      }
    }
  }
}

}  // namespace percussion::geometry
