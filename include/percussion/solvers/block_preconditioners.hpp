#pragma once
// The project's preconditioners of symmetric 6x6-block SBAIJ systems, registered with PETSc (PCRegister) so that
// -<prefix>pc_type names each, whichever Krylov method runs (the fused CG, fused_cg_ksp.hpp, or PETSc's):
//   percussion_gs       block symmetric Gauss–Seidel applied by Eisenstat's trick (CG runs on the split system),
//                       sweeping across the ranks where the rows were ordered for it (eisenstat_dilu.hpp,
//                       rank_coupling.hpp); set up again from every assembled matrix.
//   percussion_dilu     D-ILU by the same trick (eisenstat_dilu.hpp), factored again when refreshed.
//   percussion_icc_sp   block Jacobi across ranks, each rank's block factored by IC(0) in single precision
//                       (single_precision_icc.hpp).
//   percussion_pbjacobi point-block Jacobi: the inverted 6x6 diagonal blocks, kept in floats (the fallback's).
// percussion_icc_sp stands alone on any SBAIJ 6x6-block matrix. The others take their set-up from the BlockSystem
// that owns the KSP (its lagging, refresh and cross-rank decisions are collective and belong to it): used elsewhere
// they stop with a PETSc error that says so.
#include <petscpc.h>

#include <string>

namespace percussion::solvers {

class BlockSystem;

inline constexpr char kGaussSeidelPc[] = "percussion_gs";
inline constexpr char kDiluPc[] = "percussion_dilu";
inline constexpr char kIccPc[] = "percussion_icc_sp";
inline constexpr char kPointBlockJacobiPc[] = "percussion_pbjacobi";

void register_block_preconditioners();
bool is_block_preconditioner(const std::string& pc_type);
// The type of `pc`, "" if none is set.
std::string pc_type(PC pc);
// `pc` (of one of these types) works for `owner` from now on.
void bind_block_preconditioner(PC pc, BlockSystem* owner);

}  // namespace percussion::solvers
