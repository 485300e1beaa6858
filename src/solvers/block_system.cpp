#include "percussion/solvers/block_system.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "percussion/core/error.hpp"
#include "percussion/core/log.hpp"
#include "percussion/solvers/avx2_block_kernels.hpp"
#include "percussion/solvers/block_cholesky.hpp"
#include "percussion/solvers/fused_cg.hpp"

namespace percussion::solvers {
namespace {
// CG on a split system stops on W⁻¹(b − A y), the residual in the preconditioner's norm, not |b − A y|. Stopped at
// the caller's rtol it gives poorer Newton steps than a solver stopped on the true residual; at rtol/2 as good.
constexpr double kSplitForcing = 0.5;

// CG with the given default preconditioner, both overridable under `prefix`. Its norm is the true residual:
// the Newton forcing term bounds |A y + g| / |g|, whatever the preconditioner.
KSP make_cg(MPI_Comm comm, const std::string& prefix, PCType pc_type) {
  KSP ksp;
  petsc_check(KSPCreate(comm, &ksp), "KSPCreate");
  petsc_check(KSPSetOptionsPrefix(ksp, prefix.c_str()), "KSPSetOptionsPrefix");
  petsc_check(KSPSetType(ksp, KSPCG), "KSPSetType");
  petsc_check(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED), "KSPSetNormType");
  PC pc;
  petsc_check(KSPGetPC(ksp, &pc), "KSPGetPC");
  petsc_check(PCSetType(pc, pc_type), "PCSetType");
  petsc_check(KSPSetFromOptions(ksp), "KSPSetFromOptions");
  return ksp;
}

// The shell preconditioner's callbacks: PETSc is C, so a failure is returned as an error code with its text.
PetscErrorCode set_up_icc_shell(PC pc) {
  void* context = nullptr;
  PetscCall(PCShellGetContext(pc, &context));
  Mat A = nullptr, P = nullptr;
  PetscCall(PCGetOperators(pc, &A, &P));
  try {
    // A failed factorisation is not an error: the application then gives NaN, which CG's next dot product
    // carries to every rank, so KSPSolve ends diverged on all of them together.
    const bool factored = static_cast<BlockSystem*>(context)->factor_icc(P);
    PetscCall(PCSetFailedReason(pc, factored ? PC_NOERROR : PC_FACTOR_OTHER));  // (PETSc's own set-ups reset it too)
  } catch (const std::exception& e) {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", e.what());
  }
  return 0;
}

// f(x's array, y's array), a failure returned as an error code with its text (PETSc is C).
template <class F>
PetscErrorCode on_arrays(Vec x, Vec y, F&& f) {
  const PetscScalar* in = nullptr;
  PetscScalar* out = nullptr;
  PetscCall(VecGetArrayRead(x, &in));
  PetscCall(VecGetArray(y, &out));
  try {
    f(in, out);
  } catch (const std::exception& e) {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", e.what());
  }
  PetscCall(VecRestoreArray(y, &out));
  PetscCall(VecRestoreArrayRead(x, &in));
  return 0;
}

// y = M⁻¹ x by one of the system's preconditioners (IC(0), point-block Jacobi).
template <void (BlockSystem::*Apply)(const double*, double*) const>
PetscErrorCode apply_shell(PC pc, Vec x, Vec y) {
  void* context = nullptr;
  PetscCall(PCShellGetContext(pc, &context));
  const auto* system = static_cast<const BlockSystem*>(context);
  return on_arrays(x, y, [&](const double* in, double* out) { (system->*Apply)(in, out); });
}

// y = Ĉ x, the Eisenstat split operator.
PetscErrorCode split_multiply(Mat op, Vec x, Vec y) {
  void* context = nullptr;
  PetscCall(MatShellGetContext(op, &context));
  const auto* system = static_cast<const BlockSystem*>(context);
  return on_arrays(x, y, [&](const double* in, double* out) { system->apply_split(in, out); });
}

// The local block's product replaced by zero: MatMult of the parallel matrix then gives only the blocks that
// couple ranks.
PetscErrorCode zero_multiply(Mat, Vec, Vec y) { return VecSet(y, 0.0); }

// Whether `ksp` (CG, with one of our preconditioners or none) may be run by our fused loops (fused_cg.hpp) instead
// of KSPSolve: not when the options ask for another Krylov method, for PETSc's monitor or converged-reason view
// under the KSP's prefix, or for -<system prefix>petsc_cg.
bool fused_cg_allowed(KSP ksp, const std::string& system_prefix) {
  KSPType type = nullptr;
  petsc_check(KSPGetType(ksp, &type), "KSPGetType");
  const char* own = nullptr;
  petsc_check(KSPGetOptionsPrefix(ksp, &own), "KSPGetOptionsPrefix");
  PetscBool monitor = PETSC_FALSE, reason = PETSC_FALSE, petsc = PETSC_FALSE, set = PETSC_FALSE;
  petsc_check(PetscOptionsHasName(nullptr, own, "-ksp_monitor", &monitor), "PetscOptionsHasName");
  petsc_check(PetscOptionsHasName(nullptr, own, "-ksp_converged_reason", &reason), "PetscOptionsHasName");
  petsc_check(PetscOptionsGetBool(nullptr, system_prefix.c_str(), "-petsc_cg", &petsc, &set), "PetscOptionsGetBool");
  return type && std::string(type) == KSPCG && !monitor && !reason && !petsc;
}

// The iteration limit of `ksp` (KSP's default, or -<prefix>ksp_max_it).
PetscInt max_iterations(KSP ksp) {
  PetscInt limit = 0;
  petsc_check(KSPGetTolerances(ksp, nullptr, nullptr, nullptr, &limit), "KSPGetTolerances");
  return limit;
}

BlockSystem::Result to_result(const FusedCgResult& cg) {
  BlockSystem::Result r{};
  r.iterations = cg.iterations;
  r.reason = static_cast<int>(cg.reason);
  r.residual_norm = cg.residual_norm;
  return r;
}

bool is_type(Mat m, MatType sequential, MatType parallel) {
  PetscBool match = PETSC_FALSE;
  petsc_check(PetscObjectTypeCompareAny(reinterpret_cast<PetscObject>(m), &match, sequential, parallel, ""),
              "PetscObjectTypeCompareAny");
  return match == PETSC_TRUE;
}
}  // namespace

