#include "percussion/geometry/cell_list.hpp"

#include <array>
#include <bit>
#include <limits>
#include <stdexcept>

namespace percussion::geometry {

void CellList::build(std::span<const Eigen::Vector3d> points, double cell_size) {
  if (!(cell_size > 0.0) || !std::isfinite(cell_size)) {
    throw std::invalid_argument("CellList::build: cell_size must be positive and finite");
  }
  const std::size_t n = points.size();
  if (n >= std::numeric_limits<std::uint32_t>::max()) {
    throw std::length_error("CellList::build: more than 2^32 - 2 points");
  }
  h_ = cell_size;
  inv_h_ = 1.0 / cell_size;

  // Bounding-box min corner; non-finite coordinates are skipped (they land in clamped cells).
  origin_.setConstant(std::numeric_limits<double>::infinity());
  for (const Eigen::Vector3d& p : points) {
    for (int a = 0; a < 3; ++a) {
      if (p[a] < origin_[a]) origin_[a] = p[a];
    }
  }
  for (int a = 0; a < 3; ++a) {
    if (!std::isfinite(origin_[a])) origin_[a] = 0.0;
  }

  // Cell coordinates, then the fewest bits per axis that hold them.
  key_.resize(n);
  std::int64_t top = 0;
  for (int a = 0; a < 3; ++a) dims_[a] = 1;
  for (std::size_t i = 0; i < n; ++i) {
    for (int a = 0; a < 3; ++a) {
      const std::int64_t c = cell_coord(points[i][a], origin_[a]);
      dims_[a] = std::max(dims_[a], c + 1);
      top = std::max(top, c);
    }
  }
  bits_ = std::max(1, static_cast<int>(std::bit_width(static_cast<std::uint64_t>(top))));
  coord_mask_ = (std::uint64_t{1} << bits_) - 1;
  for (std::size_t i = 0; i < n; ++i) {
    const Eigen::Vector3d& p = points[i];
    key_[i] = static_cast<std::uint64_t>(cell_coord(p.x(), origin_.x())) |
              (row_key(cell_coord(p.y(), origin_.y()), cell_coord(p.z(), origin_.z())) << bits_);
  }

  // Stable LSD radix sort of (key, index) by 8-bit digits; index_ starts ascending so ties stay in input order.
  index_.resize(n);
  for (std::size_t i = 0; i < n; ++i) index_[i] = static_cast<std::uint32_t>(i);
  key_tmp_.resize(n);
  order_tmp_.resize(n);
  const int key_bits = 3 * bits_;
  for (int shift = 0; shift < key_bits; shift += 8) {
    std::array<std::uint32_t, 257> start{};
    for (std::size_t i = 0; i < n; ++i) ++start[((key_[i] >> shift) & 0xff) + 1];
    for (int b = 0; b < 256; ++b) start[b + 1] += start[b];
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t at = start[(key_[i] >> shift) & 0xff]++;
      key_tmp_[at] = key_[i];
      order_tmp_[at] = index_[i];
    }
    key_.swap(key_tmp_);
    index_.swap(order_tmp_);
  }

  // Cells = runs of equal keys; rows = runs of equal (y, z). Copy positions into cell order.
  pos_.resize(n);
  cell_x_.clear();
  cell_begin_.clear();
  row_key_.clear();
  row_begin_.clear();
  for (std::size_t i = 0; i < n; ++i) {
    pos_[i] = points[index_[i]];
    const std::uint64_t key = key_[i];
    if (i > 0 && key == key_[i - 1]) continue;
    const std::uint64_t row = key >> bits_;
    if (row_key_.empty() || row != row_key_.back()) {
      row_key_.push_back(row);
      row_begin_.push_back(static_cast<std::uint32_t>(cell_x_.size()));
    }
    cell_x_.push_back(static_cast<std::uint32_t>(key & coord_mask_));
    cell_begin_.push_back(static_cast<std::uint32_t>(i));
  }
  cell_begin_.push_back(static_cast<std::uint32_t>(n));
  row_begin_.push_back(static_cast<std::uint32_t>(cell_x_.size()));
}

}  // namespace percussion::geometry
