#include "percussion/solvers/block_system.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "percussion/solvers/sbaij_block.hpp"

namespace percussion::solvers {

void BlockSystem::zero() {
  petsc_check(MatZeroEntries(A_), "MatZeroEntries");
  replaceable_next_.clear();
  replacing_ = false;
  all_rows_changed_ = true;
  diagonal_.assign(static_cast<std::size_t>(n_owned_ * bs_ * bs_), 0.0);
  diagonal_complete_ = true;
  diagonal_inserted_ = false;
  diagonal_inverted_ = false;
}

void BlockSystem::mark_changed(PetscInt row, PetscInt col) {
  // (Only the rank's own block matters to Gauss–Seidel: a column on another rank is a coupling block.)
  const PetscInt r = row - first_row_, c = col - first_row_;
  if (r >= 0 && r < n_owned_) changed_rows_[static_cast<std::size_t>(r)] = 1;
  else if (!(upper_only_ && row > col)) changed_elsewhere_ = true;  // the owner's row, which it cannot see change
  if (c >= 0 && c < n_owned_) changed_rows_[static_cast<std::size_t>(c)] = 1;
}

void BlockSystem::add_block(PetscInt row, PetscInt col, const double* v) {
  if (!all_rows_changed_) mark_changed(row, col);
  if (row == col) {
    const PetscInt local = row - first_row_;
    if (local >= 0 && local < n_owned_) {
      double* d = &diagonal_[static_cast<std::size_t>(local * bs_ * bs_)];
      for (int k = 0; k < bs_ * bs_; ++k) d[k] += v[k];
      // Summed here and inserted once per row by assemble(): a bonded particle's diagonal block gets a dozen
      // additions, and each MatSetValuesBlocked call searches its row.
      if (!diagonal_inserted_) return;
    } else {
      diagonal_complete_ = false;
    }
  }
  if (upper_only_ && row > col) return;  // SBAIJ would drop it anyway
  petsc_check(MatSetValuesBlocked(A_, 1, &row, 1, &col, v, ADD_VALUES), "MatSetValuesBlocked");
}

PetscInt BlockSystem::local_position(PetscInt row, PetscInt col) const {
  const PetscInt r = row - first_row_, c = col - first_row_;
  if (local_first_.empty() || r < 0 || c <= r || c >= n_owned_) return -1;
  const auto begin = local_column_.begin() + local_first_[static_cast<std::size_t>(r)];
  const auto end = local_column_.begin() + local_first_[static_cast<std::size_t>(r) + 1];
  const auto it = std::lower_bound(begin, end, c);
  return it != end && *it == c ? static_cast<PetscInt>(it - local_column_.begin()) : -1;
}

namespace {
// Block `v` (b×b; row-major, or column by column) into `block` as PETSc keeps it (column by column): added, or
// written over. B is b when it is known at compile time (the particles' 6), else 0.
template <bool Add, int B>
void put_block(double* block, const double* v, bool column_major, int bs) {
  const int b = B > 0 ? B : bs;
  for (int r = 0; r < b; ++r)
    for (int c = 0; c < b; ++c) {
      const double value = column_major ? v[c * b + r] : v[r * b + c];
      if constexpr (Add) block[c * b + r] += value;
      else block[c * b + r] = value;
    }
}
}  // namespace

double* BlockSystem::local_block(PetscInt position) {
  if (!local_values_) {
    Mat local = nullptr;
    petsc_check(MatGetDiagonalBlock(A_, &local), "MatGetDiagonalBlock");
    petsc_check(MatSeqSBAIJGetArray(local, &local_values_), "MatSeqSBAIJGetArray");
  }
  if (!all_rows_changed_) {
    const auto row = std::upper_bound(local_first_.begin(), local_first_.end(), position) - local_first_.begin() - 1;
    mark_changed(first_row_ + static_cast<PetscInt>(row), first_row_ + local_column_[static_cast<std::size_t>(position)]);
  }
  return local_values_ + static_cast<std::size_t>(position) * static_cast<std::size_t>(bs_ * bs_);
}

void BlockSystem::add_at(PetscInt position, const double* v, bool column_major) {
  if (bs_ == 6) put_block<true, 6>(local_block(position), v, column_major, bs_);
  else put_block<true, 0>(local_block(position), v, column_major, bs_);
}

void BlockSystem::set_at(PetscInt position, const double* v, bool column_major) {
  if (bs_ == 6) put_block<false, 6>(local_block(position), v, column_major, bs_);
  else put_block<false, 0>(local_block(position), v, column_major, bs_);
}

void BlockSystem::ReplaceableDiagonal::reset(std::size_t n, std::size_t bb) {
  blocks.resize(n * bb);  // (a row's block is zeroed when it enters: a rebuild need not write them all)
  has.assign(n, 0);
  rows.clear();
}

void BlockSystem::ReplaceableDiagonal::clear() {
  for (PetscInt r : rows) has[static_cast<std::size_t>(r)] = 0;
  rows.clear();
}

double* BlockSystem::ReplaceableDiagonal::row(PetscInt r, std::size_t bb) {
  double* d = &blocks[static_cast<std::size_t>(r) * bb];
  if (!has[static_cast<std::size_t>(r)]) {
    has[static_cast<std::size_t>(r)] = 1;
    rows.push_back(r);
    std::fill_n(d, bb, 0.0);
  }
  return d;
}

void BlockSystem::total_diagonal(PetscInt r, const ReplaceableDiagonal& part, double* out) const {
  // Always kept + part (a zero part where the row has none), so that every way to this matrix rounds alike.
  const std::size_t bb = static_cast<std::size_t>(bs_ * bs_);
  const double* kept = &diagonal_[static_cast<std::size_t>(r) * bb];
  const bool has = part.has[static_cast<std::size_t>(r)] != 0;
  const double* p = has ? &part.blocks[static_cast<std::size_t>(r) * bb] : nullptr;
  for (std::size_t k = 0; k < bb; ++k) out[k] = kept[k] + (has ? p[k] : 0.0);
}

void BlockSystem::begin_replacement() {
  if (local_first_.empty() || !upper_only_)
    throw std::logic_error("BlockSystem::begin_replacement: needs an assembled SBAIJ matrix");
  replaceable_next_.clear();
  replacing_ = true;
}

void BlockSystem::add_replaceable(PetscInt row, PetscInt col, const double* v, bool changed) {
  const std::size_t bb = static_cast<std::size_t>(bs_ * bs_);
  if (row == col) {
    const PetscInt r = row - first_row_;
    if (r < 0 || r >= n_owned_) throw std::logic_error("BlockSystem::add_replaceable: a diagonal block of another rank");
    double* d = replaceable_next_.row(r, bb);
    for (std::size_t k = 0; k < bb; ++k) d[k] += v[k];
    return;
  }
  if (!changed || (upper_only_ && row > col)) return;  // (SBAIJ keeps the upper block, given by its row's owner)
  if (!replacing_) {
    add_block(row, col, v);
    return;
  }
  if (!all_rows_changed_) mark_changed(row, col);
  petsc_check(MatSetValuesBlocked(A_, 1, &row, 1, &col, v, INSERT_VALUES), "MatSetValuesBlocked");
}

void BlockSystem::add_replaceable_at(PetscInt position, const double* v, bool column_major, bool changed) {
  if (!changed) return;
  if (replacing_) set_at(position, v, column_major);
  else add_at(position, v, column_major);
}

void BlockSystem::write_replacement() {
  // The rows whose part was or is now non-zero, each once; a part equal to the last one, bit for bit, leaves the row.
  const std::size_t bb = static_cast<std::size_t>(bs_ * bs_);
  const std::vector<double> zeros(bb, 0.0);
  std::vector<double> total(bb);
  auto write = [&](PetscInt r) {
    const std::size_t i = static_cast<std::size_t>(r);
    const double* before = replaceable_.has[i] ? &replaceable_.blocks[i * bb] : zeros.data();
    const double* now = replaceable_next_.has[i] ? &replaceable_next_.blocks[i * bb] : zeros.data();
    if (std::memcmp(before, now, bb * sizeof(double)) == 0) return;
    total_diagonal(r, replaceable_next_, total.data());
    set_at(local_first_[i], total.data());
  };
  for (PetscInt r : replaceable_.rows) write(r);
  for (PetscInt r : replaceable_next_.rows)
    if (!replaceable_.has[static_cast<std::size_t>(r)]) write(r);
}

void BlockSystem::assemble() {
  if (replacing_) {
    write_replacement();
    std::swap(replaceable_, replaceable_next_);
    replacing_ = false;
  } else if (!diagonal_inserted_) {
    const std::size_t bb = static_cast<std::size_t>(bs_ * bs_);
    std::vector<double> total(bb);
    for (PetscInt r = 0; r < n_owned_; ++r) {
      total_diagonal(r, replaceable_next_, total.data());
      if (!local_first_.empty()) {  // the pattern is known: each row's diagonal block is its first
        add_at(local_first_[static_cast<std::size_t>(r)], total.data());
      } else {
        const PetscInt row = first_row_ + r;
        petsc_check(MatSetValuesBlocked(A_, 1, &row, 1, &row, total.data(), ADD_VALUES), "MatSetValuesBlocked");
      }
    }
    std::swap(replaceable_, replaceable_next_);
    replaceable_next_.clear();
    diagonal_inserted_ = true;  // later additions before zero() go to the matrix directly
  }
  if (local_values_) {
    Mat local = nullptr;
    petsc_check(MatGetDiagonalBlock(A_, &local), "MatGetDiagonalBlock");
    petsc_check(MatSeqSBAIJRestoreArray(local, &local_values_), "MatSeqSBAIJRestoreArray");
    local_values_ = nullptr;
  }
  diagonal_inverted_ = false;
  ++assemblies_;
  petsc_check(MatAssemblyBegin(A_, MAT_FINAL_ASSEMBLY), "MatAssemblyBegin");
  petsc_check(MatAssemblyEnd(A_, MAT_FINAL_ASSEMBLY), "MatAssemblyEnd");
  if (local_first_.empty() && upper_only_) {  // the pattern is set now
    SbaijBlock block(A_, "direct assembly", bs_);
    local_first_ = std::move(block.first);
    local_column_ = std::move(block.column);
  }
  // (The Eisenstat split reads the blocks itself; its rare point-block Jacobi fallback then multiplies in double.)
  if (single_precision_product_ && upper_only_ && bs_ == SbaijBlock::kBlock && !eisenstat_) product_.attach(A_);
}


}  // namespace percussion::solvers