BlockSystem::BlockSystem(MPI_Comm comm, std::string prefix, int block_size)
    : comm_(comm), prefix_(std::move(prefix)), bs_(block_size), coupling_(comm) {}

BlockSystem::~BlockSystem() { destroy(); }

void BlockSystem::destroy() {
  if (ksp_) KSPDestroy(&ksp_);
  if (fallback_) KSPDestroy(&fallback_);
  if (A_) MatDestroy(&A_);
  if (P_) MatDestroy(&P_);
  if (near_null_) MatNullSpaceDestroy(&near_null_);
  if (b_) VecDestroy(&b_);
  if (y_) VecDestroy(&y_);
  if (split_ksp_) KSPDestroy(&split_ksp_);
  if (split_op_) MatDestroy(&split_op_);
  for (Vec* v : {&split_b_, &split_y_, &coupling_in_, &coupling_out_, &product_in_, &product_out_})
    if (*v) VecDestroy(v);
  built_ = false;
  fused_icc_cg_ = fused_split_cg_ = fused_fallback_cg_ = false;
  icc_assembly_ = gauss_seidel_assembly_ = coupling_assembly_ = -1;
  across_ready_ = dilu_across_ = false;
}

void BlockSystem::order_rows(std::span<const char> sides, bool across) {
  // H (higher ranks only), X (both), N (none), L (lower ranks only), each in item order: see rank_coupling.hpp.
  local_row_.clear();
  groups_ = {};
  if (!across || sides.empty()) return;
  const std::size_t n = static_cast<std::size_t>(n_owned_);
  auto group = [&](std::size_t i) {
    const bool lower = (sides[i] & kLowerRank) != 0, higher = (sides[i] & kHigherRank) != 0;
    return higher ? (lower ? 1 : 0) : (lower ? 3 : 2);
  };
  PetscInt count[4] = {0, 0, 0, 0};
  for (std::size_t i = 0; i < n; ++i) ++count[group(i)];
  PetscInt next[4] = {0, count[0], count[0] + count[1], count[0] + count[1] + count[2]};
  groups_ = RankCoupling::Groups{next[1], next[2], next[3], n_owned_};
  local_row_.resize(n);
  for (std::size_t i = 0; i < n; ++i) local_row_[i] = next[group(i)]++;
}

