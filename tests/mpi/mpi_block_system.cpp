// The distributed 6x6-block system on 1, 2 and 3 ranks: the point-block Jacobi fallback inverts the diagonal
// blocks (to float rounding), whether every rank adds its own rows or another rank adds some of them, and its CG solves
// the same system as the default block Jacobi with single-precision IC(0) blocks, and as CG on the Eisenstat
// split with D-ILU blocks (whose operator needs the blocks coupling the ranks), also with lagged pivots; and block
// Gauss–Seidel sweeping across the ranks is that of one rank holding every row.
#include <gtest/gtest.h>
#include <mpi.h>

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "percussion/solvers/block_system.hpp"
#include "../support/ring_system_support.hpp"

namespace mpi_block_system {

using percussion::solvers::BlockSystem;
using namespace percussion::test;

TEST(BlockSystem, PointBlockJacobiInvertsTheDiagonalBlocksAndSolvesLikeIcc) {
  const RingSystem ring = world_ring();
  const int first = ring.rank * kRowsPerRank;
  std::vector<double> rhs(6 * kRowsPerRank);
  for (int i = 0; i < 6 * kRowsPerRank; ++i) rhs[static_cast<std::size_t>(i)] = std::sin(1.0 + first * 6 + i);

  std::vector<std::vector<double>> solutions;
  for (const bool own_rows_only : {true, false}) {
    BlockSystem sys(MPI_COMM_WORLD, "blocktest_", 6);
    preallocate(sys);
    ring.add_to(sys, own_rows_only);

    // Exactness of the preconditioner: D_g (D_g⁻¹ x) = x block by block, to float rounding (the inverses are
    // computed in double and kept in floats; |x| ≤ 1).
    std::vector<double> y(rhs.size()), jacobi(rhs.size()), icc(rhs.size());
    const auto rj = sys.solve_block_jacobi(rhs, jacobi, 1e-12);  // inverts the blocks
    sys.apply_block_jacobi(rhs.data(), y.data());
    double worst = 0;
    for (int r = 0; r < kRowsPerRank; ++r) {
      const Eigen::Map<const Eigen::Matrix<double, 6, 1>> yr(&y[6 * static_cast<std::size_t>(r)]);
      const Eigen::Map<const Eigen::Matrix<double, 6, 1>> xr(&rhs[6 * static_cast<std::size_t>(r)]);
      worst = std::max(worst, (ring.full_diagonal(first + r) * yr - xr).cwiseAbs().maxCoeff());
    }
    EXPECT_LT(worst, 1e-6) << (own_rows_only ? "own rows" : "rows added by other ranks");

    const auto ri = sys.solve(rhs, icc, 1e-12);
    EXPECT_GT(rj.reason, 0);
    EXPECT_GT(ri.reason, 0);
    double diff = 0, norm = 0;
    for (std::size_t k = 0; k < rhs.size(); ++k) {
      diff = std::max(diff, std::abs(jacobi[k] - icc[k]));
      norm = std::max(norm, std::abs(icc[k]));
    }
    MPI_Allreduce(MPI_IN_PLACE, &diff, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &norm, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    EXPECT_LT(diff, 1e-9 * norm);
    solutions.push_back(jacobi);
  }
  // Both ways of adding the blocks assemble the same matrix.
  double diff = 0;
  for (std::size_t k = 0; k < rhs.size(); ++k) diff = std::max(diff, std::abs(solutions[0][k] - solutions[1][k]));
  MPI_Allreduce(MPI_IN_PLACE, &diff, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_LT(diff, 1e-9);
}

TEST(BlockSystem, PointBlockJacobiInvertsOnlyTheDiagonalBlocksThatChanged) {
  // A Newton step's contact refreshes change only some particles' diagonal blocks: the others keep their inverses,
  // and the solve is the same to the bit as with every block inverted afresh.
  const RingSystem ring = world_ring();
  const int first = ring.rank * kRowsPerRank;
  std::vector<double> rhs(6 * kRowsPerRank);
  for (int i = 0; i < 6 * kRowsPerRank; ++i) rhs[static_cast<std::size_t>(i)] = std::cos(2.0 + first * 6 + i);
  const Block bump = 0.5 * Block::Identity();
  // The ring with row 3's diagonal block bumped (added by its owner).
  auto add_bumped = [&](BlockSystem& sys, bool own_rows_only) {
    ring.add_to(sys, own_rows_only, 1.0, false);
    if (ring.rank == 0) sys.add_block(3, 3, bump.data());
    sys.assemble();
  };
  for (const bool own_rows_only : {true, false}) {
    BlockSystem sys(MPI_COMM_WORLD, "blocktest_", 6);
    preallocate(sys);
    ring.add_to(sys, own_rows_only);
    std::vector<double> kept(rhs.size()), fresh(rhs.size());
    sys.solve_block_jacobi(rhs, kept, 1e-12);
    EXPECT_EQ(sys.diagonal_inversions(), kRowsPerRank);
    add_bumped(sys, own_rows_only);
    const auto r = sys.solve_block_jacobi(rhs, kept, 1e-12);
    EXPECT_GT(r.reason, 0);
    EXPECT_EQ(sys.diagonal_inversions(), kRowsPerRank + (ring.rank == 0 ? 1 : 0))
        << (own_rows_only ? "own rows" : "rows added by other ranks");

    BlockSystem afresh(MPI_COMM_WORLD, "blocktest_", 6);
    preallocate(afresh);
    add_bumped(afresh, own_rows_only);
    afresh.solve_block_jacobi(rhs, fresh, 1e-12);
    EXPECT_EQ(afresh.diagonal_inversions(), kRowsPerRank);
    long differ = 0;
    for (std::size_t k = 0; k < rhs.size(); ++k) differ += kept[k] != fresh[k] ? 1 : 0;
    EXPECT_EQ(differ, 0) << (own_rows_only ? "own rows" : "rows added by other ranks");
  }
}

TEST(BlockSystem, EisenstatDiluSolvesLikePointBlockJacobi) {
  const RingSystem ring = world_ring();
  const int first = ring.rank * kRowsPerRank;
  std::vector<double> rhs(6 * kRowsPerRank);
  for (int i = 0; i < 6 * kRowsPerRank; ++i) rhs[static_cast<std::size_t>(i)] = std::cos(2.0 + first * 6 + i);
  BlockSystem sys(MPI_COMM_WORLD, "blocktest_", 6);
  sys.use_blocks(BlockSystem::Blocks::Dilu);
  preallocate(sys);
  ring.add_to(sys, true);
  std::vector<double> reference(rhs.size()), split(rhs.size());
  ASSERT_GT(sys.solve_block_jacobi(rhs, reference, 1e-12).reason, 0);
  // The split operator holds float blocks: the solution is good to float rounding, not to 1e-12.
  const auto r = sys.solve(rhs, split, 1e-9);
  EXPECT_GT(r.reason, 0);
  EXPECT_FALSE(r.preconditioner_shifted);
  EXPECT_EQ(sys.block_factorisations(), 1);
  EXPECT_LT(relative_difference(reference, split), 1e-5);

  // The matrix doubled, the pivots kept (refresh false): the split takes the new blocks, so y halves.
  ring.add_to(sys, false, 2.0);
  const auto lagged = sys.solve(rhs, split, 1e-9, false);
  EXPECT_GT(lagged.reason, 0);
  EXPECT_EQ(sys.block_factorisations(), 1);
  EXPECT_LT(relative_difference(reference, split, 0.5), 1e-5);
}

// The fallback's block symmetric Gauss–Seidel (the Eisenstat split with the diagonal blocks as pivots) solves the
// system across ranks to float rounding, in fewer CG iterations than point-block Jacobi on the ring; a new matrix
// is set up again (the doubled matrix halves y); turned off, the fallback is point-block Jacobi.
TEST(BlockSystem, GaussSeidelFallbackSolvesTheSystem) {
  const RingSystem ring = world_ring();
  const int first = ring.rank * kRowsPerRank;
  std::vector<double> rhs(6 * kRowsPerRank);
  for (int i = 0; i < 6 * kRowsPerRank; ++i) rhs[static_cast<std::size_t>(i)] = std::sin(0.3 + first * 6 + i);
  BlockSystem sys(MPI_COMM_WORLD, "gstest_", 6);
  preallocate(sys);
  ring.add_to(sys, true);
  std::vector<double> reference(rhs.size()), gs(rhs.size());
  const auto jacobi = sys.solve_block_jacobi(rhs, reference, 1e-12);
  ASSERT_GT(jacobi.reason, 0);
  const auto r = sys.solve_fallback(rhs, gs, 1e-12);
  EXPECT_GT(r.reason, 0);
  EXPECT_LT(r.iterations, jacobi.iterations);
  EXPECT_LT(relative_difference(reference, gs), 1e-5);  // the split's blocks are floats

  ring.add_to(sys, false, 2.0);
  EXPECT_GT(sys.solve_fallback(rhs, gs, 1e-12).reason, 0);
  EXPECT_LT(relative_difference(reference, gs, 0.5), 1e-5);

  BlockSystem off(MPI_COMM_WORLD, "gsofftest_", 6);
  off.use_gauss_seidel_fallback(false);
  preallocate(off);
  ring.add_to(off, true);
  std::vector<double> y(rhs.size());
  EXPECT_EQ(off.solve_fallback(rhs, y, 1e-12).iterations, jacobi.iterations);
  EXPECT_EQ(relative_difference(reference, y), 0.0);
}

// A refresh (additions to an assembled matrix, without zero()) that touches only the rank's own rows sets the
// Gauss–Seidel fallback up again in those rows alone; one that adds to another rank's row, everywhere in full.
// Either way the solution is that of the system assembled at once with the same additions, to the bit.
TEST(BlockSystem, GaussSeidelFallbackUpdatesTheRefreshedRows) {
  const RingSystem ring = world_ring();
  const int first = ring.rank * kRowsPerRank;
  std::vector<double> rhs(6 * kRowsPerRank);
  for (int i = 0; i < 6 * kRowsPerRank; ++i) rhs[static_cast<std::size_t>(i)] = std::sin(0.9 + first * 6 + i);
  const bool other_ranks = ring.size > 1;
  auto refresh = [&](BlockSystem& sys, bool other_rank) {
    const Block d = 0.5 * ring.diagonal(first + 2), e = 0.25 * ring.edge(first + 4), minus = -e;
    sys.add_block(first + 2, first + 2, d.data());
    sys.add_block(first + 4, first + 4, e.data());
    sys.add_block(first + 4, first + 5, minus.data());
    sys.add_block(first + 5, first + 4, minus.data());
    sys.add_block(first + 5, first + 5, e.data());
    if (other_rank) {  // the next rank's first row
      const int g = (first + kRowsPerRank) % ring.rows;
      sys.add_block(g, g, d.data());
    }
  };
  for (const bool other_rank : {false, true}) {
    if (other_rank && !other_ranks) continue;
    BlockSystem refreshed(MPI_COMM_WORLD, "gsupdate_", 6), fresh(MPI_COMM_WORLD, "gsfresh_", 6);
    preallocate(refreshed);
    preallocate(fresh);
    ring.add_to(refreshed, true);
    std::vector<double> before(rhs.size()), y(rhs.size()), z(rhs.size());
    ASSERT_GT(refreshed.solve_fallback(rhs, before, 1e-10).reason, 0);
    refresh(refreshed, other_rank);
    refreshed.assemble();
    ring.add_to(fresh, true, 1.0, false);
    refresh(fresh, other_rank);
    fresh.assemble();
    ASSERT_GT(refreshed.solve_fallback(rhs, y, 1e-10).reason, 0);
    ASSERT_GT(fresh.solve_fallback(rhs, z, 1e-10).reason, 0);
    EXPECT_EQ(relative_difference(z, y), 0.0);
    EXPECT_GT(relative_difference(before, y), 1e-3);  // the refresh changed the system
    EXPECT_EQ(refreshed.gauss_seidel_updates(), other_rank ? 0 : 1);
    EXPECT_EQ(fresh.gauss_seidel_updates(), 0);
  }
}

// The blocks a path's default preconditioner takes.
BlockSystem::Blocks blocks_of(bool split, bool gauss_seidel) {
  return gauss_seidel ? BlockSystem::Blocks::GaussSeidel : split ? BlockSystem::Blocks::Dilu : BlockSystem::Blocks::Icc;
}

// CG on the split systems (D-ILU, Gauss–Seidel), with IC(0) and with the point-block Jacobi fallback is our fused
// loop (fused_cg.hpp) by default and PETSc's KSPCG with -<prefix>petsc_cg: the same iterations, to the same
// tolerance, and the same solution but for rounding.
TEST(BlockSystem, FusedCgFollowsPetscCg) {
  const RingSystem ring = world_ring();
  const int first = ring.rank * kRowsPerRank;
  std::vector<double> rhs(6 * kRowsPerRank);
  for (int i = 0; i < 6 * kRowsPerRank; ++i) rhs[static_cast<std::size_t>(i)] = std::cos(0.7 + first * 6 + i);
  enum class Path { Split, Icc, Fallback, GaussSeidel };
  for (const Path path : {Path::Split, Path::Icc, Path::Fallback, Path::GaussSeidel}) {
    std::vector<std::vector<double>> solutions;
    std::vector<PetscInt> iterations;
    for (const bool petsc : {false, true}) {
      if (petsc) {
        ASSERT_EQ(PetscOptionsSetValue(nullptr, "-fusedtest_petsc_cg", "1"), 0);
      }
      BlockSystem sys(MPI_COMM_WORLD, "fusedtest_", 6);
      sys.use_blocks(blocks_of(path == Path::Split, path == Path::GaussSeidel));
      sys.use_single_precision_product(true);
      preallocate(sys);
      ring.add_to(sys, true);
      std::vector<double> y(rhs.size());
      const auto r = path == Path::Fallback ? sys.solve_block_jacobi(rhs, y, 1e-8) : sys.solve(rhs, y, 1e-8);
      EXPECT_EQ(r.reason, KSP_CONVERGED_RTOL);
      EXPECT_GT(r.iterations, 2);  // a ring: none of the preconditioners is exact, CG has work to do
      iterations.push_back(r.iterations);
      solutions.push_back(y);
    }
    PetscOptionsClearValue(nullptr, "-fusedtest_petsc_cg");
    EXPECT_EQ(iterations[0], iterations[1]) << "path " << static_cast<int>(path);
    double diff = 0, norm = 0;
    for (std::size_t k = 0; k < rhs.size(); ++k) {
      diff = std::max(diff, std::abs(solutions[0][k] - solutions[1][k]));
      norm = std::max(norm, std::abs(solutions[1][k]));
    }
    MPI_Allreduce(MPI_IN_PLACE, &diff, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &norm, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    EXPECT_LT(diff, 1e-10 * norm) << "path " << static_cast<int>(path);
  }
}

// Gauss–Seidel as the default preconditioner's blocks is the fallback's Gauss–Seidel: the same solves bit for bit,
// after a full assembly and after a refresh of a few rows (set up again only there), on 1-3 ranks.
TEST(BlockSystem, GaussSeidelBlocksSolveAsTheFallback) {
  const RingSystem ring = world_ring();
  const int first = ring.rank * kRowsPerRank;
  std::vector<double> rhs(6 * kRowsPerRank);
  for (int i = 0; i < 6 * kRowsPerRank; ++i) rhs[static_cast<std::size_t>(i)] = std::sin(0.3 + first * 6 + i);
  BlockSystem primary(MPI_COMM_WORLD, "gsprimary_", 6), fallback(MPI_COMM_WORLD, "gsfallback_", 6);
  primary.use_blocks(BlockSystem::Blocks::GaussSeidel);
  for (BlockSystem* sys : {&primary, &fallback}) {
    preallocate(*sys);
    ring.add_to(*sys, true);
  }
  std::vector<double> y(rhs.size()), z(rhs.size());
  const auto p = primary.solve(rhs, y, 1e-9), f = fallback.solve_fallback(rhs, z, 1e-9);
  EXPECT_EQ(p.reason, KSP_CONVERGED_RTOL);
  EXPECT_GT(p.iterations, 2);
  EXPECT_EQ(p.iterations, f.iterations);
  EXPECT_EQ(y, z);
  EXPECT_EQ(primary.block_factorisations(), 0);  // nothing to factor
  for (BlockSystem* sys : {&primary, &fallback}) {  // a contact refresh: one owned row's diagonal block changes
    const Block extra = 0.5 * Block::Identity();
    sys->add_block(first + 1, first + 1, extra.data());
    sys->assemble();
  }
  const auto p2 = primary.solve(rhs, y, 1e-9, false), f2 = fallback.solve_fallback(rhs, z, 1e-9);
  EXPECT_EQ(p2.reason, KSP_CONVERGED_RTOL);
  EXPECT_EQ(p2.iterations, f2.iterations);
  EXPECT_EQ(y, z);
  EXPECT_EQ(primary.gauss_seidel_updates(), 1);  // the refresh's row only
}

// Direct insertion (add_at, at the positions local_position finds once the pattern is set) assembles the same
// matrix as add_block: the same CG solution bit for bit. The coupling blocks are not symmetric, so a transposed
// insertion would show; blocks coupling two ranks still take add_block.
TEST(BlockSystem, DirectInsertionAssemblesTheSameMatrix) {
  const RingSystem ring = world_ring();
  const int first = ring.rank * kRowsPerRank;
  // Diagonal 4 I + R Rᵀ, each ring edge (a, b), a < b, the block C (and Cᵀ below): SPD, as ‖C‖ is small.
  auto add = [&](BlockSystem& sys, bool direct) {
    sys.zero();
    int direct_blocks = 0;
    for (int g = first; g < first + kRowsPerRank; ++g) {
      const Block d = ring.diagonal(g);
      sys.add_block(g, g, d.data());
    }
    for (int g = 0; g < ring.rows; ++g) {
      const int a = std::min(g, (g + 1) % ring.rows), b = std::max(g, (g + 1) % ring.rows);
      const Block c = 0.2 * ring_block(5000 + g), ct = c.transpose();
      const bool owns_a = a / kRowsPerRank == ring.rank, owns_b = b / kRowsPerRank == ring.rank;
      const PetscInt position = sys.local_position(a, b);
      if (direct && position >= 0) {
        EXPECT_TRUE(owns_a && owns_b) << a << "-" << b;
        sys.add_at(position, c.data());
        ++direct_blocks;
        continue;
      }
      if (owns_a) sys.add_block(a, b, c.data());
      if (owns_b) sys.add_block(b, a, ct.data());
    }
    sys.assemble();
    return direct_blocks;
  };
  BlockSystem by_block(MPI_COMM_WORLD, "blocktest_", 6), direct(MPI_COMM_WORLD, "blocktest_", 6);
  preallocate(by_block);
  preallocate(direct);
  EXPECT_EQ(direct.local_position(first, first + 1), -1);  // no pattern before the first assembly
  add(by_block, false);
  EXPECT_EQ(add(direct, true), 0);
  EXPECT_GE(direct.local_position(first, first + 1), 0);
  EXPECT_EQ(direct.local_position(first + 1, first), -1);  // lower triangle
  add(by_block, false);
  EXPECT_EQ(add(direct, true), ring.size == 1 ? kRowsPerRank : kRowsPerRank - 1);

  std::vector<double> rhs(6 * kRowsPerRank), y_block(rhs.size()), y_direct(rhs.size());
  for (int i = 0; i < 6 * kRowsPerRank; ++i) rhs[static_cast<std::size_t>(i)] = std::cos(0.5 + first * 6 + i);
  EXPECT_GT(by_block.solve_block_jacobi(rhs, y_block, 1e-12).reason, 0);
  EXPECT_GT(direct.solve_block_jacobi(rhs, y_direct, 1e-12).reason, 0);
  EXPECT_EQ(y_block, y_direct);
}

// A factorisation that no diagonal shift makes positive definite (here a NaN in one diagonal block of the last
// rank) fails the solve on every rank alike, for each default preconditioner and with PETSc's CG too: no rank
// throws or waits for the others. The next solve on a sound matrix factors afresh and converges.
TEST(BlockSystem, AFactorisationFailingOnOneRankFailsTheSolveOnAll) {
  const RingSystem ring = world_ring();
  const int first = ring.rank * kRowsPerRank;
  std::vector<double> rhs(6 * kRowsPerRank, 1.0);
  enum class Path { Split, Icc, PetscIcc, GaussSeidel };
  for (const Path path : {Path::Split, Path::Icc, Path::PetscIcc, Path::GaussSeidel}) {
    if (path == Path::PetscIcc) {
      ASSERT_EQ(PetscOptionsSetValue(nullptr, "-failtest_petsc_cg", "1"), 0);
    }
    BlockSystem sys(MPI_COMM_WORLD, "failtest_", 6);
    sys.use_blocks(blocks_of(path == Path::Split, path == Path::GaussSeidel));
    preallocate(sys);
    ring.add_to(sys, true);
    std::vector<double> y(rhs.size());
    ASSERT_GT(sys.solve(rhs, y, 1e-8).reason, 0);

    ring.add_to(sys, true, 1.0, false);
    if (ring.rank == ring.size - 1) {
      Block poison = Block::Zero();
      poison(2, 2) = std::numeric_limits<double>::quiet_NaN();
      sys.add_block(first + 3, first + 3, poison.data());
    }
    sys.assemble();
    std::fill(y.begin(), y.end(), 5.0);
    const auto failed = sys.solve(rhs, y, 1e-8);
    EXPECT_EQ(failed.reason, KSP_DIVERGED_PC_FAILED) << "path " << static_cast<int>(path);
    EXPECT_EQ(failed.iterations, 0);
    EXPECT_EQ(sys.failed_set_ups(), 1);
    EXPECT_EQ(*std::max_element(y.begin(), y.end()), 0.0);  // no step from a failed solve
    EXPECT_FALSE(sys.has_preconditioner());

    ring.add_to(sys, true);
    const auto again = sys.solve(rhs, y, 1e-8, false);  // asked to keep it, but there is none to keep
    EXPECT_EQ(again.reason, KSP_CONVERGED_RTOL) << "path " << static_cast<int>(path);
    EXPECT_EQ(sys.failed_set_ups(), 1);
    PetscOptionsClearValue(nullptr, "-failtest_petsc_cg");
  }
}

// Block Gauss–Seidel (or D-ILU) sweeping across the ranks (rank_coupling.hpp) is that of the whole matrix in the
// global order: on 1, 2 and 3 ranks its split operator and its CG solve are those of one rank holding every row in
// that order, where block Jacobi across ranks (the sweeps leaving the blocks between ranks out) differs. The ring has
// chords between the ranks' middle rows, so on 3 ranks one row of rank 1 couples to a lower and a higher rank (X).
namespace {
void sweeps_across_as_one_rank(BlockSystem::Blocks blocks) {
  const RingSystem ring = world_ring();
  const int first = ring.rank * kRowsPerRank, rows = ring.rows;
  auto owner = [](int g) { return g / kRowsPerRank; };
  std::vector<std::array<int, 2>> edges;
  for (int g = 0; g < rows; ++g) edges.push_back({g, (g + 1) % rows});
  for (int r = 0; r < ring.size && ring.size > 1; ++r)
    edges.push_back({r * kRowsPerRank + 3, ((r + 1) % ring.size) * kRowsPerRank + 3});
  std::vector<char> sides(kRowsPerRank, 0);
  std::vector<PetscInt> d_nnz(kRowsPerRank, 1), o_nnz(kRowsPerRank, 0);
  for (const auto& [a, b] : edges)
    for (const auto& [mine, other] : {std::array<int, 2>{a, b}, std::array<int, 2>{b, a}}) {
      if (owner(mine) != ring.rank) continue;
      const std::size_t i = static_cast<std::size_t>(mine - first);
      if (owner(other) == ring.rank) {
        ++d_nnz[i];
      } else {
        ++o_nnz[i];
        sides[i] |= owner(other) < ring.rank ? BlockSystem::kLowerRank : BlockSystem::kHigherRank;
      }
    }
  // Blocks as RingSystem's, edge k's from its index.
  auto add = [&](BlockSystem& sys, auto&& row_of, bool mine_only) {
    sys.zero();
    for (int g = 0; g < rows; ++g) {
      if (mine_only && owner(g) != ring.rank) continue;
      const Block d = ring.diagonal(g);
      sys.add_block(row_of(g), row_of(g), d.data());
    }
    for (std::size_t k = 0; k < edges.size(); ++k) {
      const auto [a, b] = edges[k];
      if (mine_only && owner(a) != ring.rank) continue;
      const Block s = ring.edge(static_cast<int>(k)), minus = -s;
      sys.add_block(row_of(a), row_of(a), s.data());
      sys.add_block(row_of(a), row_of(b), minus.data());
      sys.add_block(row_of(b), row_of(a), minus.data());
      sys.add_block(row_of(b), row_of(b), s.data());
    }
    sys.assemble();
  };

  BlockSystem across(MPI_COMM_WORLD, "gsacross_", 6), jacobi(MPI_COMM_WORLD, "gsjacobi_", 6);
  jacobi.use_sweeps_across_ranks(false);  // (its rows stay in item order)
  // Each system's global row of every ring row.
  auto rows_of = [&](const BlockSystem& sys) {
    std::vector<PetscInt> local(kRowsPerRank), every(static_cast<std::size_t>(rows));
    for (std::size_t i = 0; i < kRowsPerRank; ++i) local[i] = first + sys.local_row(i);
    MPI_Allgather(local.data(), kRowsPerRank, MPIU_INT, every.data(), kRowsPerRank, MPIU_INT, MPI_COMM_WORLD);
    return every;
  };
  for (BlockSystem* sys : {&across, &jacobi}) {
    sys->use_blocks(blocks);
    sys->preallocate(kRowsPerRank, d_nnz, o_nnz, sides);
  }
  const std::vector<PetscInt> across_rows = rows_of(across), jacobi_rows = rows_of(jacobi);
  add(across, [&](int g) { return across_rows[static_cast<std::size_t>(g)]; }, true);
  add(jacobi, [&](int g) { return jacobi_rows[static_cast<std::size_t>(g)]; }, true);

  // One rank with every row, in the across system's global order.
  BlockSystem whole(MPI_COMM_SELF, "gswhole_", 6);
  whole.use_blocks(blocks);
  std::vector<PetscInt> whole_d(static_cast<std::size_t>(rows), 1), whole_o(static_cast<std::size_t>(rows), 0);
  for (const auto& [a, b] : edges) {
    ++whole_d[static_cast<std::size_t>(across_rows[static_cast<std::size_t>(a)])];
    ++whole_d[static_cast<std::size_t>(across_rows[static_cast<std::size_t>(b)])];
  }
  whole.preallocate(rows, whole_d, whole_o);
  add(whole, [&](int g) { return across_rows[static_cast<std::size_t>(g)]; }, false);

  // Vectors in row order: the whole system's, and this rank's part of a system's (`every` its rows).
  std::vector<double> whole_rhs(6 * static_cast<std::size_t>(rows));
  for (std::size_t i = 0; i < whole_rhs.size(); ++i) whole_rhs[i] = std::sin(0.3 + static_cast<double>(i));
  auto mine = [&](const std::vector<PetscInt>& every, const std::vector<double>& whole_values) {
    std::vector<double> v(6 * kRowsPerRank);
    for (int g = first; g < first + kRowsPerRank; ++g) {
      const auto from = static_cast<std::size_t>(across_rows[static_cast<std::size_t>(g)]);
      const auto to = static_cast<std::size_t>(every[static_cast<std::size_t>(g)] - first);
      std::copy_n(whole_values.begin() + static_cast<std::ptrdiff_t>(6 * from), 6, v.begin() + static_cast<std::ptrdiff_t>(6 * to));
    }
    return v;
  };
  const std::vector<double> rhs = mine(across_rows, whole_rhs), rhs_j = mine(jacobi_rows, whole_rhs);
  std::vector<double> y(rhs.size()), yj(rhs.size()), whole_y(whole_rhs.size());
  const auto a = across.solve(rhs, y, 1e-9), j = jacobi.solve(rhs_j, yj, 1e-9), w = whole.solve(whole_rhs, whole_y, 1e-9);
  ASSERT_EQ(a.reason, KSP_CONVERGED_RTOL);
  ASSERT_EQ(w.reason, KSP_CONVERGED_RTOL);
  EXPECT_EQ(across.set_ups_across_ranks(), ring.size > 1 ? 1 : 0);
  EXPECT_NEAR(a.iterations, w.iterations, 1);
  if (ring.size > 1) {
    EXPECT_GT(j.iterations, a.iterations + 1);
  }
  EXPECT_LT(relative_difference(mine(across_rows, whole_y), y), 1e-6);
  EXPECT_LT(relative_difference(mine(jacobi_rows, whole_y), yj), 1e-6);  // (the same system, solved)

  // At a Newton forcing (kFloatVectorsRtol or more) CG keeps x, r, p and q as floats (fused_cg.hpp), across the ranks
  // too: the iterations of double vectors, the solution moved by rounding only (and moved: the floats are used).
  for (BlockSystem* sys : {&across, &whole}) {
    const std::vector<double>& b = sys == &whole ? whole_rhs : rhs;
    std::vector<double> with_floats(b.size()), with_doubles(b.size());
    const auto f = sys->solve(b, with_floats, 1e-3);
    sys->use_float_cg_vectors(false);
    const auto d = sys->solve(b, with_doubles, 1e-3);
    sys->use_float_cg_vectors(true);
    EXPECT_EQ(f.reason, KSP_CONVERGED_RTOL);
    EXPECT_NEAR(f.iterations, d.iterations, 1);
    EXPECT_GT(f.iterations, 1);
    // (whole is the same on every rank, so the maximum over the ranks is its own.)
    const double moved = relative_difference(with_doubles, with_floats);
    // (ŷ is rounded to floats on its way back to y, so two short solves can give the same y: then their residuals
    // still differ.)
    EXPECT_TRUE(moved > 0.0 || f.residual_norm != d.residual_norm);
    EXPECT_LT(moved, 1e-5);
  }

  // The split operators on the same vector: equal to float rounding (the blocks between ranks are doubles here).
  std::vector<double> whole_u(whole_rhs.size()), whole_out(whole_rhs.size());
  for (std::size_t i = 0; i < whole_u.size(); ++i) whole_u[i] = std::cos(1.7 * static_cast<double>(i));
  const std::vector<double> u = mine(across_rows, whole_u);
  std::vector<double> out(u.size());
  double dot = across.apply_split(u.data(), out.data());
  MPI_Allreduce(MPI_IN_PLACE, &dot, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const double whole_dot = whole.apply_split(whole_u.data(), whole_out.data());
  const std::vector<double> whole_out_mine = mine(across_rows, whole_out);
  EXPECT_LT(relative_difference(whole_out_mine, out), 1e-6);
  EXPECT_NEAR(dot, whole_dot, 1e-6 * std::abs(whole_dot));
  if (ring.size > 1) {  // block Jacobi across ranks is another operator
    const std::vector<double> uj = mine(jacobi_rows, whole_u);
    std::vector<double> outj(uj.size());
    jacobi.apply_split(uj.data(), outj.data());
    EXPECT_GT(relative_difference(mine(jacobi_rows, whole_out), outj), 1e-3);
  }

  // The groups: H, X, N, L rows in that order, X only on the middle rank of three.
  std::vector<int> group_of_row(kRowsPerRank);
  for (std::size_t i = 0; i < kRowsPerRank; ++i) {
    const bool lower = sides[i] & BlockSystem::kLowerRank, higher = sides[i] & BlockSystem::kHigherRank;
    group_of_row[static_cast<std::size_t>(across.local_row(i))] = higher ? (lower ? 1 : 0) : (lower ? 3 : 2);
  }
  EXPECT_TRUE(std::is_sorted(group_of_row.begin(), group_of_row.end()));
  if (ring.size == 3) {
    EXPECT_EQ(std::count(group_of_row.begin(), group_of_row.end(), 1), ring.rank == 1 ? 1 : 0);
  }
}
}  // namespace

TEST(BlockSystem, GaussSeidelSweepsAcrossRanksAsOneRankHoldingEveryRow) {
  sweeps_across_as_one_rank(BlockSystem::Blocks::GaussSeidel);
}

// D-ILU's elimination and sweeps in the same global order: its pivots take the lower ranks' rows too.
TEST(BlockSystem, DiluSweepsAcrossRanksAsOneRankHoldingEveryRow) { sweeps_across_as_one_rank(BlockSystem::Blocks::Dilu); }

// The replaceable part (the Newton matrix's contact blocks): after two replacements, one of which empties some rows'
// part and one that gives others a part again, the matrix is to the bit the one a fresh assembly of the kept blocks
// and the last part gives, on every rank count (parts that couple ranks given by both owners). A replacement that
// added changes instead would round differently.
TEST(BlockSystem, ReplacementAssemblesTheMatrixOfTheLastPartToTheBit) {
  const RingSystem ring = world_ring();
  const int first = ring.rank * kRowsPerRank;
  auto owns = [&](int g) { return g / kRowsPerRank == ring.rank; };
  // Kept: the diagonal and every third edge; replaceable: the other edges, scaled by a coefficient per stage.
  auto coefficient = [](int stage, int g) {
    if (g % 3 == 0) return 0.0;
    if (stage == 0) return 1.0 + 0.1 * (g % 5);
    if (stage == 1) return g % 2 ? 2.5 : 0.0;
    return g % 4 == 1 ? 3.0 : 1.0 + 0.1 * (g % 5);
  };
  auto add_kept = [&](BlockSystem& sys) {
    sys.zero();
    for (int g = first; g < first + kRowsPerRank; ++g) {
      const Block d = ring.diagonal(g);
      sys.add_block(g, g, d.data());
    }
    for (int g = 0; g < ring.rows; g += 3) {
      const int a = g, b = (g + 1) % ring.rows;
      const Block s = ring.edge(g), minus = -s;
      if (owns(a)) {
        sys.add_block(a, a, s.data());
        sys.add_block(a, b, minus.data());
      }
      if (owns(b)) {
        sys.add_block(b, b, s.data());
        sys.add_block(b, a, minus.data());
      }
    }
  };
  auto give = [&](BlockSystem& sys, int stage, int before) {  // before < 0: with the kept blocks, after zero()
    for (int g = 0; g < ring.rows; ++g) {
      if (g % 3 == 0) continue;
      const double c = coefficient(stage, g);
      const bool changed = before < 0 || c != coefficient(before, g);
      const int a = g, b = (g + 1) % ring.rows;
      const Block s = c * ring.edge(g), minus = -s;
      for (const auto& [row, col] : {std::pair{a, b}, std::pair{b, a}}) {
        if (!owns(row)) continue;
        if (c != 0.0) sys.add_replaceable(row, row, s.data());
        sys.add_replaceable(row, col, minus.data(), changed);
      }
    }
  };
  std::vector<double> rhs(6 * kRowsPerRank);
  for (int i = 0; i < 6 * kRowsPerRank; ++i) rhs[static_cast<std::size_t>(i)] = std::cos(0.5 + first * 6 + i);
  std::vector<std::vector<double>> jacobi, icc;
  for (const bool replaced : {true, false}) {
    BlockSystem sys(MPI_COMM_WORLD, "blocktest_", 6);
    preallocate(sys);
    add_kept(sys);
    give(sys, replaced ? 0 : 2, -1);
    sys.assemble();
    if (replaced) {
      for (int stage = 1; stage <= 2; ++stage) {
        sys.begin_replacement();
        give(sys, stage, stage - 1);
        sys.assemble();
      }
    }
    std::vector<double> y(rhs.size()), z(rhs.size());
    EXPECT_GT(sys.solve_block_jacobi(rhs, y, 1e-12).reason, 0);
    EXPECT_GT(sys.solve(rhs, z, 1e-12).reason, 0);
    jacobi.push_back(y);
    icc.push_back(z);
  }
  EXPECT_EQ(jacobi[0], jacobi[1]);
  EXPECT_EQ(icc[0], icc[1]);
}

}  // namespace mpi_block_system
