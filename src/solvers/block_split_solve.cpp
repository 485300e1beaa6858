#include "percussion/solvers/block_system.hpp"

#include <type_traits>
#include <vector>

#include "percussion/core/log.hpp"
#include "percussion/solvers/fused_cg_ksp.hpp"
#include "block_system_internal.hpp"

namespace percussion::solvers {
namespace {
// The local block's product replaced by zero: MatMult of the parallel matrix then gives only the blocks that
// couple ranks.
PetscErrorCode zero_multiply(Mat, Vec, Vec y) { return VecSet(y, 0.0); }
}  // namespace

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
  if (fused_split_cg_) return run_split(split, rhs, solution, rtol, ksp_);
  // PETSc's Krylov method: the preconditioner (block_preconditioners.hpp) takes the system to the split one and back.
  petsc_check(KSPSetOperators(ksp_, A_, A_), "KSPSetOperators");
  return run(ksp_, rhs, solution, detail::kSplitForcing * rtol);
}

BlockSystem::Result BlockSystem::run_split(const EisenstatDilu& split, std::span<const double> rhs,
                                           std::span<double> solution, double rtol, KSP ksp) {
  if (coupled_ && !coupling_in_)  // (made with the default split; the fallback's may be the first)
    for (Vec* v : {&coupling_in_, &coupling_out_}) petsc_check(VecDuplicate(y_, v), "VecDuplicate");
  const std::size_t n = rhs.size();
  split_b_hat_.resize(n);
  to_split(split, rhs.data(), split_b_hat_.data());
  const double split_rtol = detail::kSplitForcing * rtol;
  // ŷ in the vectors' type: from_split rounds it to floats anyway.
  const auto run = [&](auto& y_hat, auto& work) {
    using T = typename std::remove_reference_t<decltype(work)>::value_type;
    y_hat.resize(n);
    const FusedCgResult cg =
        run_fused_cg(ksp, comm_, n, split_b_hat_.data(), y_hat.data(), split_rtol, work,
                     [&](const T* p, T* q) { return apply_split(split, p, q); });
    from_split(split, static_cast<const T*>(y_hat.data()), solution.data());
    return cg;
  };
  const FusedCgResult cg = float_cg_vectors_ && split_rtol >= kFloatVectorsRtol
                               ? run(split_y_hat_float_, cg_work_float_)
                               : run(split_y_hat_, cg_work_);
  return detail::to_result(cg);
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
template void BlockSystem::from_split(const EisenstatDilu&, const double*, double*) const;
template void BlockSystem::from_split(const EisenstatDilu&, const float*, double*) const;

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


}  // namespace percussion::solvers