PetscInt BlockSystem::preallocate(PetscInt n_owned, std::span<const PetscInt> item_d_nnz,
                                  std::span<const PetscInt> item_o_nnz, std::span<const char> sides,
                                  bool pattern_follows) {
  destroy();
  local_first_.clear();
  local_column_.clear();
  n_owned_ = n_owned;
  changed_rows_.assign(static_cast<std::size_t>(n_owned), 0);
  all_rows_changed_ = true;
  changed_elsewhere_ = false;
  int size = 1;
  MPI_Comm_size(comm_, &size);
  order_rows(sides, size > 1 && across_asked_);
  std::vector<PetscInt> d_nnz(static_cast<std::size_t>(n_owned)), o_nnz(static_cast<std::size_t>(n_owned));
  for (std::size_t i = 0; i < static_cast<std::size_t>(n_owned); ++i) {
    d_nnz[static_cast<std::size_t>(local_row(i))] = item_d_nnz[i];
    o_nnz[static_cast<std::size_t>(local_row(i))] = item_o_nnz[i];
  }
  interface_rows_.clear();
  for (PetscInt k = 0; k < n_owned; ++k)
    if (o_nnz[static_cast<std::size_t>(k)] > 0) interface_rows_.push_back(k);
  diagonal_.assign(static_cast<std::size_t>(n_owned * bs_ * bs_), 0.0);  // a new matrix is zero
  replaceable_.reset(static_cast<std::size_t>(n_owned), static_cast<std::size_t>(bs_ * bs_));
  replaceable_next_.reset(static_cast<std::size_t>(n_owned), static_cast<std::size_t>(bs_ * bs_));
  replacing_ = false;
  diagonal_complete_ = true;
  diagonal_inserted_ = false;
  diagonal_inverted_ = false;
  MPI_Exscan(&n_owned, &first_row_, 1, MPIU_INT, MPI_SUM, comm_);
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  if (rank == 0) first_row_ = 0;
  const PetscInt n = n_owned * bs_;
  // SBAIJ stores the upper triangle with one column index per block: its product reads the least memory (BAIJ
  // reads twice the blocks, AIJ a column index per entry) and block Jacobi factors it without a conversion;
  // -<prefix>mat_type baij|aij overrides.
  petsc_check(MatCreate(comm_, &A_), "MatCreate");
  petsc_check(MatSetSizes(A_, n, n, PETSC_DETERMINE, PETSC_DETERMINE), "MatSetSizes");
  petsc_check(MatSetBlockSize(A_, bs_), "MatSetBlockSize");
  petsc_check(MatSetType(A_, MATSBAIJ), "MatSetType");
  petsc_check(MatSetOptionsPrefix(A_, prefix_.c_str()), "MatSetOptionsPrefix");
  petsc_check(MatSetFromOptions(A_), "MatSetFromOptions");
  // The full counts also bound the upper triangle (SBAIJ); assembly releases the slots left unused. A pattern that
  // follows allocates the SBAIJ matrix again (set_pattern): this allocation is only the diagonal blocks'.
  pattern_follows_ = pattern_follows && is_type(A_, MATSEQSBAIJ, MATMPISBAIJ) && bs_ == SbaijBlock::kBlock;
  if (pattern_follows_) {
    std::fill(d_nnz.begin(), d_nnz.end(), 1);
    std::fill(o_nnz.begin(), o_nnz.end(), 0);
  }
  petsc_check(MatXAIJSetPreallocation(A_, bs_, d_nnz.data(), o_nnz.data(), d_nnz.data(), o_nnz.data()),
              "MatXAIJSetPreallocation");
  petsc_check(MatSetOption(A_, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE), "MatSetOption");
  petsc_check(MatSetOption(A_, MAT_SYMMETRIC, PETSC_TRUE), "MatSetOption");
  // SBAIJ keeps the upper triangle: callers add both triangles, the lower blocks are dropped here.
  upper_only_ = is_type(A_, MATSEQSBAIJ, MATMPISBAIJ);
  if (upper_only_) petsc_check(MatSetOption(A_, MAT_IGNORE_LOWER_TRIANGULAR, PETSC_TRUE), "MatSetOption");
  petsc_check(MatCreateVecs(A_, &y_, &b_), "MatCreateVecs");
  across_ = !local_row_.empty() && upper_only_ && bs_ == SbaijBlock::kBlock;
  // Block Jacobi across ranks by default; on 6x6-block SBAIJ its blocks are our single-precision IC(0).
  const bool own_icc = bs_ == SbaijBlock::kBlock && upper_only_;
  ksp_ = make_cg(comm_, prefix_, own_icc ? PCSHELL : PCBJACOBI);
  PC pc;
  petsc_check(KSPGetPC(ksp_, &pc), "KSPGetPC");
  PCType type = nullptr;
  petsc_check(PCGetType(pc, &type), "PCGetType");
  const std::string t = type ? type : "";
  eisenstat_ = t == PCSHELL && blocks_ != Blocks::Icc;  // unless -<prefix>pc_type chose another
  coupled_ = size > 1;
  if (eisenstat_) {
    // CG on the split system Ĉ ŷ = b̂ (eisenstat_dilu.hpp): a shell operator and no PETSc preconditioner.
    petsc_check(MatCreateShell(comm_, n, n, PETSC_DETERMINE, PETSC_DETERMINE, this, &split_op_), "MatCreateShell");
    petsc_check(MatShellSetOperation(split_op_, MATOP_MULT, reinterpret_cast<void (*)(void)>(split_multiply)),
                "MatShellSetOperation");
    petsc_check(MatSetOption(split_op_, MAT_SYMMETRIC, PETSC_TRUE), "MatSetOption");
    split_ksp_ = make_cg(comm_, prefix_, PCNONE);
    PC none;
    petsc_check(KSPGetPC(split_ksp_, &none), "KSPGetPC");
    petsc_check(PCSetType(none, PCNONE), "PCSetType");
    // Without a preconditioner the natural norm √(rᵀr) is the residual norm itself, and CG has it from the dot
    // product it takes anyway: one pass over the vectors fewer per iteration than a separate norm.
    petsc_check(KSPSetNormType(split_ksp_, KSP_NORM_NATURAL), "KSPSetNormType");
    petsc_check(KSPSetOperators(split_ksp_, split_op_, split_op_), "KSPSetOperators");
    for (Vec* v : {&split_b_, &split_y_, &coupling_in_, &coupling_out_})
      petsc_check(VecDuplicate(y_, v), "VecDuplicate");
    fused_split_cg_ = fused_cg_allowed(split_ksp_, prefix_);
  } else if (t == PCSHELL) {
    petsc_check(PCShellSetContext(pc, this), "PCShellSetContext");
    petsc_check(PCShellSetSetUp(pc, set_up_icc_shell), "PCShellSetSetUp");
    petsc_check(PCShellSetApply(pc, apply_shell<&BlockSystem::apply_icc>), "PCShellSetApply");
    petsc_check(PCShellSetName(pc, "block Jacobi, IC(0) blocks in single precision"), "PCShellSetName");
    fused_icc_cg_ = fused_cg_allowed(ksp_, prefix_);
  }
  multigrid_ = t == PCGAMG || t == PCHYPRE || t == PCML;
  return first_row_;
}

