// P1 and P2 displacement dofs on a distributed DMPlex: counts from Euler's formula, owned rows in this rank's
// range, ghosts numbered as their owners number them.
#include <gtest/gtest.h>
#include <mpi.h>

#include <map>
#include <vector>

#include "../support/plex_mesh_support.hpp"
#include "percussion/geometry/mesh/displacement_space.hpp"

namespace mpi_plex_mesh_space {

namespace {

// Names, not the whole namespace: percussion::geometry's Mat and Vec (Eigen) would make PETSc's Mat and Vec ambiguous
// wherever an earlier file of the unity batch includes them.
using percussion::geometry::BallShape;
using percussion::geometry::build_plex_mesh;
using percussion::geometry::DiskShape;
using percussion::geometry::DisplacementSpace;
using percussion::geometry::make_displacement_space;
using percussion::geometry::MeshBody;
using percussion::geometry::MeshOptions;
using percussion::geometry::PlexMesh;

// (global vertex id, first dof) of every local vertex on every rank, gathered on rank 0: each id one dof.
void expect_one_dof_per_vertex(const PlexMesh& mesh, const DisplacementSpace& space) {
  std::vector<std::int64_t> pairs;
  for (PetscInt v = 0; v < mesh.local_vertex_count(); ++v) {
    pairs.push_back(mesh.vertex_global_id[static_cast<std::size_t>(v)]);
    pairs.push_back(space.vertex_dof[static_cast<std::size_t>(v)]);
  }
  const auto all = plex_test::gather(MPI_COMM_WORLD, pairs);
  std::map<std::int64_t, std::int64_t> dof;
  for (std::size_t i = 0; i < all.size(); i += 2) {
    auto [it, fresh] = dof.emplace(all[i], all[i + 1]);
    EXPECT_EQ(it->second, all[i + 1]) << "vertex " << all[i];
  }
}

void expect_owned_rows_in_range(const PlexMesh& mesh, const DisplacementSpace& space) {
  Mat matrix = nullptr;
  ASSERT_EQ(DMCreateMatrix(space.dm.get(), &matrix), 0);
  PetscInt rows = 0, cols = 0, first = 0, last = 0;
  MatGetSize(matrix, &rows, &cols);
  MatGetOwnershipRange(matrix, &first, &last);
  MatDestroy(&matrix);
  EXPECT_EQ(rows, space.global_dof_count);
  EXPECT_EQ(last - first, space.owned_dof_count);
  for (PetscInt v = 0; v < mesh.local_vertex_count(); ++v) {
    const PetscInt dof = space.vertex_dof[static_cast<std::size_t>(v)];
    EXPECT_EQ(dof >= first && dof < last, v < mesh.owned_vertex_count);
  }
  for (PetscInt e = 0; e < static_cast<PetscInt>(space.edge_dof.size()); ++e) {
    const PetscInt dof = space.edge_dof[static_cast<std::size_t>(e)];
    EXPECT_EQ(dof >= first && dof < last, e < mesh.owned_edge_count);
  }
}

// Every owned cell adds a block of ones over its dofs (vertices, then edges for P2) to DMCreateMatrix's matrix
// without a new allocation; then the entries sum to cells * (dofs per cell)^2.
void expect_cells_assemble(const PlexMesh& mesh, const DisplacementSpace& space) {
  Mat matrix = nullptr;
  ASSERT_EQ(DMCreateMatrix(space.dm.get(), &matrix), 0);
  MatSetOption(matrix, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE);
  const int d = mesh.dim;
  const int edges = space.order == 2 ? mesh.edges_per_cell() : 0;
  const int n = d * (d + 1 + edges);
  const std::vector<PetscScalar> ones(static_cast<std::size_t>(n * n), 1.0);
  PetscErrorCode code = 0;
  PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
  for (PetscInt c = 0; c < mesh.owned_cell_count && code == 0; ++c) {
    std::vector<PetscInt> rows;
    for (int i = 0; i <= d; ++i) {
      const PetscInt first = space.vertex_dof[static_cast<std::size_t>(mesh.cell_vertices[static_cast<std::size_t>(c * (d + 1) + i)])];
      for (int k = 0; k < d; ++k) rows.push_back(first + k);
    }
    for (int i = 0; i < edges; ++i) {
      const PetscInt first = space.edge_dof[static_cast<std::size_t>(mesh.cell_edges[static_cast<std::size_t>(c * edges + i)])];
      for (int k = 0; k < d; ++k) rows.push_back(first + k);
    }
    code = MatSetValues(matrix, n, rows.data(), n, rows.data(), ones.data(), ADD_VALUES);
  }
  PetscPopErrorHandler();
  EXPECT_EQ(code, 0);
  MatAssemblyBegin(matrix, MAT_FINAL_ASSEMBLY);
  MatAssemblyEnd(matrix, MAT_FINAL_ASSEMBLY);
  Vec x = nullptr, y = nullptr;
  MatCreateVecs(matrix, &x, &y);
  VecSet(x, 1.0);
  MatMult(matrix, x, y);
  PetscScalar total = 0;
  VecSum(y, &total);
  EXPECT_DOUBLE_EQ(PetscRealPart(total), static_cast<double>(mesh.global_cell_count) * n * n);
  VecDestroy(&x);
  VecDestroy(&y);
  MatDestroy(&matrix);
}

// A global vector holding each dof's own index, sent to the local vectors: every vertex and edge, ghosts too,
// finds its global dofs at its local offsets.
void expect_ghosts_refresh(const PlexMesh& mesh, const DisplacementSpace& space) {
  DM dm = space.dm.get();
  Vec global = nullptr, local = nullptr;
  DMCreateGlobalVector(dm, &global);
  DMCreateLocalVector(dm, &local);
  PetscInt first = 0, last = 0;
  VecGetOwnershipRange(global, &first, &last);
  for (PetscInt i = first; i < last; ++i) VecSetValue(global, i, static_cast<PetscScalar>(i), INSERT_VALUES);
  VecAssemblyBegin(global);
  VecAssemblyEnd(global);
  DMGlobalToLocal(dm, global, INSERT_VALUES, local);
  const PetscScalar* x = nullptr;
  VecGetArrayRead(local, &x);
  for (std::size_t v = 0; v < space.vertex_dof.size(); ++v) {
    for (int k = 0; k < mesh.dim; ++k) {
      ASSERT_EQ(PetscRealPart(x[space.vertex_local_dof[v] + k]), static_cast<double>(space.vertex_dof[v] + k));
    }
  }
  for (std::size_t e = 0; e < space.edge_dof.size(); ++e) {
    for (int k = 0; k < mesh.dim; ++k) {
      ASSERT_EQ(PetscRealPart(x[space.edge_local_dof[e] + k]), static_cast<double>(space.edge_dof[e] + k));
    }
  }
  VecRestoreArrayRead(local, &x);
  VecDestroy(&local);
  VecDestroy(&global);
}

TEST(DisplacementSpace, DiskDofsMatchEulersFormula) {
  const PlexMesh mesh = build_plex_mesh(MPI_COMM_WORLD, std::vector<MeshBody>{MeshBody{DiskShape{1, 0.2}, {}, 0}});
  // A disk: V - E + F = 1.
  EXPECT_EQ(mesh.global_vertex_count - mesh.global_edge_count + mesh.global_cell_count, 1);
  const DisplacementSpace p1 = make_displacement_space(mesh, 1);
  const DisplacementSpace p2 = make_displacement_space(mesh, 2);
  EXPECT_EQ(p1.global_dof_count, 2 * mesh.global_vertex_count);
  EXPECT_EQ(p2.global_dof_count, 2 * (2 * mesh.global_vertex_count + mesh.global_cell_count - 1));
  expect_owned_rows_in_range(mesh, p1);
  expect_owned_rows_in_range(mesh, p2);
  expect_one_dof_per_vertex(mesh, p2);
  expect_cells_assemble(mesh, p1);
  expect_cells_assemble(mesh, p2);
  expect_ghosts_refresh(mesh, p1);
}

TEST(DisplacementSpace, BallDofsMatchEulersFormula) {
  const PlexMesh mesh =
      build_plex_mesh(MPI_COMM_WORLD, std::vector<MeshBody>{MeshBody{BallShape{1, 0.4}, {}, 0}}, MeshOptions{"ptscotch", 1});
  // A ball: V - E + F - T = 1 with F = (4 T + boundary faces) / 2.
  const std::int64_t faces = (4 * mesh.global_cell_count + mesh.global_boundary_face_count) / 2;
  EXPECT_EQ(mesh.global_vertex_count - mesh.global_edge_count + faces - mesh.global_cell_count, 1);
  const DisplacementSpace p2 = make_displacement_space(mesh, 2);
  EXPECT_EQ(p2.global_dof_count, 3 * (mesh.global_vertex_count + mesh.global_edge_count));
  expect_owned_rows_in_range(mesh, p2);
  expect_one_dof_per_vertex(mesh, p2);
  expect_cells_assemble(mesh, p2);
  expect_ghosts_refresh(mesh, p2);
  EXPECT_THROW(make_displacement_space(mesh, 3), std::invalid_argument);
}

}  // namespace

}  // namespace mpi_plex_mesh_space
