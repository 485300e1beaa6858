#pragma once
// P1 or P2 Lagrange displacement dofs on a PlexMesh: a PetscSection (dim dofs per vertex, and per edge for P2)
// on a clone of the mesh's DM, so DMCreateGlobalVector / DMCreateMatrix give the global system's objects.
#include <petscdmplex.h>

#include <cstdint>
#include <vector>

#include "percussion/geometry/mesh/plex_mesh.hpp"

namespace percussion::geometry {

struct DisplacementSpace {
  PlexDm dm;  // the mesh's topology with the displacement section as its local section
  int order = 1;
  int dim = 0;
  PetscInt owned_dof_count = 0;   // rows of the global system on this rank
  std::int64_t global_dof_count = 0;
  std::vector<PetscInt> vertex_dof;  // global index of the first of dim dofs of each local vertex (ghosts too)
  std::vector<PetscInt> edge_dof;    // the same for each local edge (P2 only)
  // Offsets in a local vector of dm (DMGetLocalVector, refreshed by DMGlobalToLocal), for the same items.
  std::vector<PetscInt> vertex_local_dof;
  std::vector<PetscInt> edge_local_dof;
};

DisplacementSpace make_displacement_space(const PlexMesh& mesh, int order);

}  // namespace percussion::geometry