void BlockSystem::set_pattern(std::span<const PetscInt> start, std::span<const PetscInt> columns) {
  if (!pattern_follows_) return;
  pattern_follows_ = false;
  // Rows in the system's order; in each, its diagonal block and the upper triangle's columns, sorted.
  const auto n = static_cast<std::size_t>(n_owned_);
  std::vector<PetscInt> row_start(n + 1, 0), item_of(n);
  for (std::size_t i = 0; i < n; ++i) item_of[static_cast<std::size_t>(local_row(i))] = static_cast<PetscInt>(i);
  std::vector<PetscInt> row_columns;
  row_columns.reserve(n + columns.size());
  for (std::size_t r = 0; r < n; ++r) {
    const auto i = static_cast<std::size_t>(item_of[r]);
    const PetscInt row = first_row_ + static_cast<PetscInt>(r);
    const auto begin = row_columns.size();
    row_columns.push_back(row);
    for (PetscInt k = start[i]; k < start[i + 1]; ++k)
      if (columns[static_cast<std::size_t>(k)] > row) row_columns.push_back(columns[static_cast<std::size_t>(k)]);
    std::sort(row_columns.begin() + static_cast<std::ptrdiff_t>(begin), row_columns.end());
    row_columns.erase(std::unique(row_columns.begin() + static_cast<std::ptrdiff_t>(begin), row_columns.end()),
                      row_columns.end());
    row_start[r + 1] = static_cast<PetscInt>(row_columns.size());
  }
  // (Only the call for the matrix's own type acts.)
  petsc_check(MatSeqSBAIJSetPreallocationCSR(A_, bs_, row_start.data(), row_columns.data(), nullptr),
              "MatSeqSBAIJSetPreallocationCSR");
  petsc_check(MatMPISBAIJSetPreallocationCSR(A_, bs_, row_start.data(), row_columns.data(), nullptr),
              "MatMPISBAIJSetPreallocationCSR");
  petsc_check(MatSetOption(A_, MAT_IGNORE_LOWER_TRIANGULAR, PETSC_TRUE), "MatSetOption");
  SbaijBlock block(A_, "direct assembly");
  local_first_ = std::move(block.first);
  local_column_ = std::move(block.column);
  // The split's and CG's storage for this pattern, now rather than in the first solve (EisenstatDilu::size_for).
  if (eisenstat_ && blocks_ == Blocks::GaussSeidel) gauss_seidel_.size_for(n, row_columns.size());
  const std::size_t values = n * static_cast<std::size_t>(bs_);
  split_b_hat_.resize(values);
  if (float_cg_vectors_) {
    split_y_hat_float_.resize(values);
    cg_work_float_.resize(3 * values);
  } else {
    split_y_hat_.resize(values);
    cg_work_.resize(3 * values);
  }
}

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
// Block `v` (bs×bs; row-major, or column by column) into `block` as PETSc keeps it (column by column): added, or
// written over.
template <bool Add>
void put_block(double* block, const double* v, bool column_major) {
  constexpr int b = SbaijBlock::kBlock;
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
  constexpr int bb = SbaijBlock::kBlock * SbaijBlock::kBlock;
  return local_values_ + static_cast<std::size_t>(position) * bb;
}

void BlockSystem::add_at(PetscInt position, const double* v, bool column_major) {
  put_block<true>(local_block(position), v, column_major);
}

void BlockSystem::set_at(PetscInt position, const double* v, bool column_major) {
  put_block<false>(local_block(position), v, column_major);
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
  if (local_first_.empty() || bs_ != SbaijBlock::kBlock || !upper_only_)
    throw std::logic_error("BlockSystem::begin_replacement: needs an assembled 6x6-block SBAIJ matrix");
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
  const double zeros[36] = {};
  std::vector<double> total(bb);
  auto write = [&](PetscInt r) {
    const std::size_t i = static_cast<std::size_t>(r);
    const double* before = replaceable_.has[i] ? &replaceable_.blocks[i * bb] : zeros;
    const double* now = replaceable_next_.has[i] ? &replaceable_next_.blocks[i * bb] : zeros;
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
  if (local_first_.empty() && upper_only_ && bs_ == SbaijBlock::kBlock) {  // the pattern is set now
    SbaijBlock block(A_, "direct assembly");
    local_first_ = std::move(block.first);
    local_column_ = std::move(block.column);
  }
  // (The Eisenstat split reads the blocks itself; its rare point-block Jacobi fallback then multiplies in double.)
  if (single_precision_product_ && upper_only_ && bs_ == SbaijBlock::kBlock && !eisenstat_) product_.attach(A_);
}

void BlockSystem::set_near_nullspace(std::span<const double> modes, int count) {
  const std::size_t n = static_cast<std::size_t>(n_owned_) * static_cast<std::size_t>(bs_);
  std::vector<Vec> vecs(static_cast<std::size_t>(count));
  for (int k = 0; k < count; ++k) {
    petsc_check(VecDuplicate(y_, &vecs[k]), "VecDuplicate");
    PetscScalar* v = nullptr;
    petsc_check(VecGetArray(vecs[k], &v), "VecGetArray");
    std::copy_n(modes.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(k) * n), n, v);
    petsc_check(VecRestoreArray(vecs[k], &v), "VecRestoreArray");
    for (int j = 0; j < k; ++j) {  // modified Gram–Schmidt: MatNullSpaceCreate wants orthonormal vectors
      PetscScalar dot = 0;
      petsc_check(VecDot(vecs[k], vecs[j], &dot), "VecDot");
      petsc_check(VecAXPY(vecs[k], -dot, vecs[j]), "VecAXPY");
    }
    petsc_check(VecNormalize(vecs[k], nullptr), "VecNormalize");
  }
  if (near_null_) petsc_check(MatNullSpaceDestroy(&near_null_), "MatNullSpaceDestroy");
  petsc_check(MatNullSpaceCreate(comm_, PETSC_FALSE, count, vecs.data(), &near_null_), "MatNullSpaceCreate");
  for (Vec& v : vecs) petsc_check(VecDestroy(&v), "VecDestroy");
}

