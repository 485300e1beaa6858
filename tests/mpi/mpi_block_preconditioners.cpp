// The project's Krylov method and preconditioners under their PETSc names, on 1, 2 and 3 ranks: -<prefix>pc_type
// selects each as use_blocks() does; -<prefix>ksp_monitor and -<prefix>ksp_converged_reason watch the fused CG that
// runs without them, and change nothing of its solve; PETSc's Krylov methods run the registered preconditioners, and
// the fused CG runs PETSc's; percussion_icc_sp also stands alone on a matrix of one's own.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscksp.h>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <cmath>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "percussion/solvers/block_preconditioners.hpp"
#include "percussion/solvers/fused_cg_ksp.hpp"
#include "../support/block_matrix_support.hpp"
#include "../support/ring_system_support.hpp"

namespace mpi_block_preconditioners {

using percussion::solvers::BlockSystem;
using namespace percussion::test;
namespace solvers = percussion::solvers;

namespace {

struct Solve {
  std::vector<double> y;
  BlockSystem::Result result;
  BlockSystem::Blocks blocks;
};

// The ring solved to `rtol` by a fresh system under `prefix`, whose default blocks are `blocks`; `fallback` solves by
// the point-block Jacobi fallback instead.
Solve solve_ring(const std::string& prefix, BlockSystem::Blocks blocks, bool fallback = false, double rtol = 1e-8) {
  const RingSystem ring = world_ring();
  const int first = ring.rank * kRowsPerRank;
  std::vector<double> rhs(6 * kRowsPerRank);
  for (int i = 0; i < 6 * kRowsPerRank; ++i) rhs[static_cast<std::size_t>(i)] = std::cos(0.3 + first * 6 + i);
  BlockSystem sys(MPI_COMM_WORLD, prefix, 6);
  sys.use_blocks(blocks);
  preallocate(sys);
  ring.add_to(sys, true);
  Solve s{std::vector<double>(rhs.size()), {}, blocks};
  s.result = fallback ? sys.solve_block_jacobi(rhs, s.y, rtol) : sys.solve(rhs, s.y, rtol);
  s.blocks = sys.blocks();
  return s;
}

void set_option(const std::string& name, const char* value) {
  ASSERT_EQ(PetscOptionsSetValue(nullptr, name.c_str(), value), 0);
}

int rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// Lines of `text` that contain `what`.
int count_lines(const std::string& text, const std::string& what) {
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(what) != std::string::npos ? 1 : 0;
  return n;
}

const BlockSystem::Blocks kAllBlocks[] = {BlockSystem::Blocks::GaussSeidel, BlockSystem::Blocks::Dilu,
                                          BlockSystem::Blocks::Icc};

}  // namespace

// -<prefix>pc_type NAME gives what use_blocks() gives: the same iterations and solution, bit for bit.
TEST(BlockPreconditioners, EachNameSelectsItsBlocks) {
  for (const BlockSystem::Blocks blocks : kAllBlocks) {
    const Solve by_call = solve_ring("nametest_", blocks);
    set_option("-nametest_pc_type", BlockSystem::blocks_pc(blocks));
    // (The other default: only the option can make the two solves agree.)
    const BlockSystem::Blocks other =
        blocks == BlockSystem::Blocks::Icc ? BlockSystem::Blocks::GaussSeidel : BlockSystem::Blocks::Icc;
    const Solve by_name = solve_ring("nametest_", other);
    PetscOptionsClearValue(nullptr, "-nametest_pc_type");
    const std::string name = BlockSystem::blocks_pc(blocks);
    EXPECT_TRUE(by_name.blocks == blocks) << name;
    EXPECT_EQ(by_call.result.reason, KSP_CONVERGED_RTOL) << name;
    EXPECT_GT(by_call.result.iterations, 2) << name;
    EXPECT_EQ(by_name.result.iterations, by_call.result.iterations) << name;
    EXPECT_EQ(by_name.y, by_call.y) << name;
  }
}

// The monitors and the converged-reason view report the fused CG's iterations (one residual line per iteration and
// the initial one; the reason with the count) and leave its solve as it was, bit for bit; also the fallback's. At a
// Newton forcing term's tolerance, where the split systems' CG keeps its vectors in floats.
TEST(BlockPreconditioners, MonitorsWatchTheFusedCgWithoutChangingIt) {
  for (const bool fallback : {false, true}) {
    // (The fallback's point-block Jacobi does not depend on the blocks.)
    const std::span<const BlockSystem::Blocks> all(kAllBlocks);
    for (const BlockSystem::Blocks blocks : fallback ? all.first(1) : all) {
      const std::string prefix = fallback ? "montest_fallback_" : "montest_";
      const Solve plain = solve_ring("montest_", blocks, fallback, 1e-3);
      set_option("-" + prefix + "ksp_monitor", nullptr);
      set_option("-" + prefix + "ksp_converged_reason", nullptr);
      if (rank() == 0) testing::internal::CaptureStdout();
      const Solve watched = solve_ring("montest_", blocks, fallback, 1e-3);
      std::fflush(stdout);
      const std::string out = rank() == 0 ? testing::internal::GetCapturedStdout() : std::string();
      PetscOptionsClearValue(nullptr, ("-" + prefix + "ksp_monitor").c_str());
      PetscOptionsClearValue(nullptr, ("-" + prefix + "ksp_converged_reason").c_str());
      const std::string name = std::string(BlockSystem::blocks_pc(blocks)) + (fallback ? " (fallback)" : "");
      EXPECT_EQ(watched.result.iterations, plain.result.iterations) << name;
      EXPECT_EQ(watched.y, plain.y) << name;
      if (rank() != 0) continue;
      EXPECT_EQ(count_lines(out, "KSP Residual norm"), plain.result.iterations + 1) << name << "\n" << out;
      EXPECT_EQ(count_lines(out, "Linear " + prefix + " solve converged due to CONVERGED_RTOL iterations " +
                                     std::to_string(plain.result.iterations)),
                1)
          << name << "\n" << out;
    }
  }
}

// PETSc's CG and GMRES run the registered preconditioners (the Eisenstat ones through their pre- and post-solve),
// and the fused CG runs PETSc's block Jacobi through KSPSolve: each solves the ring as the fused CG with its own
// preconditioner does, to the tolerance.
TEST(BlockPreconditioners, KrylovMethodsAndPreconditionersCombine) {
  for (const BlockSystem::Blocks blocks : kAllBlocks) {
    const Solve fused = solve_ring("combotest_", blocks);
    for (const char* ksp : {"cg", "gmres"}) {
      set_option("-combotest_ksp_type", ksp);
      const Solve other = solve_ring("combotest_", blocks);
      PetscOptionsClearValue(nullptr, "-combotest_ksp_type");
      const std::string name = std::string(ksp) + " with " + BlockSystem::blocks_pc(blocks);
      EXPECT_GT(other.result.reason, 0) << name;
      EXPECT_LT(relative_difference(fused.y, other.y), 1e-6) << name;
    }
  }
  set_option("-combotest_pc_type", "bjacobi");
  set_option("-combotest_sub_pc_type", "icc");
  const Solve petsc = solve_ring("combotest_", BlockSystem::Blocks::Icc);
  set_option("-combotest_ksp_type", solvers::kFusedCg);
  const Solve fused_petsc_pc = solve_ring("combotest_", BlockSystem::Blocks::Icc);
  PetscOptionsClearValue(nullptr, "-combotest_ksp_type");
  PetscOptionsClearValue(nullptr, "-combotest_pc_type");
  PetscOptionsClearValue(nullptr, "-combotest_sub_pc_type");
  EXPECT_EQ(fused_petsc_pc.result.reason, KSP_CONVERGED_RTOL);
  EXPECT_EQ(fused_petsc_pc.result.iterations, petsc.result.iterations);
  EXPECT_LT(relative_difference(petsc.y, fused_petsc_pc.y), 1e-10);
}

// percussion_icc_sp on a sequential 6x6-block SBAIJ matrix of one's own, under PETSc's CG: the dense solution.
TEST(BlockPreconditioners, SinglePrecisionIccStandsAlone) {
  solvers::register_solvers();
  std::mt19937 gen(7);
  const Sparse s = coupled(9, true, gen);
  Mat A = s.petsc();
  Vec b, x;
  MatCreateVecs(A, &x, &b);
  for (PetscInt i = 0; i < 6 * s.n; ++i) VecSetValue(b, i, std::sin(0.5 * static_cast<double>(i) + 1.0), INSERT_VALUES);
  VecAssemblyBegin(b);
  VecAssemblyEnd(b);
  KSP ksp;
  KSPCreate(PETSC_COMM_SELF, &ksp);
  KSPSetOperators(ksp, A, A);
  KSPSetType(ksp, KSPCG);
  KSPSetTolerances(ksp, 1e-12, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT);
  PC pc;
  KSPGetPC(ksp, &pc);
  ASSERT_EQ(PCSetType(pc, solvers::kIccPc), 0);
  ASSERT_EQ(KSPSolve(ksp, b, x), 0);
  KSPConvergedReason reason;
  PetscInt its = 0;
  KSPGetConvergedReason(ksp, &reason);
  KSPGetIterationNumber(ksp, &its);
  EXPECT_GT(reason, 0);
  EXPECT_GT(its, 1);
  const Eigen::MatrixXd dense = s.dense();
  Eigen::VectorXd rhs(6 * s.n);
  for (int i = 0; i < 6 * s.n; ++i) rhs[i] = std::sin(0.5 * i + 1.0);
  const Eigen::VectorXd expected = dense.llt().solve(rhs);
  const PetscScalar* got = nullptr;
  VecGetArrayRead(x, &got);
  double diff = 0;
  for (int i = 0; i < 6 * s.n; ++i) diff = std::max(diff, std::abs(got[i] - expected[i]));
  VecRestoreArrayRead(x, &got);
  EXPECT_LT(diff, 1e-8 * expected.cwiseAbs().maxCoeff());
  KSPDestroy(&ksp);
  VecDestroy(&b);
  VecDestroy(&x);
  MatDestroy(&A);
}

}  // namespace mpi_block_preconditioners
