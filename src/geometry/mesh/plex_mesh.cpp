// build_plex_mesh (plex_mesh.hpp): the scene's bodies composed on the first rank, then partitioned and spread.
#include "percussion/geometry/mesh/plex_mesh.hpp"

#include <petscsf.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "percussion/core/error.hpp"
#include "percussion/geometry/mesh/serial_mesh.hpp"
#include "plex_mesh_internal.hpp"

extern "C" void SCOTCH_randomReset(void);

namespace percussion::geometry {

PlexDm& PlexDm::operator=(PlexDm&& other) noexcept {
  if (this != &other) {
    DMDestroy(&dm_);
    dm_ = other.dm_;
    other.dm_ = nullptr;
  }
  return *this;
}

PlexDm::~PlexDm() { DMDestroy(&dm_); }

namespace detail {

void check(PetscErrorCode code, const char* what) {
  if (code == 0) return;
  const char* text = nullptr;
  char* specific = nullptr;
  PetscErrorMessage(code, &text, &specific);
  throw NumericalError(std::string("PETSc: ") + what + " failed: " + (text ? text : "unknown error") +
                       (specific && *specific ? std::string(": ") + specific : ""));
}

}  // namespace detail

namespace {

using detail::check;

// While it lives PETSc errors come back as codes on every rank (no traceback, no rank ended by the handler).
struct QuietErrors {
  QuietErrors() { PetscPushErrorHandler(PetscReturnErrorHandler, nullptr); }
  ~QuietErrors() { PetscPopErrorHandler(); }
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;
};

// All bodies' cells in one list, vertices numbered body after body.
struct Scene {
  int dim = 0;
  std::vector<double> coordinates;
  std::vector<PetscInt> cells;
  std::vector<int> cell_body;
};

Scene compose(std::span<const MeshBody> bodies) {
  Scene scene;
  if (bodies.empty()) throw InputError("mesh: the scene has no bodies");
  for (std::size_t b = 0; b < bodies.size(); ++b) {
    const std::string what = "mesh: body " + std::to_string(b);
    SerialMesh mesh = mesh_shape(bodies[b].shape);
    if (scene.dim == 0) scene.dim = mesh.dim;
    if (mesh.dim != scene.dim) {
      throw InputError(what + ": a " + std::to_string(mesh.dim) + "D mesh in a " + std::to_string(scene.dim) +
                       "D scene");
    }
    place_and_orient(mesh, bodies[b].placement, what);
    const PetscInt offset = static_cast<PetscInt>(scene.coordinates.size()) / scene.dim;
    scene.coordinates.insert(scene.coordinates.end(), mesh.coordinates.begin(), mesh.coordinates.end());
    for (PetscInt v : mesh.cells) scene.cells.push_back(v + offset);
    scene.cell_body.insert(scene.cell_body.end(), static_cast<std::size_t>(mesh.cell_count()), bodies[b].body_id);
  }
  return scene;
}

// PETSc registers every partitioner type, but those of packages it was built without fail only when they run.
void check_partitioner(PetscPartitioner partitioner) {
  PetscPartitionerType type = nullptr;
  check(PetscPartitionerGetType(partitioner, &type), "PetscPartitionerGetType");
  std::vector<std::string> available{PETSCPARTITIONERSIMPLE, PETSCPARTITIONERGATHER, PETSCPARTITIONERMATPARTITIONING};
#if defined(PETSC_HAVE_PTSCOTCH)
  available.emplace_back(PETSCPARTITIONERPTSCOTCH);
#endif
#if defined(PETSC_HAVE_PARMETIS)
  available.emplace_back(PETSCPARTITIONERPARMETIS);
#endif
#if defined(PETSC_HAVE_CHACO)
  available.emplace_back(PETSCPARTITIONERCHACO);
#endif
  std::string list;
  for (const std::string& name : available) {
    if (name == type) return;
    list += (list.empty() ? "" : ", ") + name;
  }
  throw InputError(std::string("mesh: partitioner \"") + type + "\" is not available in this PETSc (available: " + list +
                   ")");
}

// Sends the serial number of every point along a migration SF (roots: old points, leaves: new points).
std::vector<PetscInt> migrate(PetscSF sf, DM target, const std::vector<PetscInt>& serial_point) {
  PetscInt p_start = 0, p_end = 0;
  check(DMPlexGetChart(target, &p_start, &p_end), "DMPlexGetChart");
  std::vector<PetscInt> out(static_cast<std::size_t>(p_end - p_start), -1);
  check(PetscSFBcastBegin(sf, MPIU_INT, serial_point.data(), out.data(), MPI_REPLACE), "PetscSFBcastBegin");
  check(PetscSFBcastEnd(sf, MPIU_INT, serial_point.data(), out.data(), MPI_REPLACE), "PetscSFBcastEnd");
  return out;
}

}  // namespace

PlexMesh build_plex_mesh(MPI_Comm comm, std::span<const MeshBody> bodies, const MeshOptions& options) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // The first rank builds the scene; its verdict on the input reaches every rank.
  Scene scene;
  std::string error;
  if (rank == 0) {
    try {
      scene = compose(bodies);
    } catch (const InputError& e) {
      error = e.what();
    }
  }
  int error_size = static_cast<int>(error.size());
  MPI_Bcast(&error_size, 1, MPI_INT, 0, comm);
  if (error_size > 0) {
    error.resize(static_cast<std::size_t>(error_size));
    MPI_Bcast(error.data(), error_size, MPI_CHAR, 0, comm);
    throw InputError(error);
  }
  MPI_Bcast(&scene.dim, 1, MPI_INT, 0, comm);
  const int dim = scene.dim;