BlockSystem::Result BlockSystem::solve(std::span<const double> rhs, std::span<double> solution, double rtol,
                                       bool refresh) {
  refresh = refresh || !built_;
  if (eisenstat_) return blocks_ == Blocks::GaussSeidel ? solve_gauss_seidel(rhs, solution, rtol)
                                                        : solve_split(rhs, solution, rtol, refresh);
  const long shifted_before = block_shifted_, failed_before = block_failed_;
  if (fused_icc_cg_) {
    // What KSPSolve's set-up of the shell preconditioner does: factor when asked to and the matrix changed.
    if (refresh && icc_assembly_ != assemblies_) {
      factor_icc(A_);
      icc_assembly_ = assemblies_;
    }
    const FactorStatus status = factor_status_since(shifted_before, failed_before);
    if (status.failed) return failed_set_up(solution);
    built_ = true;
    Result r = run_fused(ksp_, rhs, solution, rtol, [this](const double* x, double* y) { icc_.apply(x, y); });
    r.preconditioner_shifted = status.shifted;
    return r;
  }
  if (refresh && multigrid_) {
    if (P_) petsc_check(MatDestroy(&P_), "MatDestroy");
    if (!is_type(A_, MATSEQAIJ, MATMPIAIJ)) petsc_check(MatConvert(A_, MATAIJ, MAT_INITIAL_MATRIX, &P_), "MatConvert");
    if (near_null_) petsc_check(MatSetNearNullSpace(P_ ? P_ : A_, near_null_), "MatSetNearNullSpace");
  }
  petsc_check(KSPSetOperators(ksp_, A_, P_ ? P_ : A_), "KSPSetOperators");
  petsc_check(KSPSetReusePreconditioner(ksp_, refresh ? PETSC_FALSE : PETSC_TRUE), "KSPSetReusePreconditioner");
  built_ = true;
  Result r = run(ksp_, rhs, solution, rtol);
  const FactorStatus status = factor_status_since(shifted_before, failed_before);
  if (status.failed) return failed_set_up(solution);
  r.preconditioner_shifted = status.shifted;
  return r;
}

void BlockSystem::count_factorisation(std::optional<double> shift) {
  ++block_factorisations_;
  if (!shift) ++block_failed_;
  else if (*shift > 0) ++block_shifted_;
}

BlockSystem::FactorStatus BlockSystem::factor_status_since(long shifted_before, long failed_before) const {
  // Each rank factors its own block: the answer is collective, so that every rank takes the same path next.
  int status[2] = {block_shifted_ > shifted_before ? 1 : 0, block_failed_ > failed_before ? 1 : 0};
  MPI_Allreduce(MPI_IN_PLACE, status, 2, MPI_INT, MPI_MAX, comm_);
  return {status[0] != 0, status[1] != 0};
}

BlockSystem::Result BlockSystem::failed_set_up(std::span<double> solution) {
  // No usable factor on some rank: nothing is kept, so the next solve factors afresh.
  built_ = false;
  icc_assembly_ = factored_assembly_ = -1;
  ++failed_set_ups_;
  std::fill(solution.begin(), solution.end(), 0.0);
  return Result{0, static_cast<int>(KSP_DIVERGED_PC_FAILED), std::numeric_limits<double>::quiet_NaN(), false};
}

BlockSystem::Result BlockSystem::solve_split(std::span<const double> rhs, std::span<double> solution, double rtol,
                                             bool refresh) {
  // The split operator is made of the matrix's own blocks, so a changed matrix is always loaded again: with
  // new pivots when asked to refresh, else with the last ones (a lagged preconditioner).
  const long shifted_before = block_shifted_, failed_before = block_failed_;
  // Across the ranks (rank_coupling.hpp) every rank factors or every rank rescales: the elimination runs across them.
  if (factored_assembly_ != assemblies_) dilu_across_ = couple_ranks();
  if (dilu_across_) {
    int rescaled = !refresh && factored_assembly_ != assemblies_ && dilu_.rescale(A_) ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &rescaled, 1, MPI_INT, MPI_MIN, comm_);
    if (refresh || (factored_assembly_ != assemblies_ && !rescaled)) {
      count_factorisation(dilu_.factor_across(A_, coupling_, comm_));
      ++across_set_ups_;
    }
  } else if (refresh || (factored_assembly_ != assemblies_ && !dilu_.rescale(A_))) {
    count_factorisation(dilu_.factor(A_));
  }
  const FactorStatus status = factor_status_since(shifted_before, failed_before);
  if (status.failed) return failed_set_up(solution);
  factored_assembly_ = assemblies_;
  built_ = true;
  Result r = solve_on_split(dilu_, rhs, solution, rtol);
  r.preconditioner_shifted = status.shifted;
  return r;
}

