#pragma once
// Every body of a scene in one distributed DMPlex (one DM, so the Newton system of all bodies is one PETSc matrix
// whose dofs come from one section), with the flat owned-first arrays the IPC kernels read.
#include <mpi.h>
#include <petscdmplex.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "percussion/geometry/mesh/mesh_body.hpp"

namespace percussion::geometry {

// Owns one DM reference.
class PlexDm {
 public:
  PlexDm() = default;
  explicit PlexDm(DM dm) : dm_(dm) {}
  PlexDm(PlexDm&& other) noexcept : dm_(other.dm_) { other.dm_ = nullptr; }
  PlexDm& operator=(PlexDm&& other) noexcept;
  PlexDm(const PlexDm&) = delete;
  PlexDm& operator=(const PlexDm&) = delete;
  ~PlexDm();
  DM get() const { return dm_; }

 private:
  DM dm_ = nullptr;
};

struct MeshOptions {
  // ptscotch, simple, gather or matpartitioning in Debian's PETSc (parmetis, chaco where PETSc has them);
  // -petscpartitioner_type overrides it.
  std::string partitioner = "ptscotch";
  int overlap = 0;                        // layers of cells shared with neighbouring ranks
};

// Edges of a cell as pairs of its local vertex positions: cell_edges follows this order.
inline constexpr int kTriangleEdges[3][2] = {{0, 1}, {1, 2}, {2, 0}};
inline constexpr int kTetrahedronEdges[6][2] = {{0, 1}, {1, 2}, {2, 0}, {0, 3}, {1, 3}, {2, 3}};

// Local indices run owned first, then ghosts (points a neighbouring rank owns). Global ids are the serial
// numbering of the scene (bodies in order, each in its generator's or file's order), so a vertex, edge, face or
// cell keeps its id whatever the rank count.
struct PlexMesh {
  PlexDm dm;  // interpolated, distributed; labels "body" (cells) and "boundary" (boundary faces, value 1)
  int dim = 0;

  // Vertices.
  PetscInt owned_vertex_count = 0;
  std::int64_t global_vertex_count = 0;
  std::vector<PetscInt> vertex_point;           // DMPlex point
  std::vector<std::int64_t> vertex_global_id;   // 0 .. global_vertex_count - 1
  std::vector<int> vertex_owner;                // owning rank
  std::vector<int> vertex_body;                 // body id
  std::vector<double> vertex_coordinates;       // rest positions, dim per vertex

  // Cells (simplices), positively oriented at rest.
  PetscInt owned_cell_count = 0;
  std::int64_t global_cell_count = 0;
  std::vector<PetscInt> cell_point;
  std::vector<std::int64_t> cell_global_id;
  std::vector<int> cell_body;
  std::vector<PetscInt> cell_vertices;  // dim + 1 local vertex indices per cell
  std::vector<PetscInt> cell_edges;     // 3 (2D) or 6 (3D) local edge indices per cell, kTriangleEdges order

  // Edges (the P2 dofs live on them).
  PetscInt owned_edge_count = 0;
  std::int64_t global_edge_count = 0;
  std::vector<PetscInt> edge_point;
  std::vector<std::int64_t> edge_global_id;
  std::vector<PetscInt> edge_vertices;  // 2 local vertex indices per edge

  // Boundary faces (edges in 2D, triangles in 3D), vertices ordered so the normal points out of the body:
  // in 2D the outward normal of (a, b) is (b - a) rotated by -90 degrees, in 3D it is (b - a) x (c - a).
  PetscInt owned_boundary_face_count = 0;
  std::int64_t global_boundary_face_count = 0;
  std::vector<std::int64_t> boundary_face_global_id;
  std::vector<int> boundary_face_body;
  std::vector<PetscInt> boundary_face_vertices;  // dim local vertex indices per face
  std::vector<PetscInt> boundary_face_cell;      // the local cell the face bounds

  PetscInt local_vertex_count() const { return static_cast<PetscInt>(vertex_point.size()); }
  PetscInt local_cell_count() const { return static_cast<PetscInt>(cell_point.size()); }
  PetscInt local_edge_count() const { return static_cast<PetscInt>(edge_point.size()); }
  PetscInt local_boundary_face_count() const { return static_cast<PetscInt>(boundary_face_global_id.size()); }
  int edges_per_cell() const { return dim == 2 ? 3 : 6; }
};

// Builds the bodies' meshes on the first rank of comm (collective), places them, partitions the cells with the
// partitioner and spreads them over comm. Bad input (a missing or malformed .msh, bodies of different dimensions,
// a degenerate cell) throws InputError on every rank.
PlexMesh build_plex_mesh(MPI_Comm comm, std::span<const MeshBody> bodies, const MeshOptions& options = {});

// Signed volume of every local cell at the given positions (dim per local vertex, PlexMesh's order).
std::vector<double> cell_signed_volumes(const PlexMesh& mesh, std::span<const double> coordinates);

}  // namespace percussion::geometry
