#pragma once
// Between building the distributed DM (plex_mesh.cpp) and reading its local arrays (plex_mesh_arrays.cpp).
#include <petscdmplex.h>

#include <string>
#include <vector>

#include "percussion/geometry/mesh/plex_mesh.hpp"

namespace percussion::geometry::detail {

// The first serial point of each stratum: global id = serial point - start.
struct SerialStarts {
  PetscInt vertex = 0, edge = 0, face = 0, cell = 0;
};

// Fills every array of mesh from mesh.dm; serial_point[p - pStart] is the serial number of local point p.
void fill_local_arrays(PlexMesh& mesh, const std::vector<PetscInt>& serial_point, const SerialStarts& starts);

// Throws a NumericalError naming the PETSc call when code is non-zero.
void check(PetscErrorCode code, const char* what);

}  // namespace percussion::geometry::detail
