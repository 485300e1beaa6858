#include "percussion/solvers/block_preconditioners.hpp"

#include <petsc/private/pcimpl.h>

#include <exception>
#include <string>

#include "percussion/solvers/block_system.hpp"
#include "percussion/solvers/petsc_check.hpp"
#include "percussion/solvers/single_precision_icc.hpp"

namespace percussion::solvers {

// What the preconditioners reach inside their BlockSystem (a friend of it).
struct BlockPreconditionerAccess {
  static const EisenstatDilu& split(const BlockSystem& s) { return s.split(); }
  static Mat split_operator(const BlockSystem& s) { return s.split_op_; }
  static void to_split(const BlockSystem& s, const double* b, double* b_hat) { s.to_split(s.split(), b, b_hat); }
  static void from_split(const BlockSystem& s, const double* y_hat, double* y) {
    s.from_split(s.split(), y_hat, y);
  }
};

namespace {

using Access = BlockPreconditionerAccess;

struct PcData {
  BlockSystem* owner = nullptr;
  SinglePrecisionIcc icc;        // percussion_icc_sp's factor when no BlockSystem owns the PC
  Mat operator_saved = nullptr;  // the Eisenstat PCs: the true operator while the KSP runs on the split one
  Vec saved = nullptr;           // ... and the true right-hand side
};

PcData& data_of(PC pc) { return *static_cast<PcData*>(pc->data); }

// f(), a failure returned as an error code with its text (PETSc is C).
template <class F>
PetscErrorCode guarded(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", e.what());
  }
  return 0;
}

PetscErrorCode needs_owner(PC pc) {
  PetscCheck(data_of(pc).owner, PetscObjectComm(reinterpret_cast<PetscObject>(pc)), PETSC_ERR_SUP,
             "%s takes its set-up from a percussion BlockSystem; with a matrix of your own use percussion_icc_sp or "
             "PETSc's preconditioners",
             reinterpret_cast<PetscObject>(pc)->type_name);
  return 0;
}

PetscErrorCode destroy(PC pc) {
  PcData* data = static_cast<PcData*>(pc->data);
  if (data && data->saved) PetscCall(VecDestroy(&data->saved));
  delete data;
  pc->data = nullptr;
  return 0;
}

// (The on-array callbacks: x's array in, y's array out.)
template <class F>
PetscErrorCode on_arrays(Vec x, Vec y, F&& f) {
  const PetscScalar* in = nullptr;
  PetscScalar* out = nullptr;
  PetscCall(VecGetArrayRead(x, &in));
  PetscCall(VecGetArray(y, &out));
  PetscCall(guarded([&] { f(in, out); }));
  PetscCall(VecRestoreArray(y, &out));
  PetscCall(VecRestoreArrayRead(x, &in));
  return 0;
}

// percussion_icc_sp. A failed factorisation is not an error: the application then gives NaN, which CG's next dot
// product carries to every rank, so the solve ends diverged on all of them together.
PetscErrorCode icc_set_up(PC pc) {
  PcData& data = data_of(pc);
  bool factored = false;
  PetscCall(guarded([&] {
    factored = data.owner ? data.owner->factor_icc(pc->pmat) : data.icc.factor(pc->pmat).has_value();
  }));
  PetscCall(PCSetFailedReason(pc, factored ? PC_NOERROR : PC_FACTOR_OTHER));
  return 0;
}

PetscErrorCode icc_apply(PC pc, Vec x, Vec y) {
  PcData& data = data_of(pc);
  return on_arrays(x, y, [&](const double* in, double* out) {
    if (data.owner) data.owner->apply_icc(in, out);
    else data.icc.apply(in, out);
  });
}

PetscErrorCode create_icc(PC pc) {
  pc->data = new PcData;
  pc->ops->setup = icc_set_up;
  pc->ops->apply = icc_apply;
  pc->ops->destroy = destroy;
  return 0;
}

// percussion_pbjacobi: the owner inverts the diagonal blocks before each solve.
PetscErrorCode owner_set_up(PC pc) { return needs_owner(pc); }

PetscErrorCode block_jacobi_apply(PC pc, Vec x, Vec y) {
  PetscCall(needs_owner(pc));
  const BlockSystem* owner = data_of(pc).owner;
  return on_arrays(x, y, [&](const double* in, double* out) { owner->apply_block_jacobi(in, out); });
}

PetscErrorCode create_block_jacobi(PC pc) {
  pc->data = new PcData;
  pc->ops->setup = owner_set_up;
  pc->ops->apply = block_jacobi_apply;
  pc->ops->destroy = destroy;
  return 0;
}

// percussion_gs and percussion_dilu, as PETSc's Eisenstat preconditioner works: before the solve b becomes b̂ and the
// KSP's operator the split one Ĉ; after it, ŷ becomes y and both are put back. The preconditioner itself is then
// the identity. (The owner set the split up from the assembled matrix before KSPSolve.)
PetscErrorCode split_pre_solve(PC pc, KSP, Vec b, Vec) {
  PetscCall(needs_owner(pc));
  PcData& data = data_of(pc);
  if (!data.saved) PetscCall(VecDuplicate(b, &data.saved));
  PetscCall(VecCopy(b, data.saved));
  PetscCall(on_arrays(data.saved, b, [&](const double* in, double* out) { Access::to_split(*data.owner, in, out); }));
  data.operator_saved = pc->mat;
  pc->mat = Access::split_operator(*data.owner);
  return 0;
}

PetscErrorCode split_post_solve(PC pc, KSP, Vec b, Vec x) {
  PcData& data = data_of(pc);
  PetscCall(VecCopy(x, b));  // ŷ, through b's storage, which gets the true b back below
  PetscCall(on_arrays(b, x, [&](const double* in, double* out) { Access::from_split(*data.owner, in, out); }));
  PetscCall(VecCopy(data.saved, b));
  pc->mat = data.operator_saved;
  data.operator_saved = nullptr;
  return 0;
}

PetscErrorCode identity_apply(PC, Vec x, Vec y) { return VecCopy(x, y); }

PetscErrorCode create_split(PC pc) {
  pc->data = new PcData;
  pc->ops->setup = owner_set_up;
  pc->ops->apply = identity_apply;
  pc->ops->presolve = split_pre_solve;
  pc->ops->postsolve = split_post_solve;
  pc->ops->destroy = destroy;
  return 0;
}

}  // namespace

void register_block_preconditioners() {
  petsc_check(PCRegister(kGaussSeidelPc, create_split), "PCRegister");
  petsc_check(PCRegister(kDiluPc, create_split), "PCRegister");
  petsc_check(PCRegister(kIccPc, create_icc), "PCRegister");
  petsc_check(PCRegister(kPointBlockJacobiPc, create_block_jacobi), "PCRegister");
}

bool is_block_preconditioner(const std::string& type) {
  return type == kGaussSeidelPc || type == kDiluPc || type == kIccPc || type == kPointBlockJacobiPc;
}

std::string pc_type(PC pc) {
  PCType type = nullptr;
  petsc_check(PCGetType(pc, &type), "PCGetType");
  return type ? type : "";
}

void bind_block_preconditioner(PC pc, BlockSystem* owner) {
  if (!is_block_preconditioner(pc_type(pc))) return;
  data_of(pc).owner = owner;
}

}  // namespace percussion::solvers
