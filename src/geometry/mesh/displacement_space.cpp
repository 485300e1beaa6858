// make_displacement_space (displacement_space.hpp).
#include "percussion/geometry/mesh/displacement_space.hpp"

#include <stdexcept>

#include "plex_mesh_internal.hpp"

namespace percussion::geometry {
namespace {

using detail::check;

// The global section stores -(offset + 1) for points another rank owns.
PetscInt global_offset(PetscSection global, PetscInt point) {
  PetscInt offset = 0;
  check(PetscSectionGetOffset(global, point, &offset), "PetscSectionGetOffset");
  return offset < 0 ? -(offset + 1) : offset;
}

}  // namespace

DisplacementSpace make_displacement_space(const PlexMesh& mesh, int order) {
  if (order != 1 && order != 2) throw std::invalid_argument("make_displacement_space: order must be 1 or 2");
  DisplacementSpace space;
  space.order = order;
  space.dim = mesh.dim;
  DM dm = nullptr;
  check(DMClone(mesh.dm.get(), &dm), "DMClone");
  space.dm = PlexDm(dm);
  MPI_Comm comm = PetscObjectComm(reinterpret_cast<PetscObject>(dm));

  PetscSection section = nullptr;
  PetscInt p_start = 0, p_end = 0;
  check(DMPlexGetChart(dm, &p_start, &p_end), "DMPlexGetChart");
  check(PetscSectionCreate(comm, &section), "PetscSectionCreate");
  check(PetscSectionSetNumFields(section, 1), "PetscSectionSetNumFields");
  check(PetscSectionSetFieldName(section, 0, "displacement"), "PetscSectionSetFieldName");
  check(PetscSectionSetFieldComponents(section, 0, mesh.dim), "PetscSectionSetFieldComponents");
  check(PetscSectionSetChart(section, p_start, p_end), "PetscSectionSetChart");
  auto give = [&](PetscInt point) {
    check(PetscSectionSetDof(section, point, mesh.dim), "PetscSectionSetDof");
    check(PetscSectionSetFieldDof(section, point, 0, mesh.dim), "PetscSectionSetFieldDof");
  };
  for (PetscInt v : mesh.vertex_point) give(v);
  if (order == 2) {
    for (PetscInt e : mesh.edge_point) give(e);
  }
  check(PetscSectionSetUp(section), "PetscSectionSetUp");
  check(DMSetLocalSection(dm, section), "DMSetLocalSection");
  check(PetscSectionDestroy(&section), "PetscSectionDestroy");

  PetscSection global = nullptr;
  check(DMGetGlobalSection(dm, &global), "DMGetGlobalSection");
  PetscInt owned = 0;
  check(PetscSectionGetConstrainedStorageSize(global, &owned), "PetscSectionGetConstrainedStorageSize");
  space.owned_dof_count = owned;
  std::int64_t local = owned;
  MPI_Allreduce(&local, &space.global_dof_count, 1, MPI_INT64_T, MPI_SUM, comm);
  PetscSection local_section = nullptr;
  check(DMGetLocalSection(dm, &local_section), "DMGetLocalSection");
  auto local_offset = [&](PetscInt point) {
    PetscInt offset = 0;
    check(PetscSectionGetOffset(local_section, point, &offset), "PetscSectionGetOffset");
    return offset;
  };
  for (PetscInt v : mesh.vertex_point) {
    space.vertex_dof.push_back(global_offset(global, v));
    space.vertex_local_dof.push_back(local_offset(v));
  }
  if (order == 2) {
    for (PetscInt e : mesh.edge_point) {
      space.edge_dof.push_back(global_offset(global, e));
      space.edge_local_dof.push_back(local_offset(e));
    }
  }
  return space;
}

}  // namespace percussion::geometry
