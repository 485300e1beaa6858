// The block system with 3x3 blocks (a mesh vertex's), on 1, 2 and 3 ranks: assembled by add_block or by direct
// insertion into a pattern given whole, with a replaceable part given again, and solved by PETSc's CG with block
// Jacobi (the default for this block size), by the fused CG with PETSc's block Jacobi and with point-block Jacobi:
// each gives the dense solution. The preconditioners written for 6x6 blocks refuse the matrix by name.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscsys.h>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "percussion/solvers/block_system.hpp"

namespace mpi_block_size {

using percussion::solvers::BlockSystem;

namespace {

constexpr int kBs = 3;
constexpr int kItemsPerRank = 5;
using Block3 = Eigen::Matrix<double, kBs, kBs, Eigen::RowMajor>;

Block3 block_from(int seed) {
  std::mt19937 gen(static_cast<unsigned>(seed) * 104729u + 7u);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Block3 b;
  for (int i = 0; i < kBs * kBs; ++i) b.data()[i] = u(gen);
  return b;
}

// SPD: each item g has 3 I + R Rᵀ on its diagonal, and each edge (g, g+1), (g, g+3) adds [S −S; −S S], S = BᵀB, so
// some edges join items two ranks apart. The replaceable part adds `extra` I to every diagonal block.
struct Mesh {
  int rank = 0, size = 1, n = 0;
  std::vector<std::pair<int, int>> edges;
  Mesh() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    n = size * kItemsPerRank;
    for (int g = 0; g < n; ++g)
      for (int step : {1, 3})
        if (g + step < n) edges.emplace_back(g, g + step);
  }
  int owner(int g) const { return g / kItemsPerRank; }
  int first() const { return rank * kItemsPerRank; }
  Block3 diagonal(int g) const {
    const Block3 r = block_from(g);
    return 3.0 * Block3::Identity() + r * r.transpose();
  }
  Block3 edge(std::size_t k) const {
    const Block3 b = block_from(1000 + static_cast<int>(k));
    return b.transpose() * b;
  }
  Eigen::MatrixXd dense(double extra) const {
    Eigen::MatrixXd d = Eigen::MatrixXd::Zero(kBs * n, kBs * n);
    for (int g = 0; g < n; ++g) d.block<kBs, kBs>(kBs * g, kBs * g) += diagonal(g) + extra * Block3::Identity();
    for (std::size_t k = 0; k < edges.size(); ++k) {
      const auto [a, b] = edges[k];
      const Block3 s = edge(k);
      d.block<kBs, kBs>(kBs * a, kBs * a) += s;
      d.block<kBs, kBs>(kBs * b, kBs * b) += s;
      d.block<kBs, kBs>(kBs * a, kBs * b) -= s;
      d.block<kBs, kBs>(kBs * b, kBs * a) -= s;
    }
    return d;
  }
  double rhs(int i) const { return std::sin(0.37 * i + 0.5); }
};

// How each test assembles.
enum class Assembly { AddBlock, Pattern };

// Preallocates and assembles the mesh's matrix into `sys` (each rank its own rows), with `extra` I as the
// replaceable part.
void assemble(BlockSystem& sys, const Mesh& m, Assembly how, double extra) {
  const int first = m.first();
  std::vector<PetscInt> d_nnz(kItemsPerRank, 1), o_nnz(kItemsPerRank, 0), start(kItemsPerRank + 1, 0), columns;
  std::vector<std::vector<PetscInt>> row_columns(kItemsPerRank);
  for (const auto& [a, b] : m.edges)
    for (const auto& [row, col] : {std::pair{a, b}, std::pair{b, a}})
      if (m.owner(row) == m.rank) {
        (m.owner(col) == m.rank ? d_nnz : o_nnz)[static_cast<std::size_t>(row - first)] += 1;
        row_columns[static_cast<std::size_t>(row - first)].push_back(col);
      }
  for (int i = 0; i < kItemsPerRank; ++i) {
    columns.insert(columns.end(), row_columns[static_cast<std::size_t>(i)].begin(),
                   row_columns[static_cast<std::size_t>(i)].end());
    start[static_cast<std::size_t>(i) + 1] = static_cast<PetscInt>(columns.size());
  }
  const bool pattern = how == Assembly::Pattern;
  ASSERT_EQ(sys.preallocate(kItemsPerRank, d_nnz, o_nnz, {}, pattern), first);
  if (pattern) sys.set_pattern(start, columns);
  sys.zero();
  const Block3 extra_block = extra * Block3::Identity();
  for (int g = first; g < first + kItemsPerRank; ++g) {
    const Block3 d = m.diagonal(g);
    sys.add_block(g, g, d.data());
    sys.add_replaceable(g, g, extra_block.data());
  }
  int direct = 0;
  for (std::size_t k = 0; k < m.edges.size(); ++k) {
    const auto [a, b] = m.edges[k];
    const Block3 s = m.edge(k), minus = -s;
    for (const auto& [row, col] : {std::pair{a, b}, std::pair{b, a}}) {
      if (m.owner(row) != m.rank) continue;
      sys.add_block(row, row, s.data());
      const PetscInt at = sys.local_position(row, col);
      if (pattern && row < col && m.owner(col) == m.rank) {
        EXPECT_GE(at, 0) << row << " " << col;  // the pattern was given whole: every owned upper block has a place
        sys.add_at(at, minus.data());
        ++direct;
      } else {
        sys.add_block(row, col, minus.data());
      }
    }
  }
  if (pattern) {
    EXPECT_GT(direct, 0);
  }
  sys.assemble();
}

// max |y − dense solution| / max |dense solution| over all ranks, y this rank's rows.
double error_against_dense(const Mesh& m, const std::vector<double>& y, double extra) {
  std::vector<double> all(static_cast<std::size_t>(kBs * m.n));
  MPI_Allgather(y.data(), kBs * kItemsPerRank, MPI_DOUBLE, all.data(), kBs * kItemsPerRank, MPI_DOUBLE, MPI_COMM_WORLD);
  Eigen::VectorXd b(kBs * m.n);
  for (int i = 0; i < kBs * m.n; ++i) b[i] = m.rhs(i);
  const Eigen::VectorXd x = m.dense(extra).llt().solve(b);
  double diff = 0;
  for (int i = 0; i < kBs * m.n; ++i) diff = std::max(diff, std::abs(all[static_cast<std::size_t>(i)] - x[i]));
  return diff / x.cwiseAbs().maxCoeff();
}

std::vector<double> local_rhs(const Mesh& m) {
  std::vector<double> rhs(kBs * kItemsPerRank);
  for (int i = 0; i < kBs * kItemsPerRank; ++i) rhs[static_cast<std::size_t>(i)] = m.rhs(kBs * m.first() + i);
  return rhs;
}

}  // namespace

