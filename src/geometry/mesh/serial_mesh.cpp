// SerialMesh (serial_mesh.hpp): reading Gmsh files through DMPlex, placing and orienting a body's cells.
#include "percussion/geometry/mesh/serial_mesh.hpp"

#include <petscdmplex.h>

#include <Eigen/Dense>
#include <cmath>
#include <fstream>
#include <string>
#include <type_traits>

#include "percussion/core/error.hpp"
#include "percussion/geometry/mesh/element_volume.hpp"
#include "percussion/geometry/mesh/gmsh_generator.hpp"

namespace percussion::geometry {
namespace {

// While it lives PETSc errors come back as codes (no traceback on stderr) and the DM is destroyed on every way out.
struct QuietDm {
  QuietDm() { PetscPushErrorHandler(PetscReturnErrorHandler, nullptr); }
  ~QuietDm() {
    DMDestroy(&dm);
    PetscPopErrorHandler();
  }
  DM dm = nullptr;
};

void check_read(PetscErrorCode code, const std::string& path, const char* what) {
  if (code == 0) return;
  const char* text = nullptr;
  char* specific = nullptr;
  PetscErrorMessage(code, &text, &specific);
  throw InputError(path + ": not a readable Gmsh mesh (" + what + ": " + (text ? text : "error") +
                   (specific && *specific ? std::string(": ") + specific : "") + ")");
}

}  // namespace

int shape_dimension(const BodyShape& shape) {
  return std::visit(
      [](const auto& s) -> int {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, BoxShape>) return s.dim;
        if constexpr (std::is_same_v<S, DiskShape>) return 2;
        if constexpr (std::is_same_v<S, BallShape>) return 3;
        return 0;
      },
      shape);
}

SerialMesh read_gmsh_file(const std::string& path) {
  if (!std::ifstream(path)) throw InputError(path + ": cannot open the mesh file");
  QuietDm q;
  check_read(DMPlexCreateGmshFromFile(PETSC_COMM_SELF, path.c_str(), PETSC_FALSE, &q.dm), path,
             "DMPlexCreateGmshFromFile");
  SerialMesh mesh;
  PetscInt dim = 0, cdim = 0, c_start = 0, c_end = 0, v_start = 0, v_end = 0;
  check_read(DMGetDimension(q.dm, &dim), path, "DMGetDimension");
  check_read(DMGetCoordinateDim(q.dm, &cdim), path, "DMGetCoordinateDim");
  if (dim != 2 && dim != 3) throw InputError(path + ": the mesh has dimension " + std::to_string(dim) + ", need 2 or 3");
  check_read(DMPlexGetHeightStratum(q.dm, 0, &c_start, &c_end), path, "DMPlexGetHeightStratum");
  check_read(DMPlexGetDepthStratum(q.dm, 0, &v_start, &v_end), path, "DMPlexGetDepthStratum");
  if (c_end <= c_start) throw InputError(path + ": the mesh has no cells");
  mesh.dim = static_cast<int>(dim);

  // Vertices the cells use, numbered in the file's order.
  std::vector<PetscInt> index(static_cast<std::size_t>(v_end - v_start), -1);
  for (PetscInt c = c_start; c < c_end; ++c) {
    PetscInt size = 0;
    const PetscInt* cone = nullptr;
    check_read(DMPlexGetConeSize(q.dm, c, &size), path, "DMPlexGetConeSize");
    if (size != dim + 1) {
      throw InputError(path + ": cell " + std::to_string(c - c_start) + " has " + std::to_string(size) +
                       " vertices; only triangles (2D) and tetrahedra (3D) are supported");
    }
    check_read(DMPlexGetCone(q.dm, c, &cone), path, "DMPlexGetCone");
    for (PetscInt i = 0; i < size; ++i) index[static_cast<std::size_t>(cone[i] - v_start)] = 0;
  }
  Vec coords = nullptr;
  PetscSection section = nullptr;
  check_read(DMGetCoordinatesLocal(q.dm, &coords), path, "DMGetCoordinatesLocal");
  check_read(DMGetCoordinateSection(q.dm, &section), path, "DMGetCoordinateSection");
  const PetscScalar* x = nullptr;
  check_read(VecGetArrayRead(coords, &x), path, "VecGetArrayRead");
  PetscInt next = 0;
  for (PetscInt v = v_start; v < v_end; ++v) {
    auto& i = index[static_cast<std::size_t>(v - v_start)];
    if (i < 0) continue;
    i = next++;
    PetscInt offset = 0;
    PetscSectionGetOffset(section, v, &offset);
    for (PetscInt d = 0; d < dim; ++d) mesh.coordinates.push_back(PetscRealPart(x[offset + d]));
    // A 2D mesh written in 3D coordinates must lie in the plane z = 0.
    for (PetscInt d = dim; d < cdim; ++d) {
      if (PetscRealPart(x[offset + d]) != 0) {
        VecRestoreArrayRead(coords, &x);
        throw InputError(path + ": a 2D mesh must lie in the plane z = 0");
      }
    }
  }
  VecRestoreArrayRead(coords, &x);
  for (PetscInt c = c_start; c < c_end; ++c) {
    const PetscInt* cone = nullptr;
    DMPlexGetCone(q.dm, c, &cone);
    for (PetscInt i = 0; i <= dim; ++i) mesh.cells.push_back(index[static_cast<std::size_t>(cone[i] - v_start)]);
  }
  return mesh;
}

SerialMesh mesh_shape(const BodyShape& shape) {
  if (const auto* file = std::get_if<GmshFileShape>(&shape)) return read_gmsh_file(file->path);
  return std::visit(
      [](const auto& s) -> SerialMesh {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, GmshFileShape>) {
          return {};
        } else {
          return generate_gmsh_mesh(GeneratedShape(s));
        }
      },
      shape);
}

void place_and_orient(SerialMesh& mesh, const Placement& placement, const std::string& what) {
  const int dim = mesh.dim;
  const Eigen::MatrixXd rotation = placement.rotation.topLeftCorner(dim, dim);
  const double orthogonality = (rotation.transpose() * rotation - Eigen::MatrixXd::Identity(dim, dim)).norm();
  if (!(orthogonality < 1e-9) || !(rotation.determinant() > 0)) {
    throw InputError(what + ": the rotation must be proper orthogonal (R^T R = I, det R = 1)");
  }
  if (!(placement.scale > 0) || !std::isfinite(placement.scale)) {
    throw InputError(what + ": the scale must be > 0, got " + std::to_string(placement.scale));
  }
  const Eigen::VectorXd translation = placement.translation.head(dim);
  for (PetscInt v = 0; v < mesh.vertex_count(); ++v) {
    Eigen::Map<Eigen::VectorXd> x(mesh.coordinates.data() + v * dim, dim);
    x = rotation * (placement.scale * x) + translation;
  }
  // Orientation: swapping the last two vertices flips the sign of the volume.
  const int corners = dim + 1;
  for (PetscInt c = 0; c < mesh.cell_count(); ++c) {
    PetscInt* v = mesh.cells.data() + c * corners;
    const double volume = simplex_signed_volume(dim, mesh.coordinates.data(), v);
    if (volume == 0 || !std::isfinite(volume)) {
      throw InputError(what + ": cell " + std::to_string(c) + " is degenerate (zero volume)");
    }
    if (volume < 0) std::swap(v[corners - 2], v[corners - 1]);
  }
}

}  // namespace percussion::geometry
