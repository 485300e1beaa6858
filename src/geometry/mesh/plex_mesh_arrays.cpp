// fill_local_arrays (plex_mesh_internal.hpp): owned-first vertices, cells, edges and outward boundary faces of a
// distributed DMPlex; cell_signed_volumes (plex_mesh.hpp).
#include <petscsf.h>

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <stdexcept>

#include "percussion/geometry/mesh/element_volume.hpp"
#include "plex_mesh_internal.hpp"

namespace percussion::geometry {
namespace detail {
namespace {

// Each local point's owning rank (this rank unless the point SF names another).
std::vector<int> point_owners(DM dm, PetscInt p_start, PetscInt p_end) {
  int rank = 0;
  MPI_Comm_rank(PetscObjectComm(reinterpret_cast<PetscObject>(dm)), &rank);
  std::vector<int> owner(static_cast<std::size_t>(p_end - p_start), rank);
  PetscSF sf = nullptr;
  check(DMGetPointSF(dm, &sf), "DMGetPointSF");
  PetscInt roots = 0, leaves = 0;
  const PetscInt* local = nullptr;
  const PetscSFNode* remote = nullptr;
  check(PetscSFGetGraph(sf, &roots, &leaves, &local, &remote), "PetscSFGetGraph");
  if (roots < 0) return owner;  // no graph: a serial mesh
  for (PetscInt i = 0; i < leaves; ++i) {
    const PetscInt p = local ? local[i] : i;
    owner[static_cast<std::size_t>(p - p_start)] = static_cast<int>(remote[i].rank);
  }
  return owner;
}

// The points of [start, end), owned ones first, each group in point order; index[p - p_start] = its position.
std::vector<PetscInt> owned_first(PetscInt start, PetscInt end, const std::vector<int>& owner, int rank,
                                  PetscInt p_start, std::vector<PetscInt>& index, PetscInt& owned) {
  std::vector<PetscInt> points;
  for (int pass = 0; pass < 2; ++pass) {
    for (PetscInt p = start; p < end; ++p) {
      const bool mine = owner[static_cast<std::size_t>(p - p_start)] == rank;
      if (mine == (pass == 0)) {
        index[static_cast<std::size_t>(p - p_start)] = static_cast<PetscInt>(points.size());
        points.push_back(p);
      }
    }
    if (pass == 0) owned = static_cast<PetscInt>(points.size());
  }
  return points;
}

// The vertices in a point's closure, in closure order.
std::vector<PetscInt> closure_vertices(DM dm, PetscInt point, PetscInt v_start, PetscInt v_end) {
  PetscInt size = 0;
  PetscInt* closure = nullptr;
  check(DMPlexGetTransitiveClosure(dm, point, PETSC_TRUE, &size, &closure), "DMPlexGetTransitiveClosure");
  std::vector<PetscInt> vertices;
  for (PetscInt i = 0; i < size; ++i) {
    const PetscInt p = closure[2 * i];
    if (p >= v_start && p < v_end) vertices.push_back(p);
  }
  check(DMPlexRestoreTransitiveClosure(dm, point, PETSC_TRUE, &size, &closure), "DMPlexRestoreTransitiveClosure");
  return vertices;
}

std::int64_t sum(MPI_Comm comm, PetscInt owned) {
  std::int64_t local = owned, total = 0;
  MPI_Allreduce(&local, &total, 1, MPI_INT64_T, MPI_SUM, comm);
  return total;
}

}  // namespace

void fill_local_arrays(PlexMesh& mesh, const std::vector<PetscInt>& serial_point, const SerialStarts& starts) {
  DM dm = mesh.dm.get();
  const int dim = mesh.dim;
  MPI_Comm comm = PetscObjectComm(reinterpret_cast<PetscObject>(dm));
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  PetscInt p_start = 0, p_end = 0, v_start = 0, v_end = 0, e_start = 0, e_end = 0, f_start = 0, f_end = 0,
           c_start = 0, c_end = 0;
  check(DMPlexGetChart(dm, &p_start, &p_end), "DMPlexGetChart");
  check(DMPlexGetDepthStratum(dm, 0, &v_start, &v_end), "DMPlexGetDepthStratum");
  check(DMPlexGetDepthStratum(dm, 1, &e_start, &e_end), "DMPlexGetDepthStratum");
  check(DMPlexGetHeightStratum(dm, 1, &f_start, &f_end), "DMPlexGetHeightStratum");
  check(DMPlexGetHeightStratum(dm, 0, &c_start, &c_end), "DMPlexGetHeightStratum");
  const std::vector<int> owner = point_owners(dm, p_start, p_end);
  std::vector<PetscInt> index(static_cast<std::size_t>(p_end - p_start), -1);
  auto at = [&](PetscInt p) { return static_cast<std::size_t>(p - p_start); };

  // Vertices and their rest coordinates.
  mesh.vertex_point = owned_first(v_start, v_end, owner, rank, p_start, index, mesh.owned_vertex_count);
  Vec coords = nullptr;
  PetscSection coord_section = nullptr;
  check(DMGetCoordinatesLocal(dm, &coords), "DMGetCoordinatesLocal");
  check(DMGetCoordinateSection(dm, &coord_section), "DMGetCoordinateSection");
  const PetscScalar* x = nullptr;
  check(VecGetArrayRead(coords, &x), "VecGetArrayRead");
  for (PetscInt v : mesh.vertex_point) {
    PetscInt offset = 0;
    check(PetscSectionGetOffset(coord_section, v, &offset), "PetscSectionGetOffset");
    for (int d = 0; d < dim; ++d) mesh.vertex_coordinates.push_back(PetscRealPart(x[offset + d]));
    mesh.vertex_global_id.push_back(serial_point[at(v)] - starts.vertex);
    mesh.vertex_owner.push_back(owner[at(v)]);
  }
  check(VecRestoreArrayRead(coords, &x), "VecRestoreArrayRead");

  // Edges.
  mesh.edge_point = owned_first(e_start, e_end, owner, rank, p_start, index, mesh.owned_edge_count);
  for (PetscInt e : mesh.edge_point) {
    const PetscInt* cone = nullptr;
    check(DMPlexGetCone(dm, e, &cone), "DMPlexGetCone");
    mesh.edge_vertices.push_back(index[at(cone[0])]);
    mesh.edge_vertices.push_back(index[at(cone[1])]);
    mesh.edge_global_id.push_back(serial_point[at(e)] - starts.edge);
  }

  // Cells: closure vertices, reordered to a positive rest volume, then their edges in kTriangleEdges order.
  DMLabel body_label = nullptr;
  check(DMGetLabel(dm, "body", &body_label), "DMGetLabel");
  mesh.cell_point = owned_first(c_start, c_end, owner, rank, p_start, index, mesh.owned_cell_count);
  mesh.vertex_body.assign(mesh.vertex_point.size(), -1);
  const int corners = dim + 1;
  for (PetscInt c : mesh.cell_point) {
    std::vector<PetscInt> vertices = closure_vertices(dm, c, v_start, v_end);
    if (static_cast<int>(vertices.size()) != corners) throw std::logic_error("PlexMesh: a cell is not a simplex");
    std::array<PetscInt, 4> local{};
    for (int i = 0; i < corners; ++i) local[i] = index[at(vertices[i])];
    if (simplex_signed_volume(dim, mesh.vertex_coordinates.data(), local.data()) < 0) {
      std::swap(local[corners - 2], local[corners - 1]);
    }
    PetscInt body = 0;
    check(DMLabelGetValue(body_label, c, &body), "DMLabelGetValue");
    for (int i = 0; i < corners; ++i) {
      mesh.cell_vertices.push_back(local[i]);
      mesh.vertex_body[static_cast<std::size_t>(local[i])] = static_cast<int>(body);
    }
    mesh.cell_body.push_back(static_cast<int>(body));
    mesh.cell_global_id.push_back(serial_point[at(c)] - starts.cell);

    std::array<PetscInt, 6> edges{};
    edges.fill(-1);
    PetscInt size = 0;
    PetscInt* closure = nullptr;
    check(DMPlexGetTransitiveClosure(dm, c, PETSC_TRUE, &size, &closure), "DMPlexGetTransitiveClosure");
    for (PetscInt i = 0; i < size; ++i) {
      const PetscInt e = closure[2 * i];
      if (e < e_start || e >= e_end) continue;
      const PetscInt edge = index[at(e)];
      const PetscInt a = mesh.edge_vertices[2 * edge], b = mesh.edge_vertices[2 * edge + 1];
      for (int k = 0; k < mesh.edges_per_cell(); ++k) {
        const int i0 = dim == 2 ? kTriangleEdges[k][0] : kTetrahedronEdges[k][0];
        const int i1 = dim == 2 ? kTriangleEdges[k][1] : kTetrahedronEdges[k][1];
        if ((local[i0] == a && local[i1] == b) || (local[i0] == b && local[i1] == a)) edges[k] = edge;
      }
    }
    check(DMPlexRestoreTransitiveClosure(dm, c, PETSC_TRUE, &size, &closure), "DMPlexRestoreTransitiveClosure");
    for (int k = 0; k < mesh.edges_per_cell(); ++k) {
      if (edges[k] < 0) throw std::logic_error("PlexMesh: a cell's edge is missing from its closure");
      mesh.cell_edges.push_back(edges[k]);
    }
  }

  // Boundary faces, oriented away from the cell's vertex that is not on the face.
  DMLabel boundary = nullptr;
  check(DMGetLabel(dm, "boundary", &boundary), "DMGetLabel");
  std::vector<PetscInt> faces;
  for (PetscInt f = f_start; f < f_end; ++f) {
    PetscInt value = -1;
    check(DMLabelGetValue(boundary, f, &value), "DMLabelGetValue");
    if (value == 1) faces.push_back(f);
  }
  std::stable_partition(faces.begin(), faces.end(), [&](PetscInt f) { return owner[at(f)] == rank; });
  for (PetscInt f : faces) {
    if (owner[at(f)] == rank) ++mesh.owned_boundary_face_count;
    PetscInt support_size = 0;
    const PetscInt* support = nullptr;
    check(DMPlexGetSupportSize(dm, f, &support_size), "DMPlexGetSupportSize");
    check(DMPlexGetSupport(dm, f, &support), "DMPlexGetSupport");
    if (support_size != 1) throw std::logic_error("PlexMesh: a boundary face bounds more than one local cell");
    const PetscInt cell = index[at(support[0])];
    std::array<PetscInt, 3> v{};
    const std::vector<PetscInt> fv = closure_vertices(dm, f, v_start, v_end);
    for (int i = 0; i < dim; ++i) v[i] = index[at(fv[static_cast<std::size_t>(i)])];
    PetscInt opposite = -1;
    for (int i = 0; i < corners; ++i) {
      const PetscInt w = mesh.cell_vertices[static_cast<std::size_t>(cell * corners + i)];
      if (std::find(v.begin(), v.begin() + dim, w) == v.begin() + dim) opposite = w;
    }
    const double* X = mesh.vertex_coordinates.data();
    if (dim == 2) {
      const Eigen::Vector2d a(X + 2 * v[0]), b(X + 2 * v[1]), o(X + 2 * opposite);
      const Eigen::Vector2d normal(b.y() - a.y(), a.x() - b.x());
      if (normal.dot(o - a) > 0) std::swap(v[0], v[1]);
    } else {
      const Eigen::Vector3d a(X + 3 * v[0]), b(X + 3 * v[1]), c(X + 3 * v[2]), o(X + 3 * opposite);
      if ((b - a).cross(c - a).dot(o - a) > 0) std::swap(v[1], v[2]);
    }
    for (int i = 0; i < dim; ++i) mesh.boundary_face_vertices.push_back(v[i]);
    mesh.boundary_face_cell.push_back(cell);
    mesh.boundary_face_body.push_back(mesh.cell_body[static_cast<std::size_t>(cell)]);
    mesh.boundary_face_global_id.push_back(serial_point[at(f)] - starts.face);
  }

  mesh.global_vertex_count = sum(comm, mesh.owned_vertex_count);
  mesh.global_edge_count = sum(comm, mesh.owned_edge_count);
  mesh.global_cell_count = sum(comm, mesh.owned_cell_count);
  mesh.global_boundary_face_count = sum(comm, mesh.owned_boundary_face_count);
}

}  // namespace detail

std::vector<double> cell_signed_volumes(const PlexMesh& mesh, std::span<const double> coordinates) {
  if (coordinates.size() != mesh.vertex_point.size() * static_cast<std::size_t>(mesh.dim)) {
    throw std::invalid_argument("cell_signed_volumes: need dim coordinates per local vertex");
  }
  const int corners = mesh.dim + 1;
  std::vector<double> volumes(mesh.cell_point.size());
  for (std::size_t c = 0; c < volumes.size(); ++c) {
    volumes[c] = simplex_signed_volume(mesh.dim, coordinates.data(), mesh.cell_vertices.data() + c * corners);
  }
  return volumes;
}

}  // namespace percussion::geometry