BlockSystem::Result BlockSystem::solve_on_split(const EisenstatDilu& split, std::span<const double> rhs,
                                                std::span<double> solution, double rtol) {
  if (fused_split_cg_) return run_split(split, rhs, solution, rtol, split_ksp_);
  return run_ksp(
      split_ksp_, split_b_, split_y_, kSplitForcing * rtol, [&](double* b) { to_split(split, rhs.data(), b); },
      [&](const double* y) { from_split(split, y, solution.data()); });
}

BlockSystem::Result BlockSystem::run_split(const EisenstatDilu& split, std::span<const double> rhs,
                                           std::span<double> solution, double rtol, KSP ksp) {
  if (coupled_ && !coupling_in_)  // (made with the default split; the fallback's may be the first)
    for (Vec* v : {&coupling_in_, &coupling_out_}) petsc_check(VecDuplicate(y_, v), "VecDuplicate");
  const std::size_t n = rhs.size();
  split_b_hat_.resize(n);
  to_split(split, rhs.data(), split_b_hat_.data());
  const double split_rtol = kSplitForcing * rtol;
  // ŷ in the vectors' type: from_split rounds it to floats anyway.
  const auto run = [&](auto& y_hat, auto& work) {
    using T = typename std::remove_reference_t<decltype(work)>::value_type;
    y_hat.resize(n);
    const FusedCgResult cg =
        fused_cg(comm_, n, split_b_hat_.data(), y_hat.data(), split_rtol, max_iterations(ksp), work,
                 [&](const T* p, T* q) { return apply_split(split, p, q); });
    from_split(split, static_cast<const T*>(y_hat.data()), solution.data());
    return cg;
  };
  const FusedCgResult cg = float_cg_vectors_ && split_rtol >= kFloatVectorsRtol
                               ? run(split_y_hat_float_, cg_work_float_)
                               : run(split_y_hat_, cg_work_);
  return to_result(cg);
}

bool BlockSystem::couple_ranks() {
  if (!across_ || across_refused_) return false;
  if (coupling_assembly_ != assemblies_) {
    coupling_assembly_ = assemblies_;
    if (!coupling_.set_up(A_, groups_)) {  // the same answer on every rank
      across_refused_ = true;  // (a caller's promise broken once is not tried again)
      log::info("the matrix couples rows across ranks outside their groups; the Gauss-Seidel and D-ILU sweeps leave "
                "the blocks between ranks out (block Jacobi across ranks)");
    }
  }
  return !across_refused_;
}

void BlockSystem::to_split(const EisenstatDilu& split, const double* b, double* b_hat) const {
  if (across(split)) return split.to_split_across(b, b_hat, coupling_);
  split.to_split(b, b_hat);
}

template <class V>
void BlockSystem::from_split(const EisenstatDilu& split, const V* y_hat, double* y) const {
  if (across(split)) return split.from_split_across(y_hat, y, coupling_);
  split.from_split(y_hat, y);
}

double BlockSystem::apply_split(const double* u, double* out) const { return apply_split(split(), u, out); }

template <class V>
double BlockSystem::apply_split(const EisenstatDilu& split, const V* u, V* out) const {
  if (across(split)) return split.apply_across(u, out, coupling_);
  return split.apply(u, out, coupled_, interface_rows_, [this](const double* z, double* w) { rank_coupling(z, w); });
}
template double BlockSystem::apply_split(const EisenstatDilu&, const double*, double*) const;
template double BlockSystem::apply_split(const EisenstatDilu&, const float*, float*) const;

void BlockSystem::rank_coupling(const double* z, double* w) const {
  // PETSc's product reads and writes our arrays in place (MatMult does not write its input).
  petsc_check(VecPlaceArray(coupling_in_, const_cast<double*>(z)), "VecPlaceArray");
  petsc_check(VecPlaceArray(coupling_out_, w), "VecPlaceArray");
  Mat local = nullptr;
  petsc_check(MatGetDiagonalBlock(A_, &local), "MatGetDiagonalBlock");
  void (*product)(void) = nullptr;
  petsc_check(MatGetOperation(local, MATOP_MULT, &product), "MatGetOperation");
  petsc_check(MatSetOperation(local, MATOP_MULT, reinterpret_cast<void (*)(void)>(zero_multiply)), "MatSetOperation");
  const PetscErrorCode error = MatMult(A_, coupling_in_, coupling_out_);
  petsc_check(MatSetOperation(local, MATOP_MULT, product), "MatSetOperation");
  petsc_check(VecResetArray(coupling_in_), "VecResetArray");
  petsc_check(VecResetArray(coupling_out_), "VecResetArray");
  petsc_check(error, "MatMult");
}

