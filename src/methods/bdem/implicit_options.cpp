#include "implicit_options.hpp"

#include <petscsys.h>

#include <algorithm>
#include <cctype>
#include <string>

#include "percussion/core/error.hpp"
#include "percussion/core/log.hpp"
#include "percussion/methods/bdem/implicit_bdem.hpp"
#include "percussion/solvers/block_preconditioners.hpp"
#include "percussion/solvers/petsc_check.hpp"

namespace percussion::bdem {
namespace {

// -bdem_<name> [1|0|true|false|yes|no|on|off]: `unset` when absent, on when given alone or as one of the first four.
// single_precision_product 0 gives PETSc's double-precision product; half_precision_factor 0 keeps IC(0)'s factor
// in floats; gauss_seidel_fallback 0 gives the fallback point-block Jacobi instead of block symmetric Gauss–Seidel;
// half_precision_split (off unless given) has the D-ILU and Gauss–Seidel sweeps read their blocks as halves;
// float_cg_vectors 0 keeps CG's vectors on a split in double.
bool switch_option(const std::string& name, bool unset = true) {
  char value[32] = "";
  PetscBool set = PETSC_FALSE;
  solvers::petsc_check(PetscOptionsGetString(nullptr, "bdem_", ("-" + name).c_str(), value, sizeof value, &set),
                       "PetscOptionsGetString");
  std::string v(value);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (!set) return unset;
  if (v.empty() || v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  throw InputError("option -bdem_" + name + ": expected 1/0, true/false, yes/no or on/off, got '" +
                   std::string(value) + "'");
}

// -bdem_<name> as a string; `set` says whether it was given.
std::string string_option(const char* name, bool& set) {
  char value[256] = "";
  PetscBool given = PETSC_FALSE;
  solvers::petsc_check(PetscOptionsGetString(nullptr, "bdem_", name, value, sizeof value, &given),
                       "PetscOptionsGetString");
  set = given == PETSC_TRUE;
  return set ? std::string(value) : std::string();
}

// -bdem_pc_type names the Newton systems' preconditioner: percussion_gs (the default), percussion_dilu,
// percussion_icc_sp, percussion_pbjacobi (block_preconditioners.hpp) or one of PETSc's. The spelling of earlier
// versions, -bdem_sub_pc_type icc|dilu|sgs without -bdem_pc_type, still selects percussion_icc_sp, percussion_dilu
// or percussion_gs. Refuses PETSc's preconditioners that fail on 6x6-block SBAIJ (SOR and Eisenstat's SSOR: "SSOR
// for block size > 1 is not yet implemented", then a crash in PETSc 3.18).
solvers::BlockSystem::Blocks blocks_option() {
  using Blocks = solvers::BlockSystem::Blocks;
  bool pc_set = false, sub_set = false;
  const std::string pc = string_option("-pc_type", pc_set), sub = string_option("-sub_pc_type", sub_set);
  if (pc == "sor" || pc == "eisenstat")
    throw InputError("option -bdem_pc_type " + pc + ": PETSc has no SOR for the 6x6-block Newton matrix; -bdem_pc_type " +
                     solvers::kGaussSeidelPc + " gives block symmetric Gauss-Seidel with Eisenstat's trick");
  if (pc == "shell")
    throw InputError(std::string("option -bdem_pc_type shell: the project's preconditioners have names now: ") +
                     solvers::kGaussSeidelPc + " (the default), " + solvers::kDiluPc + ", " + solvers::kIccPc + " or " +
                     solvers::kPointBlockJacobiPc);
  if (!pc_set) {
    if (!sub_set) return Blocks::GaussSeidel;
    Blocks blocks;
    if (sub == "icc") blocks = Blocks::Icc;
    else if (sub == "dilu") blocks = Blocks::Dilu;
    else if (sub == "sgs") blocks = Blocks::GaussSeidel;
    else
      throw InputError("option -bdem_sub_pc_type: the default preconditioner's blocks are icc, dilu or sgs, got '" + sub +
                       "' (for PETSc's, add -bdem_pc_type bjacobi; the project's are named by -bdem_pc_type " +
                       solvers::kIccPc + ", " + solvers::kDiluPc + " or " + solvers::kGaussSeidelPc + ")");
    log::info("option -bdem_sub_pc_type " + sub + " selects -bdem_pc_type " +
              solvers::BlockSystem::blocks_pc(blocks) + ", the name to use");
    return blocks;
  }
  // -bdem_sub_pc_type then belongs to PETSc's block preconditioners (bjacobi, asm).
  if (sub_set && (sub == "dilu" || sub == "sgs"))
    throw InputError("option -bdem_sub_pc_type " + sub + " (command line or implicit.petsc_options) is for the "
                     "default preconditioner, not -bdem_pc_type " + pc + ": give PETSc's, e.g. -bdem_sub_pc_type icc, "
                     "or -bdem_pc_type " + (sub == "dilu" ? solvers::kDiluPc : solvers::kGaussSeidelPc));
  if (pc == solvers::kGaussSeidelPc || pc == solvers::kPointBlockJacobiPc) return Blocks::GaussSeidel;
  if (pc == solvers::kDiluPc) return Blocks::Dilu;
  return Blocks::Icc;
}

}  // namespace

ScenePetscOptions::ScenePetscOptions(const BdemScene& scene) {
  for (const auto& [name, value] : scene.implicit.petsc_options) {
    PetscBool set = PETSC_FALSE;
    solvers::petsc_check(PetscOptionsHasName(nullptr, nullptr, name.c_str(), &set), "PetscOptionsHasName");
    if (set) continue;  // the command line (or an outer scene) wins
    solvers::petsc_check(PetscOptionsSetValue(nullptr, name.c_str(), value.empty() ? nullptr : value.c_str()),
                         "PetscOptionsSetValue");
    inserted_.push_back(name);
  }
}

ScenePetscOptions::~ScenePetscOptions() {
  for (const std::string& name : inserted_) PetscOptionsClearValue(nullptr, name.c_str());
}

solvers::BlockSystem::Blocks configure_newton_system(solvers::BlockSystem& system) {
  system.use_single_precision_product(switch_option("single_precision_product"));
  system.use_half_precision_factor(switch_option("half_precision_factor"));
  system.use_half_precision_split(switch_option("half_precision_split", false));
  system.use_float_cg_vectors(switch_option("float_cg_vectors"));
  system.use_gauss_seidel_fallback(switch_option("gauss_seidel_fallback"));
  system.use_sweeps_across_ranks(switch_option("sweeps_across_ranks"));
  const solvers::BlockSystem::Blocks blocks = blocks_option();
  system.use_blocks(blocks);
  return blocks;
}

}  // namespace percussion::bdem
