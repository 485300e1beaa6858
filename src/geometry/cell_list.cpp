#include "percussion/geometry/cell_list.hpp"

#include <algorithm>
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

  // Table of at least twice as many slots as there can be cells keeps probe chains short.
  std::size_t slots = 2;
  while (slots < 2 * n) slots *= 2;
  mask_ = slots - 1;
  table_key_.assign(slots, kNoKey);
  table_cell_.resize(slots);

  // Cells are numbered in order of first appearance, so the order depends only on the input.
  point_cell_.resize(n);
  cell_key_.clear();
  cell_begin_.assign(1, 0);  // cell_begin_[c + 1] counts cell c first
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t key = key_of(points[i]);
    std::size_t s = slot_of(key);
    while (table_key_[s] != kNoKey && table_key_[s] != key) s = (s + 1) & mask_;
    if (table_key_[s] == kNoKey) {
      table_key_[s] = key;
      table_cell_[s] = static_cast<std::uint32_t>(cell_key_.size());
      cell_key_.push_back(key);
      cell_begin_.push_back(0);
    }
    const std::uint32_t c = table_cell_[s];
    point_cell_[i] = c;
    ++cell_begin_[c + 1];
  }

  // Counts -> cell_begin_[c + 1] = start of cell c; the scatter then advances it to the end of cell c, which
  // is the start of cell c + 1. Scattering in index order keeps indices ascending within a cell.
  const std::size_t ncell = cell_key_.size();
  std::uint32_t running = 0;
  for (std::size_t c = 0; c < ncell; ++c) {
    const std::uint32_t count = cell_begin_[c + 1];
    cell_begin_[c + 1] = running;
    running += count;
  }
  pos_.resize(n);
  index_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t at = cell_begin_[point_cell_[i] + 1]++;
    pos_[at] = points[i];
    index_[at] = static_cast<std::uint32_t>(i);
  }
}

}  // namespace percussion::geometry