  QuietErrors quiet;
  PlexMesh mesh;
  mesh.dim = dim;
  DM dm = nullptr;
  const PetscInt cell_count = static_cast<PetscInt>(scene.cell_body.size());
  const PetscInt vertex_count = static_cast<PetscInt>(scene.coordinates.size()) / dim;
  check(DMPlexCreateFromCellListPetsc(comm, dim, cell_count, vertex_count, dim + 1, PETSC_TRUE, scene.cells.data(), dim,
                                      scene.coordinates.data(), &dm),
        "DMPlexCreateFromCellListPetsc");
  mesh.dm = PlexDm(dm);
  check(DMCreateLabel(dm, "body"), "DMCreateLabel");
  check(DMCreateLabel(dm, "boundary"), "DMCreateLabel");
  for (PetscInt c = 0; c < cell_count; ++c) check(DMSetLabelValue(dm, "body", c, scene.cell_body[c]), "DMSetLabelValue");
  DMLabel boundary = nullptr;
  check(DMGetLabel(dm, "boundary", &boundary), "DMGetLabel");
  // Marked before distribution, where a face on one cell is a boundary face and not a cut between ranks.
  check(DMPlexMarkBoundaryFaces(dm, 1, boundary), "DMPlexMarkBoundaryFaces");

  detail::SerialStarts starts;
  PetscInt p_start = 0, p_end = 0, unused = 0;
  check(DMPlexGetChart(dm, &p_start, &p_end), "DMPlexGetChart");
  check(DMPlexGetDepthStratum(dm, 0, &starts.vertex, &unused), "DMPlexGetDepthStratum");
  check(DMPlexGetDepthStratum(dm, 1, &starts.edge, &unused), "DMPlexGetDepthStratum");
  check(DMPlexGetHeightStratum(dm, 1, &starts.face, &unused), "DMPlexGetHeightStratum");
  check(DMPlexGetHeightStratum(dm, 0, &starts.cell, &unused), "DMPlexGetHeightStratum");
  MPI_Bcast(&starts, sizeof starts, MPI_BYTE, 0, comm);
  std::vector<PetscInt> serial_point(static_cast<std::size_t>(p_end - p_start));
  for (PetscInt p = p_start; p < p_end; ++p) serial_point[static_cast<std::size_t>(p - p_start)] = p;

  // Scotch draws from a process-wide generator and may start threads: reset it and keep one thread, so the
  // partition depends on the mesh and the rank count alone.
  setenv("SCOTCH_PTHREAD_NUMBER", "1", 1);
  PetscPartitioner partitioner = nullptr;
  check(DMPlexGetPartitioner(dm, &partitioner), "DMPlexGetPartitioner");
  if (PetscPartitionerSetType(partitioner, options.partitioner.c_str()) != 0) {
    throw InputError("mesh: partitioner \"" + options.partitioner + "\" is not available in this PETSc");
  }
  check(PetscPartitionerSetFromOptions(partitioner), "PetscPartitionerSetFromOptions");
  check_partitioner(partitioner);
  SCOTCH_randomReset();
  PetscSF migration = nullptr;
  DM distributed = nullptr;
  check(DMPlexDistribute(dm, 0, &migration, &distributed), "DMPlexDistribute");
  if (distributed) {
    serial_point = migrate(migration, distributed, serial_point);
    PetscSFDestroy(&migration);
    mesh.dm = PlexDm(distributed);
  }
  if (options.overlap > 0) {
    DM overlapped = nullptr;
    check(DMPlexDistributeOverlap(mesh.dm.get(), options.overlap, &migration, &overlapped), "DMPlexDistributeOverlap");
    if (overlapped) {
      serial_point = migrate(migration, overlapped, serial_point);
      PetscSFDestroy(&migration);
      mesh.dm = PlexDm(overlapped);
    }
  }
  detail::fill_local_arrays(mesh, serial_point, starts);
  return mesh;
}

}  // namespace percussion::geometry
