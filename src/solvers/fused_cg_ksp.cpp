#include "percussion/solvers/fused_cg_ksp.hpp"

#include <petsc/private/kspimpl.h>

#include <cstring>
#include <string>

#include "percussion/solvers/block_preconditioners.hpp"

namespace percussion::solvers {

bool is_type(KSP ksp, const char* type) {
  PetscBool match = PETSC_FALSE;
  petsc_check(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(ksp), type, &match), "PetscObjectTypeCompare");
  return match == PETSC_TRUE;
}

bool runs_on_arrays(KSP ksp) {
  if (!is_type(ksp, kFusedCg)) return false;
  // The monitors are counted rather than compared with KSPMonitorResidual: a function's address taken here need not
  // be the one the PETSc library stores (its calls to itself may be bound inside it).
  const char* prefix = nullptr;
  petsc_check(KSPGetOptionsPrefix(ksp, &prefix), "KSPGetOptionsPrefix");
  PetscBool residual = PETSC_FALSE;
  petsc_check(PetscOptionsHasName(nullptr, prefix, "-ksp_monitor", &residual), "PetscOptionsHasName");
  return ksp->numbermonitors <= (residual ? 1 : 0);
}

FusedCgReport::FusedCgReport(KSP ksp, double rtol) : ksp_(ksp) {
  ksp->rtol = rtol;
  ksp->its = 0;
  ksp->reason = KSP_CONVERGED_ITERATING;
  if (ksp->res_hist_reset) ksp->res_hist_len = 0;
  max_iterations_ = ksp->max_it;
  monitored_ = ksp->numbermonitors > 0 || ksp->res_hist != nullptr;
}

void FusedCgReport::observe(PetscInt iteration, double residual_norm) const {
  ksp_->its = iteration;
  ksp_->rnorm = residual_norm;
  if (iteration == 0) ksp_->rnorm0 = residual_norm;
  petsc_check(KSPLogResidualHistory(ksp_, residual_norm), "KSPLogResidualHistory");
  petsc_check(KSPMonitor(ksp_, iteration, residual_norm), "KSPMonitor");
}

void FusedCgReport::finish(const FusedCgResult& result, bool view_reason) const {
  ksp_->its = result.iterations;
  ksp_->rnorm = result.residual_norm;
  ksp_->reason = result.reason;
  if (!view_reason) return;
  petsc_check(KSPConvergedReasonViewFromOptions(ksp_), "KSPConvergedReasonViewFromOptions");
  petsc_check(KSPViewFromOptions(ksp_, nullptr, "-ksp_view"), "KSPViewFromOptions");
}

namespace {

// The KSP's implementation data: the loop's work arrays, and two vectors that wrap its arrays for MatMult and PCApply.
struct FusedCgData {
  std::vector<double> work;
  Vec in = nullptr, out = nullptr;
};

// y = op(x) on the loop's arrays through the wrapping vectors (op reads in, writes out).
template <class Op>
void on_wrapped(FusedCgData& data, const double* x, double* y, Op&& op) {
  petsc_check(VecPlaceArray(data.in, x), "VecPlaceArray");
  petsc_check(VecPlaceArray(data.out, y), "VecPlaceArray");
  const PetscErrorCode error = op(data.in, data.out);
  petsc_check(VecResetArray(data.out), "VecResetArray");
  petsc_check(VecResetArray(data.in), "VecResetArray");
  petsc_check(error, "fusedcg operator or preconditioner");
}

PetscErrorCode solve(KSP ksp) {
  auto* data = static_cast<FusedCgData*>(ksp->data);
  PetscCheck(ksp->guess_zero, PetscObjectComm(reinterpret_cast<PetscObject>(ksp)), PETSC_ERR_SUP,
             "fusedcg starts from a zero initial guess");
  Mat A = nullptr;
  PetscCall(PCGetOperators(ksp->pc, &A, nullptr));  // (the operator a PCPreSolve may have replaced)
  if (!data->in) {
    PetscCall(VecDuplicate(ksp->vec_sol, &data->in));
    PetscCall(VecDuplicate(ksp->vec_sol, &data->out));
  }
  PetscInt n = 0;
  PetscCall(VecGetLocalSize(ksp->vec_rhs, &n));
  PetscBool none = PETSC_FALSE;
  PetscCall(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(ksp->pc), PCNONE, &none));
  const MPI_Comm comm = PetscObjectComm(reinterpret_cast<PetscObject>(ksp));
  const PetscScalar* b = nullptr;
  PetscScalar* x = nullptr;
  PetscCall(VecGetArrayRead(ksp->vec_rhs, &b));
  PetscCall(VecGetArray(ksp->vec_sol, &x));
  try {
    const auto size = static_cast<std::size_t>(n);
    const auto apply = [&](const double* p, double* q) {
      on_wrapped(*data, p, q, [&](Vec in, Vec out) { return MatMult(A, in, out); });
      return local_dot(p, q, size);
    };
    const FusedCgReport report(ksp, ksp->rtol);
    const FusedCgResult result =
        none ? fused_cg(comm, size, b, x, ksp->rtol, report.max_iterations(), data->work, apply, report)
             : fused_pcg(comm, size, b, x, ksp->rtol, report.max_iterations(), data->work, apply,
                         [&](const double* r, double* z) {
                           on_wrapped(*data, r, z, [&](Vec in, Vec out) { return KSP_PCApply(ksp, in, out); });
                         },
                         report);
    report.finish(result, false);  // (KSPSolve views the reason)
  } catch (const std::exception& e) {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", e.what());
  }
  PetscCall(VecRestoreArray(ksp->vec_sol, &x));
  PetscCall(VecRestoreArrayRead(ksp->vec_rhs, &b));
  return 0;
}

PetscErrorCode destroy(KSP ksp) {
  auto* data = static_cast<FusedCgData*>(ksp->data);
  if (data) {
    if (data->in) PetscCall(VecDestroy(&data->in));
    if (data->out) PetscCall(VecDestroy(&data->out));
    delete data;
  }
  ksp->data = nullptr;
  return 0;
}

PetscErrorCode set_up(KSP) { return 0; }

PetscErrorCode create(KSP ksp) {
  ksp->data = new FusedCgData;
  // The true residual with a preconditioner; without one (or on a split system) the natural norm is the same.
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_UNPRECONDITIONED, PC_LEFT, 3));
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_NATURAL, PC_LEFT, 2));
  ksp->ops->setup = set_up;
  ksp->ops->solve = solve;
  ksp->ops->destroy = destroy;
  ksp->ops->buildsolution = KSPBuildSolutionDefault;
  ksp->ops->buildresidual = KSPBuildResidualDefault;
  return 0;
}

}  // namespace

void register_solvers() {
  // (Registering again replaces the entry: a process that initialises PETSc anew after PetscFinalize, which empties
  // the lists, gets them back.)
  petsc_check(KSPRegister(kFusedCg, create), "KSPRegister");
  register_block_preconditioners();
}

}  // namespace percussion::solvers
