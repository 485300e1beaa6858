#pragma once
// Uniform hash grid over a point array: all pairs closer than a cut-off, or all points near a query point.
// Cells are hashed, not laid out over the bounding box, so a few far-flung fragments cost nothing: memory is
// O(points) whatever the spread. Points are stored in cell order (copies of the positions), so the inner
// loops read contiguous memory. Storage is reused across build() calls; nothing is allocated while
// enumerating. Visiting order depends only on the input, never on addresses or timing.
//
// A pair is reported iff its squared distance is < cutoff²; pairs within a relative 1e-12 of the cut-off
// may be missed by round-off in the cell coordinates.
#include <Eigen/Core>
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

  // f(i, dist2) for every point with dist2 < cutoff² from p (p need not be inside the points' bounding box).
  template <class F>
  void for_each_near(const Eigen::Vector3d& p, double cutoff, F&& f) const;

 private:
  // Cell coordinates are 21-bit unsigned integers counted from the bounding box's min corner, packed into
  // one 64-bit key. Coordinates beyond 2^21 - 1 cells are clamped: clamping is monotone and 1-Lipschitz, so
  // two points within `reach` cells stay within `reach` clamped cells, and no pair is lost.
  static constexpr int kBits = 21;
  static constexpr std::int64_t kMaxCoord = (std::int64_t{1} << kBits) - 1;
  static constexpr std::uint64_t kNoKey = ~std::uint64_t{0};

  static std::uint64_t pack(std::int64_t x, std::int64_t y, std::int64_t z) {
    return static_cast<std::uint64_t>(x) | (static_cast<std::uint64_t>(y) << kBits) |
           (static_cast<std::uint64_t>(z) << (2 * kBits));
  }
  static std::int64_t coord_of(std::uint64_t key, int axis) {
    return static_cast<std::int64_t>((key >> (axis * kBits)) & static_cast<std::uint64_t>(kMaxCoord));
  }
  std::int64_t cell_coord(double x, double origin) const {
    const double c = std::floor((x - origin) * inv_h_);
    if (!(c >= 0.0)) return 0;  // also catches NaN
    return c >= static_cast<double>(kMaxCoord) ? kMaxCoord : static_cast<std::int64_t>(c);
  }
  std::uint64_t key_of(const Eigen::Vector3d& p) const {
    return pack(cell_coord(p.x(), origin_.x()), cell_coord(p.y(), origin_.y()), cell_coord(p.z(), origin_.z()));
  }
  std::size_t slot_of(std::uint64_t key) const {
    // splitmix64 finaliser: packed keys have highly regular bits, so mix before masking.
    key ^= key >> 30;
    key *= 0xbf58476d1ce4e5b9ULL;
    key ^= key >> 27;
    key *= 0x94d049bb133111ebULL;
    key ^= key >> 31;
    return static_cast<std::size_t>(key & mask_);
  }
  // Index range [begin, end) of the points (in cell order) of the cell with this key; empty if none.
  void find_cell(std::uint64_t key, std::uint32_t& begin, std::uint32_t& end) const {
    for (std::size_t s = slot_of(key);; s = (s + 1) & mask_) {
      const std::uint64_t k = table_key_[s];
      if (k == key) {
        const std::uint32_t c = table_cell_[s];
        begin = cell_begin_[c];
        end = cell_begin_[c + 1];
        return;
      }
      if (k == kNoKey) {
        begin = end = 0;
        return;
      }
    }
  }
  int reach_for(double cutoff) const {
    const double cells = std::ceil(cutoff * inv_h_);
    return cells < 1.0 ? 1 : static_cast<int>(cells);
  }

  double h_ = 0, inv_h_ = 0;
  Eigen::Vector3d origin_ = Eigen::Vector3d::Zero();
  std::vector<Eigen::Vector3d> pos_;        // positions in cell order
  std::vector<std::uint32_t> index_;        // original index of each entry of pos_
  std::vector<std::uint64_t> cell_key_;     // key of each non-empty cell, in cell order
  std::vector<std::uint32_t> cell_begin_;   // start of each cell in pos_, plus one past the end
  std::vector<std::uint64_t> table_key_;    // open-addressing table: cell key -> cell number
  std::vector<std::uint32_t> table_cell_;
  std::size_t mask_ = 0;
  std::vector<std::uint32_t> point_cell_;  // scratch for build(): cell number of each input point
};

