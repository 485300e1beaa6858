#pragma once
// Shared helpers of the mpi_plex_mesh* tests: gathers of owned items to rank 0 and scene sums.
#include <mpi.h>

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <map>
#include <vector>

#include "percussion/geometry/mesh/plex_mesh.hpp"

namespace plex_test {

using percussion::geometry::PlexMesh;

inline int rank_of(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}

inline double allsum(MPI_Comm comm, double x) {
  double s = 0;
  MPI_Allreduce(&x, &s, 1, MPI_DOUBLE, MPI_SUM, comm);
  return s;
}

// Concatenates every rank's values on rank 0 (empty elsewhere).
template <class T>
std::vector<T> gather(MPI_Comm comm, const std::vector<T>& mine) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const int bytes = static_cast<int>(mine.size() * sizeof(T));
  std::vector<int> counts(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
  MPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  int total = 0;
  for (int i = 0; i < size; ++i) {
    displs[static_cast<std::size_t>(i)] = total;
    total += counts[static_cast<std::size_t>(i)];
  }
  std::vector<T> all(rank_of(comm) == 0 ? static_cast<std::size_t>(total) / sizeof(T) : 0);
  MPI_Gatherv(mine.data(), bytes, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE, 0, comm);
  return all;
}

// Sum of the owned cells' signed volumes over the communicator.
inline double total_volume(MPI_Comm comm, const PlexMesh& mesh) {
  const std::vector<double> v = percussion::geometry::cell_signed_volumes(mesh, mesh.vertex_coordinates);
  double s = 0;
  for (PetscInt c = 0; c < mesh.owned_cell_count; ++c) s += v[static_cast<std::size_t>(c)];
  return allsum(comm, s);
}

// Divergence theorem: the sum over owned boundary faces of area * (n . centroid) / dim, which equals the enclosed
// volume only if every face normal points outward.
inline double divergence_volume(MPI_Comm comm, const PlexMesh& mesh) {
  const int d = mesh.dim;
  const double* X = mesh.vertex_coordinates.data();
  double s = 0;
  for (PetscInt f = 0; f < mesh.owned_boundary_face_count; ++f) {
    const PetscInt* v = mesh.boundary_face_vertices.data() + f * d;
    if (d == 2) {
      const Eigen::Vector2d a(X + 2 * v[0]), b(X + 2 * v[1]);
      const Eigen::Vector2d area_normal(b.y() - a.y(), a.x() - b.x());  // length * outward unit normal
      s += area_normal.dot(0.5 * (a + b)) / 2;
    } else {
      const Eigen::Vector3d a(X + 3 * v[0]), b(X + 3 * v[1]), c(X + 3 * v[2]);
      const Eigen::Vector3d area_normal = 0.5 * (b - a).cross(c - a);
      s += area_normal.dot((a + b + c) / 3) / 3;
    }
  }
  return allsum(comm, s);
}

// Owned vertices by global id -> coordinates, gathered on rank 0.
inline std::map<std::int64_t, std::vector<double>> owned_vertices(MPI_Comm comm, const PlexMesh& mesh) {
  std::vector<std::int64_t> ids(mesh.vertex_global_id.begin(), mesh.vertex_global_id.begin() + mesh.owned_vertex_count);
  std::vector<double> x(mesh.vertex_coordinates.begin(), mesh.vertex_coordinates.begin() + mesh.owned_vertex_count * mesh.dim);
  const auto all_ids = gather(comm, ids);
  const auto all_x = gather(comm, x);
  std::map<std::int64_t, std::vector<double>> out;
  for (std::size_t i = 0; i < all_ids.size(); ++i) {
    auto [it, fresh] = out.emplace(all_ids[i], std::vector<double>(all_x.begin() + i * mesh.dim, all_x.begin() + (i + 1) * mesh.dim));
    if (!fresh) it->second.clear();  // owned twice: the comparison then fails
  }
  return out;
}

// Owned boundary faces as their vertices' global ids (outward order), gathered on rank 0.
inline std::vector<std::vector<std::int64_t>> owned_faces(MPI_Comm comm, const PlexMesh& mesh) {
  std::vector<std::int64_t> flat;
  for (PetscInt f = 0; f < mesh.owned_boundary_face_count; ++f) {
    for (int i = 0; i < mesh.dim; ++i) {
      flat.push_back(mesh.vertex_global_id[static_cast<std::size_t>(mesh.boundary_face_vertices[f * mesh.dim + i])]);
    }
  }
  const auto all = gather(comm, flat);
  std::vector<std::vector<std::int64_t>> faces;
  for (std::size_t i = 0; i < all.size(); i += static_cast<std::size_t>(mesh.dim)) {
    faces.emplace_back(all.begin() + i, all.begin() + i + mesh.dim);
  }
  return faces;
}

}  // namespace plex_test