namespace {
// Inverts one SPD block in place (B: fixed size, or Eigen::Dynamic with the size bs).
template <int B>
void invert_block(double* d, int bs) {
  using Block = Eigen::Matrix<double, B, B, Eigen::RowMajor>;  // PETSc blocks are row-major
  Eigen::Map<Block> block(d, bs, bs);
  // SBAIJ holds the upper triangle: mirror it, and so read every block the same way.
  block.template triangularView<Eigen::StrictlyLower>() = block.transpose();
  bool inverted = false;
  if constexpr (B != Eigen::Dynamic) {
    inverted = cholesky_inverse<B>(d, d);
  } else {
    const Eigen::LLT<Block> llt(block);
    if (llt.info() == Eigen::Success) block = llt.solve(Block::Identity(bs, bs));
    inverted = llt.info() == Eigen::Success;
  }
  if (!inverted) {  // not positive definite (only an unprojected Hessian gets here): scale by |diagonal|
    const Eigen::Matrix<double, B, 1> a = block.diagonal().cwiseAbs().cwiseMax(1e-300);
    block = a.cwiseInverse().asDiagonal();
  }
}

// y_r = D_r⁻¹ x_r for the n blocks of the inverted diagonal (floats: a preconditioner, read once per CG iteration;
// each block column by column).
template <int B>
void apply_blocks(const float* inverse, const double* x, double* y, PetscInt n, int bs) {
#if PERCUSSION_AVX2_KERNELS
  if constexpr (B == 6)
    if (avx2::supported()) return avx2::block_diagonal_apply(n, inverse, x, y);
#endif
  using Block = Eigen::Matrix<float, B, B, Eigen::ColMajor>;
  using Vector = Eigen::Matrix<double, B, 1>;
  for (PetscInt r = 0; r < n; ++r)
    Eigen::Map<Vector>(y + r * bs, bs).noalias() =
        Eigen::Map<const Block>(inverse + r * bs * bs, bs, bs).template cast<double>() *
        Eigen::Map<const Vector>(x + r * bs, bs);
}
}  // namespace

bool BlockSystem::factor_icc(Mat P) {
  const std::optional<double> shift = icc_.factor(P);
  count_factorisation(shift);
  return shift.has_value();
}

void BlockSystem::apply_icc(const double* x, double* y) const { icc_.apply(x, y); }

void BlockSystem::invert_diagonal() {
  const std::size_t bb = static_cast<std::size_t>(bs_ * bs_);
  // A block equal to the one its slot last inverted keeps that inverse. Between the Newton iterations of a step
  // (contact refreshes) only the particles whose contacts opened or closed change their diagonal blocks, and in the
  // broken, contact-rich steps that run on point-block Jacobi every solve inverted all of them again.
  if (inverted_diagonal_.size() != diagonal_.size() || diagonal_inverse_.size() != diagonal_.size()) {
    inverted_diagonal_.assign(diagonal_.size(), std::numeric_limits<double>::quiet_NaN());  // equal to no block
    diagonal_inverse_.assign(diagonal_.size(), 0.0f);
  }
  std::vector<PetscInt> idx(static_cast<std::size_t>(bs_));
  std::vector<double> block(bb);
  for (PetscInt r = 0; r < n_owned_; ++r) {
    double* d = block.data();
    total_diagonal(r, replaceable_, d);
    if (!diagonal_complete_) {  // some diagonal block was added elsewhere: read the assembled upper triangle
      for (int k = 0; k < bs_; ++k) idx[static_cast<std::size_t>(k)] = (first_row_ + r) * bs_ + k;
      for (int k = 0; k < bs_; ++k)
        petsc_check(MatGetValues(A_, 1, &idx[static_cast<std::size_t>(k)], bs_ - k, &idx[static_cast<std::size_t>(k)],
                                 d + k * bs_ + k),
                    "MatGetValues");
    }
    double* last = &inverted_diagonal_[static_cast<std::size_t>(r) * bb];
    if (std::equal(d, d + bb, last)) continue;  // (never for a NaN: NaN equals nothing)
    std::copy_n(d, bb, last);
    if (bs_ == 6) invert_block<6>(d, bs_);
    else invert_block<Eigen::Dynamic>(d, bs_);
    float* inverse = &diagonal_inverse_[static_cast<std::size_t>(r) * bb];
    for (int i = 0; i < bs_; ++i)  // to floats, column by column (d is row-major)
      for (int j = 0; j < bs_; ++j) inverse[j * bs_ + i] = static_cast<float>(d[i * bs_ + j]);
    ++diagonal_inversions_;
  }
  diagonal_inverted_ = true;
}

void BlockSystem::apply_block_jacobi(const double* x, double* y) const {
  if (bs_ == 6) apply_blocks<6>(diagonal_inverse_.data(), x, y, n_owned_, bs_);
  else apply_blocks<Eigen::Dynamic>(diagonal_inverse_.data(), x, y, n_owned_, bs_);
}

bool BlockSystem::set_up_gauss_seidel() {
  if (gauss_seidel_assembly_ != assemblies_) {
    // The diagonal blocks of an assembled Newton matrix are SPD (inertia plus projected terms); a matrix with one
    // that is not (an unprojected Hessian) is left to point-block Jacobi, which inverts |diagonal|, until the next
    // assembly. After a contact refresh, which adds to the rows of the contacts that opened or closed (a few
    // percent of the rows after the first refreshes of a step), only those rows are set up again.
    int elsewhere = changed_elsewhere_ ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &elsewhere, 1, MPI_INT, MPI_MAX, comm_);
    const bool full = all_rows_changed_ || elsewhere;
    int usable = gauss_seidel_.update(A_, full ? std::span<const char>() : std::span<const char>(changed_rows_)) ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &usable, 1, MPI_INT, MPI_MIN, comm_);
    gauss_seidel_usable_ = usable != 0;
    across_ready_ = gauss_seidel_usable_ && couple_ranks();
    if (across_ready_) ++across_set_ups_;
    gauss_seidel_assembly_ = assemblies_;
    all_rows_changed_ = changed_elsewhere_ = false;
    std::fill(changed_rows_.begin(), changed_rows_.end(), 0);
  }
  return gauss_seidel_usable_;
}