template <class F>
void CellList::for_each_pair(double cutoff, F&& f) const {
  if (!(cutoff > 0.0) || index_.empty()) return;
  const double c2 = cutoff * cutoff;
  const int R = reach_for(cutoff);
  const std::size_t ncell = cell_key_.size();
  for (std::size_t c = 0; c < ncell; ++c) {
    const std::uint32_t a0 = cell_begin_[c], a1 = cell_begin_[c + 1];
    // Pairs inside the cell.
    for (std::uint32_t a = a0; a < a1; ++a) {
      const Eigen::Vector3d pa = pos_[a];
      for (std::uint32_t b = a + 1; b < a1; ++b) {
        const double d2 = (pos_[b] - pa).squaredNorm();
        if (d2 < c2) {
          const std::uint32_t i = index_[a], j = index_[b];
          i < j ? f(std::size_t{i}, std::size_t{j}, d2) : f(std::size_t{j}, std::size_t{i}, d2);
        }
      }
    }
    // Half of the neighbour stencil: offsets lexicographically after (0, 0, 0) in (z, y, x), so every pair
    // of cells is visited once.
    const std::uint64_t key = cell_key_[c];
    const std::int64_t cx = coord_of(key, 0), cy = coord_of(key, 1), cz = coord_of(key, 2);
    for (int dz = 0; dz <= R; ++dz) {
      const std::int64_t z = cz + dz;
      if (z > kMaxCoord) break;
      for (int dy = (dz == 0 ? 0 : -R); dy <= R; ++dy) {
        const std::int64_t y = cy + dy;
        if (y < 0) continue;
        if (y > kMaxCoord) break;
        for (int dx = (dz == 0 && dy == 0 ? 1 : -R); dx <= R; ++dx) {
          const std::int64_t x = cx + dx;
          if (x < 0) continue;
          if (x > kMaxCoord) break;
          std::uint32_t b0, b1;
          find_cell(pack(x, y, z), b0, b1);
          if (b0 == b1) continue;
          for (std::uint32_t a = a0; a < a1; ++a) {
            const Eigen::Vector3d pa = pos_[a];
            for (std::uint32_t b = b0; b < b1; ++b) {
              const double d2 = (pos_[b] - pa).squaredNorm();
              if (d2 < c2) {
                const std::uint32_t i = index_[a], j = index_[b];
                i < j ? f(std::size_t{i}, std::size_t{j}, d2) : f(std::size_t{j}, std::size_t{i}, d2);
              }
            }
          }
        }
      }
    }
  }
}

template <class F>
void CellList::for_each_near(const Eigen::Vector3d& p, double cutoff, F&& f) const {
  if (!(cutoff > 0.0) || index_.empty()) return;
  const double c2 = cutoff * cutoff;
  const int R = reach_for(cutoff);
  const std::int64_t cx = cell_coord(p.x(), origin_.x()), cy = cell_coord(p.y(), origin_.y()),
                     cz = cell_coord(p.z(), origin_.z());
  for (std::int64_t z = cz - R; z <= cz + R; ++z) {
    if (z < 0 || z > kMaxCoord) continue;
    for (std::int64_t y = cy - R; y <= cy + R; ++y) {
      if (y < 0 || y > kMaxCoord) continue;
      for (std::int64_t x = cx - R; x <= cx + R; ++x) {
        if (x < 0 || x > kMaxCoord) continue;
        std::uint32_t b0, b1;
        find_cell(pack(x, y, z), b0, b1);
        for (std::uint32_t b = b0; b < b1; ++b) {
          const double d2 = (pos_[b] - p).squaredNorm();
          if (d2 < c2) f(std::size_t{index_[b]}, d2);
        }
      }
    }
  }
}

}  // namespace percussion::geometry