TEST(BlockSize, ThreeByThreeBlocksSolveTheDenseSystem) {
  const Mesh m;
  const std::vector<double> rhs = local_rhs(m);
  struct Case {
    const char* ksp_type;  // nullptr: the default
    const char* pc_type;
    Assembly how;
  };
  const Case cases[] = {{nullptr, nullptr, Assembly::AddBlock},
                        {nullptr, nullptr, Assembly::Pattern},
                        {"fusedcg", "bjacobi", Assembly::Pattern},
                        {nullptr, "percussion_pbjacobi", Assembly::AddBlock}};
  for (const Case& c : cases) {
    if (c.ksp_type) {
      ASSERT_EQ(PetscOptionsSetValue(nullptr, "-sizetest_ksp_type", c.ksp_type), 0);
    }
    if (c.pc_type) {
      ASSERT_EQ(PetscOptionsSetValue(nullptr, "-sizetest_pc_type", c.pc_type), 0);
    }
    const std::string name = std::string(c.ksp_type ? c.ksp_type : "default") + " / " +
                             (c.pc_type ? c.pc_type : "default") +
                             (c.how == Assembly::Pattern ? ", pattern" : ", add_block");
    {
      BlockSystem sys(MPI_COMM_WORLD, "sizetest_", kBs);
      assemble(sys, m, c.how, 1.0);
      std::vector<double> y(rhs.size());
      const BlockSystem::Result r = sys.solve(rhs, y, 1e-12);
      EXPECT_GT(r.reason, 0) << name;
      EXPECT_GT(r.iterations, 1) << name;
      EXPECT_LT(error_against_dense(m, y, 1.0), 1e-9) << name;
    }
    PetscOptionsClearValue(nullptr, "-sizetest_ksp_type");
    PetscOptionsClearValue(nullptr, "-sizetest_pc_type");
  }
}

// The replaceable part given again (diagonal 1 I, then 4 I) is the matrix a fresh assembly with 4 I gives.
TEST(BlockSize, ThreeByThreeReplacementIsAFreshAssembly) {
  const Mesh m;
  const std::vector<double> rhs = local_rhs(m);
  BlockSystem sys(MPI_COMM_WORLD, "sizetest_", kBs);
  assemble(sys, m, Assembly::Pattern, 1.0);
  std::vector<double> y(rhs.size());
  sys.solve(rhs, y, 1e-12);
  EXPECT_LT(error_against_dense(m, y, 1.0), 1e-9);
  sys.begin_replacement();
  const Block3 extra = 4.0 * Block3::Identity();
  for (int g = m.first(); g < m.first() + kItemsPerRank; ++g) sys.add_replaceable(g, g, extra.data());
  sys.assemble();
  sys.solve(rhs, y, 1e-12);
  EXPECT_LT(error_against_dense(m, y, 4.0), 1e-9);
}

// percussion_gs, percussion_dilu and percussion_icc_sp are written for 6x6 blocks: asked for on 3x3 ones, the system
// says so (on every rank, before any solve).
TEST(BlockSize, SixBlockPreconditionersRefuseThreeByThreeBlocks) {
  const Mesh m;
  for (const char* pc : {"percussion_gs", "percussion_dilu", "percussion_icc_sp"}) {
    ASSERT_EQ(PetscOptionsSetValue(nullptr, "-sizetest_pc_type", pc), 0);
    BlockSystem sys(MPI_COMM_WORLD, "sizetest_", kBs);
    EXPECT_THROW(assemble(sys, m, Assembly::AddBlock, 1.0), std::exception) << pc;
    PetscOptionsClearValue(nullptr, "-sizetest_pc_type");
  }
}

}  // namespace mpi_block_size
