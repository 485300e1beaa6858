#pragma once
// The bodies' boundary surfaces as IPC contact primitives, distributed with the mesh (notes 002 §7): each rank
// holds its owned boundary faces (2D: edges, 3D: triangles) and their vertices (and, in 3D, their edges), with
// global vertex ids, body ids and rest area weights. Every vertex and edge primitive is owned by exactly one
// rank, the owner of the incident boundary face of smallest global id; areas are summed over all incident faces
// in face-id order at a rendezvous rank (hash of the id), so they are the same bits on any rank count.
#include <mpi.h>

#include <array>
#include <cstdint>
#include <vector>

#include "percussion/geometry/mesh/plex_mesh.hpp"

namespace percussion::ipc {

struct ContactSurface {
  int dim = 0;
  // Surface vertices of this rank's faces: the mesh-local vertex, its global id, body, rest position (3 numbers)
  // and area (2D: half the incident boundary edges' lengths, 3D: a third of the incident triangles' areas).
  std::vector<PetscInt> vertex_mesh_index;
  std::vector<std::int64_t> vertex_global_id;
  std::vector<int> vertex_body;
  std::vector<double> vertex_rest;
  std::vector<double> vertex_area;
  std::vector<char> vertex_owned;  // this rank owns the vertex primitive
  // Edges (2D: the boundary faces, all owned; 3D: the unique edges of the triangles, a third of their incident
  // triangles' areas), as surface-vertex indices with the smaller global id first in 3D.
  std::vector<std::array<std::int32_t, 2>> edges;
  std::vector<double> edge_area;
  std::vector<char> edge_owned;
  // Triangles (3D only, all owned), outward-oriented.
  std::vector<std::array<std::int32_t, 3>> triangles;

  std::size_t vertex_count() const { return vertex_global_id.size(); }
};

// Collective over comm (the mesh's communicator). Surfaces of all bodies; self_contact does not matter here.
ContactSurface build_contact_surface(MPI_Comm comm, const geometry::PlexMesh& mesh);

}  // namespace percussion::ipc
