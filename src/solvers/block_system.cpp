#include "percussion/solvers/block_system.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "percussion/core/error.hpp"
#include "percussion/solvers/block_preconditioners.hpp"
#include "percussion/solvers/fused_cg_ksp.hpp"
#include "percussion/solvers/sbaij_block.hpp"
#include "block_system_internal.hpp"

namespace percussion::solvers {

namespace detail {

std::string asked_pc(const std::string& prefix, const std::string& default_pc) {
  char value[256] = "";
  PetscBool set = PETSC_FALSE;
  petsc_check(PetscOptionsGetString(nullptr, prefix.c_str(), "-pc_type", value, sizeof value, &set),
              "PetscOptionsGetString");
  return set ? std::string(value) : default_pc;
}

KSP make_ksp(MPI_Comm comm, const std::string& prefix, const std::string& default_pc, const std::string& system_prefix) {
  register_solvers();
  const std::string pc_name = asked_pc(prefix, default_pc);
  PetscBool petsc = PETSC_FALSE, set = PETSC_FALSE;
  petsc_check(PetscOptionsGetBool(nullptr, system_prefix.c_str(), "-petsc_cg", &petsc, &set), "PetscOptionsGetBool");
  KSP ksp;
  petsc_check(KSPCreate(comm, &ksp), "KSPCreate");
  petsc_check(KSPSetOptionsPrefix(ksp, prefix.c_str()), "KSPSetOptionsPrefix");
  const char* type = is_block_preconditioner(pc_name) && !petsc ? kFusedCg : KSPCG;
  petsc_check(KSPSetType(ksp, type), "KSPSetType");
  char asked[256] = "";
  petsc_check(PetscOptionsGetString(nullptr, prefix.c_str(), "-ksp_type", asked, sizeof asked, &set),
              "PetscOptionsGetString");
  const std::string krylov = set ? asked : type;
  // (Other Krylov methods keep their own default norms: GMRES, for one, has no natural norm.)
  if (krylov == KSPCG || krylov == kFusedCg) {
    const bool split = pc_name == kGaussSeidelPc || pc_name == kDiluPc;
    petsc_check(KSPSetNormType(ksp, split ? KSP_NORM_NATURAL : KSP_NORM_UNPRECONDITIONED), "KSPSetNormType");
  }
  PC pc;
  petsc_check(KSPGetPC(ksp, &pc), "KSPGetPC");
  petsc_check(PCSetType(pc, default_pc.c_str()), "PCSetType");
  petsc_check(KSPSetFromOptions(ksp), "KSPSetFromOptions");
  return ksp;
}

}  // namespace detail

namespace {

// y = Ĉ x, the Eisenstat split operator.
PetscErrorCode split_multiply(Mat op, Vec x, Vec y) {
  void* context = nullptr;
  PetscCall(MatShellGetContext(op, &context));
  const auto* system = static_cast<const BlockSystem*>(context);
  const PetscScalar* in = nullptr;
  PetscScalar* out = nullptr;
  PetscCall(VecGetArrayRead(x, &in));
  PetscCall(VecGetArray(y, &out));
  try {
    system->apply_split(in, out);
  } catch (const std::exception& e) {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", e.what());
  }
  PetscCall(VecRestoreArray(y, &out));
  PetscCall(VecRestoreArrayRead(x, &in));
  return 0;
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

const char* BlockSystem::blocks_pc(Blocks blocks) {
  switch (blocks) {
    case Blocks::Icc: return kIccPc;
    case Blocks::Dilu: return kDiluPc;
    case Blocks::GaussSeidel: break;
  }
  return kGaussSeidelPc;
}

void BlockSystem::destroy() {
  if (ksp_) KSPDestroy(&ksp_);
  if (fallback_) KSPDestroy(&fallback_);
  if (A_) MatDestroy(&A_);
  if (P_) MatDestroy(&P_);
  if (near_null_) MatNullSpaceDestroy(&near_null_);
  if (b_) VecDestroy(&b_);
  if (y_) VecDestroy(&y_);
  if (split_op_) MatDestroy(&split_op_);
  for (Vec* v : {&coupling_in_, &coupling_out_, &product_in_, &product_out_})
    if (*v) VecDestroy(v);
  built_ = false;
  fused_icc_cg_ = fused_split_cg_ = fused_fallback_cg_ = point_block_ = false;
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
  // SBAIJ stores the upper triangle with one column index per block: on the 6x6-block bond Hessian it
  // multiplies ~1.8x faster than BAIJ (which is ~1.4x faster than AIJ) and block Jacobi factors it without a
  // conversion; -<prefix>mat_type baij|aij overrides.
  petsc_check(MatCreate(comm_, &A_), "MatCreate");
  petsc_check(MatSetSizes(A_, n, n, PETSC_DETERMINE, PETSC_DETERMINE), "MatSetSizes");
  petsc_check(MatSetBlockSize(A_, bs_), "MatSetBlockSize");
  petsc_check(MatSetType(A_, MATSBAIJ), "MatSetType");
  petsc_check(MatSetOptionsPrefix(A_, prefix_.c_str()), "MatSetOptionsPrefix");
  petsc_check(MatSetFromOptions(A_), "MatSetFromOptions");
  // The full counts also bound the upper triangle (SBAIJ); assembly releases the slots left unused. A pattern that
  // follows allocates the SBAIJ matrix again (set_pattern): this allocation is only the diagonal blocks'.
  pattern_follows_ = pattern_follows && is_type(A_, MATSEQSBAIJ, MATMPISBAIJ);
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
  // The project's preconditioners and kernels are written for 6x6 blocks in SBAIJ; other matrices get PETSc's.
  own_blocks_ = upper_only_ && bs_ == SbaijBlock::kBlock;
  across_ = !local_row_.empty() && own_blocks_;
  const std::string default_pc = own_blocks_ ? blocks_pc(blocks_) : std::string(PCBJACOBI);
  const std::string asked = detail::asked_pc(prefix_, default_pc);
  if (is_block_preconditioner(asked) && asked != kPointBlockJacobiPc && !own_blocks_)
    throw InputError("option -" + prefix_ + "pc_type " + asked + " takes a symmetric 6x6-block matrix (SBAIJ); this "
                     "one has block size " + std::to_string(bs_) + ": choose one of PETSc's preconditioners");
  ksp_ = detail::make_ksp(comm_, prefix_, default_pc, prefix_);
  PC pc;
  petsc_check(KSPGetPC(ksp_, &pc), "KSPGetPC");
  const std::string t = pc_type(pc);
  bind_block_preconditioner(pc, this);
  if (t == kGaussSeidelPc) blocks_ = Blocks::GaussSeidel;
  else if (t == kDiluPc) blocks_ = Blocks::Dilu;
  else if (t == kIccPc) blocks_ = Blocks::Icc;
  eisenstat_ = t == kGaussSeidelPc || t == kDiluPc;
  point_block_ = t == kPointBlockJacobiPc;
  const bool fused = runs_on_arrays(ksp_);
  coupled_ = size > 1;
  if (eisenstat_) {
    // CG on the split system Ĉ ŷ = b̂ (eisenstat_dilu.hpp), whose operator is this shell.
    petsc_check(MatCreateShell(comm_, n, n, PETSC_DETERMINE, PETSC_DETERMINE, this, &split_op_), "MatCreateShell");
    petsc_check(MatShellSetOperation(split_op_, MATOP_MULT, reinterpret_cast<void (*)(void)>(split_multiply)),
                "MatShellSetOperation");
    petsc_check(MatSetOption(split_op_, MAT_SYMMETRIC, PETSC_TRUE), "MatSetOption");
    for (Vec* v : {&coupling_in_, &coupling_out_}) petsc_check(VecDuplicate(y_, v), "VecDuplicate");
    fused_split_cg_ = fused;
  } else if (t == kIccPc) {
    fused_icc_cg_ = fused;
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
  SbaijBlock block(A_, "direct assembly", bs_);
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
  if (point_block_) {
    built_ = true;
    return solve_block_jacobi(ksp_, rhs, solution, rtol);
  }
  const long shifted_before = block_shifted_, failed_before = block_failed_;
  if (fused_icc_cg_) {
    // What KSPSolve's set-up of the preconditioner does: factor when asked to and the matrix changed.
    if (refresh && icc_assembly_ != assemblies_) {
      factor_icc(A_);
      icc_assembly_ = assemblies_;
    }
    const FactorStatus status = factor_status_since(shifted_before, failed_before);
    if (status.failed) return failed_set_up(solution);
    built_ = true;
    Result r = run_fused(ksp_, rhs, solution, rtol, &BlockSystem::apply_icc);
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


void BlockSystem::multiply(const double* x, double* y) const {
  // A's own MatMult (its local block's product is the single-precision one when attached), on the caller's arrays.
  petsc_check(VecPlaceArray(product_in_, x), "VecPlaceArray");
  petsc_check(VecPlaceArray(product_out_, y), "VecPlaceArray");
  const PetscErrorCode error = MatMult(A_, product_in_, product_out_);
  petsc_check(VecResetArray(product_out_), "VecResetArray");
  petsc_check(VecResetArray(product_in_), "VecResetArray");
  petsc_check(error, "MatMult");
}

BlockSystem::Result BlockSystem::run_fused(KSP ksp, std::span<const double> rhs, std::span<double> solution,
                                           double rtol, void (BlockSystem::*precondition)(const double*, double*) const) {
  if (!product_in_) petsc_check(MatCreateVecs(A_, &product_in_, &product_out_), "MatCreateVecs");
  const std::size_t n = rhs.size();
  return detail::to_result(run_fused_pcg(
      ksp, comm_, n, rhs.data(), solution.data(), rtol, cg_work_,
      [&](const double* p, double* q) {
        multiply(p, q);
        return local_dot(p, q, n);
      },
      [&](const double* x, double* y) { (this->*precondition)(x, y); }));
}

BlockSystem::Result BlockSystem::run(KSP ksp, std::span<const double> rhs, std::span<double> solution, double rtol) {
  PetscScalar* b = nullptr;
  petsc_check(VecGetArray(b_, &b), "VecGetArray");
  std::copy(rhs.begin(), rhs.end(), b);
  petsc_check(VecRestoreArray(b_, &b), "VecRestoreArray");
  petsc_check(VecSet(y_, 0.0), "VecSet");  // CG from zero keeps the slope of the line search negative
  petsc_check(KSPSetTolerances(ksp, rtol, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT), "KSPSetTolerances");
  petsc_check(KSPSolve(ksp, b_, y_), "KSPSolve");
  Result r{};
  KSPConvergedReason reason;
  petsc_check(KSPGetConvergedReason(ksp, &reason), "KSPGetConvergedReason");
  petsc_check(KSPGetIterationNumber(ksp, &r.iterations), "KSPGetIterationNumber");
  petsc_check(KSPGetResidualNorm(ksp, &r.residual_norm), "KSPGetResidualNorm");
  r.reason = static_cast<int>(reason);
  const PetscScalar* y = nullptr;
  petsc_check(VecGetArrayRead(y_, &y), "VecGetArrayRead");
  std::copy(y, y + solution.size(), solution.begin());
  petsc_check(VecRestoreArrayRead(y_, &y), "VecRestoreArrayRead");
  return r;
}

}  // namespace percussion::solvers