BlockSystem::Result BlockSystem::solve_gauss_seidel(std::span<const double> rhs, std::span<double> solution,
                                                    double rtol) {
  // Set up from the matrix as it is whatever `refresh` says: the split is made of its own blocks, and forming
  // them is all the set-up there is.
  if (!set_up_gauss_seidel()) return failed_set_up(solution);
  built_ = true;
  return solve_on_split(gauss_seidel_, rhs, solution, rtol);
}

BlockSystem::Result BlockSystem::solve_fallback(std::span<const double> rhs, std::span<double> solution,
                                                double rtol) {
  make_fallback_ksp();
  if (!gauss_seidel_fallback_ || blocks_ == Blocks::GaussSeidel || !fused_fallback_cg_ || !upper_only_ ||
      bs_ != SbaijBlock::kBlock)
    return solve_block_jacobi(rhs, solution, rtol);
  if (!set_up_gauss_seidel()) return solve_block_jacobi(rhs, solution, rtol);
  return run_split(gauss_seidel_, rhs, solution, rtol, fallback_);
}

void BlockSystem::make_fallback_ksp() {
  if (!fallback_) {
    fallback_ = make_cg(comm_, prefix_ + "fallback_", PCSHELL);
    PC pc;
    petsc_check(KSPGetPC(fallback_, &pc), "KSPGetPC");
    PCType type = nullptr;
    petsc_check(PCGetType(pc, &type), "PCGetType");
    if (type && std::string(type) == PCSHELL) {  // unless -<prefix>fallback_pc_type chose another
      petsc_check(PCShellSetContext(pc, this), "PCShellSetContext");
      petsc_check(PCShellSetApply(pc, apply_shell<&BlockSystem::apply_block_jacobi>), "PCShellSetApply");
      petsc_check(PCShellSetName(pc, "point-block Jacobi"), "PCShellSetName");
      fused_fallback_cg_ = fused_cg_allowed(fallback_, prefix_);
    }
  }
}

BlockSystem::Result BlockSystem::solve_block_jacobi(std::span<const double> rhs, std::span<double> solution,
                                                    double rtol) {
  make_fallback_ksp();
  if (!diagonal_inverted_) invert_diagonal();
  if (fused_fallback_cg_)
    return run_fused(fallback_, rhs, solution, rtol, [this](const double* x, double* y) { apply_block_jacobi(x, y); });
  petsc_check(KSPSetOperators(fallback_, A_, A_), "KSPSetOperators");
  return run(fallback_, rhs, solution, rtol);
}

void BlockSystem::multiply(const double* x, double* y) const {
  // A's own MatMult (its local block's product is the single-precision one when attached), on the caller's arrays.
  petsc_check(VecPlaceArray(product_in_, x), "VecPlaceArray");
  petsc_check(VecPlaceArray(product_out_, y), "VecPlaceArray");
  const PetscErrorCode error = MatMult(A_, product_in_, product_out_);
  petsc_check(VecResetArray(product_out_), "VecResetArray");
  petsc_check(VecResetArray(product_in_), "VecResetArray");
  petsc_check(error, "MatMult");
}

template <class Precondition>
BlockSystem::Result BlockSystem::run_fused(KSP ksp, std::span<const double> rhs, std::span<double> solution,
                                           double rtol, Precondition&& precondition) {
  if (!product_in_) petsc_check(MatCreateVecs(A_, &product_in_, &product_out_), "MatCreateVecs");
  const std::size_t n = rhs.size();
  return to_result(fused_pcg(
      comm_, n, rhs.data(), solution.data(), rtol, max_iterations(ksp), cg_work_,
      [&](const double* p, double* q) {
        multiply(p, q);
        return local_dot(p, q, n);
      },
      precondition));
}

BlockSystem::Result BlockSystem::run(KSP ksp, std::span<const double> rhs, std::span<double> solution, double rtol) {
  return run_ksp(
      ksp, b_, y_, rtol, [&](double* b) { std::copy(rhs.begin(), rhs.end(), b); },
      [&](const double* y) { std::copy(y, y + solution.size(), solution.begin()); });
}

template <class Load, class Store>
BlockSystem::Result BlockSystem::run_ksp(KSP ksp, Vec b, Vec y, double rtol, Load&& load, Store&& store) {
  PetscScalar* bb = nullptr;
  petsc_check(VecGetArray(b, &bb), "VecGetArray");
  load(bb);
  petsc_check(VecRestoreArray(b, &bb), "VecRestoreArray");
  petsc_check(VecSet(y, 0.0), "VecSet");  // CG from zero keeps the slope of the line search negative
  petsc_check(KSPSetTolerances(ksp, rtol, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT), "KSPSetTolerances");
  petsc_check(KSPSolve(ksp, b, y), "KSPSolve");
  Result r{};
  KSPConvergedReason reason;
  petsc_check(KSPGetConvergedReason(ksp, &reason), "KSPGetConvergedReason");
  petsc_check(KSPGetIterationNumber(ksp, &r.iterations), "KSPGetIterationNumber");
  petsc_check(KSPGetResidualNorm(ksp, &r.residual_norm), "KSPGetResidualNorm");
  r.reason = static_cast<int>(reason);
  const PetscScalar* yy = nullptr;
  petsc_check(VecGetArrayRead(y, &yy), "VecGetArrayRead");
  store(yy);
  petsc_check(VecRestoreArrayRead(y, &yy), "VecRestoreArrayRead");
  return r;
}

}  // namespace percussion::solvers
