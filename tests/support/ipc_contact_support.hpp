#pragma once
// Scenes and gathers for the distributed contact tests: generated meshes near contact, a smooth per-vertex
// direction keyed by global id (the same on every rank and rank count), and per-dof sums gathered to rank 0.
#include <mpi.h>

#include <cmath>
#include <functional>
#include <map>
#include <numbers>
#include <utility>
#include <vector>

#include "percussion/geometry/mesh/plex_mesh.hpp"
#include "percussion/methods/ipc/contact_set.hpp"

namespace ipc_contact_test {

using namespace percussion;

struct Scene {
  std::vector<geometry::MeshBody> bodies;
  ipc::ContactOptions options;
  std::function<Eigen::Vector3d(const Eigen::Vector3d&)> deform;  // rest → current (identity when empty)
};

inline geometry::MeshBody body(geometry::BodyShape shape, Eigen::Vector3d translation, int id) {
  geometry::Placement p;
  p.translation = translation;
  return {std::move(shape), p, id};
}

// Two unit cubes, the upper one gap above the lower and shifted sideways off the grid.
inline Scene two_boxes(double gap, double dhat, Eigen::Vector3d offset = Eigen::Vector3d::Zero()) {
  Scene s;
  geometry::BoxShape cube{3, {0, 0, 0}, {1, 1, 1}, 0.5};
  s.bodies = {body(cube, offset, 0), body(cube, offset + Eigen::Vector3d(0.137, 0.071, 1 + gap), 1)};
  s.options.dhat = dhat;
  return s;
}

// A disk resting gap above a box, the box gap above the plane y = −0.5.
inline Scene disk_box_plane(double gap, double dhat) {
  Scene s;
  s.bodies = {body(geometry::BoxShape{2, {-1, -0.5, 0}, {1, 0, 0}, 0.2}, Eigen::Vector3d(0, gap, 0), 0),
              body(geometry::DiskShape{0.5, 0.12}, Eigen::Vector3d(0.0123, 0.5 + 2 * gap, 0), 1)};
  s.options.dhat = dhat;
  s.options.planes = {ipc::HalfPlane{Eigen::Vector3d(0, -0.5, 0), Eigen::Vector3d(0, 1, 0)}};
  return s;
}

// A strip of thickness t bent into a U whose legs' inner faces are gap apart (self-contact).
inline Scene folded_strip(double gap, double dhat) {
  const double t = 0.1, a = 1.0, rho = gap / 2 + t / 2, length = 2 * a + std::numbers::pi * rho;
  Scene s;
  s.bodies = {body(geometry::BoxShape{2, {0, 0, 0}, {length, t, 0}, 0.05}, Eigen::Vector3d::Zero(), 0)};
  s.options.dhat = dhat;
  s.options.self_contact = true;
  s.deform = [=](const Eigen::Vector3d& p) {
    const double cy = t + gap / 2, r = cy - p.y();
    if (p.x() <= a) return p;
    const double theta = (p.x() - a) / rho;
    if (theta <= std::numbers::pi) return Eigen::Vector3d(a + r * std::sin(theta), cy - r * std::cos(theta), 0);
    return Eigen::Vector3d(a - (p.x() - a - std::numbers::pi * rho), cy + r, 0);
  };
  return s;
}

// Current positions of the mesh-local vertices (dim per vertex).
inline std::vector<double> positions(const Scene& s, const geometry::PlexMesh& mesh) {
  std::vector<double> x(mesh.vertex_coordinates);
  if (!s.deform) return x;
  const int d = mesh.dim;
  for (std::size_t v = 0; v < x.size() / d; ++v) {
    Eigen::Vector3d p = Eigen::Vector3d::Zero();
    for (int c = 0; c < d; ++c) p[c] = x[v * d + c];
    const Eigen::Vector3d q = s.deform(p);
    for (int c = 0; c < d; ++c) x[v * d + c] = q[c];
  }
  return x;
}

// A direction per dof from the vertex's global id alone.
inline double direction(std::int64_t gid, int c) { return std::sin(0.7 * static_cast<double>(gid) + 1.3 * c + 0.2); }

// An unrelated second one, to move a scene off its aligned (non-generic) configuration.
inline double jitter(std::int64_t gid, int c) { return std::cos(2.3 * static_cast<double>(gid) + 0.9 * c + 0.4); }

inline std::vector<double> per_vertex(const geometry::PlexMesh& mesh, double (*f)(std::int64_t, int)) {
  std::vector<double> v(mesh.vertex_coordinates.size());
  for (std::size_t i = 0; i < mesh.vertex_global_id.size(); ++i)
    for (int c = 0; c < mesh.dim; ++c) v[i * mesh.dim + c] = f(mesh.vertex_global_id[i], c);
  return v;
}

using DofMap = std::map<std::pair<std::int64_t, int>, double>;

// Sums of (gid, component) entries of all ranks, on rank 0 (empty elsewhere).
inline DofMap gather(MPI_Comm comm, const DofMap& local) {
  struct Entry {
    std::int64_t gid;
    std::int64_t c;
    double value;
  };
  std::vector<Entry> mine;
  for (const auto& [k, v] : local) mine.push_back({k.first, k.second, v});
  int ranks = 1, rank = 0;
  MPI_Comm_size(comm, &ranks);
  MPI_Comm_rank(comm, &rank);
  int bytes = static_cast<int>(mine.size() * sizeof(Entry));
  std::vector<int> counts(ranks), at(ranks + 1, 0);
  MPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  for (int r = 0; r < ranks; ++r) at[r + 1] = at[r] + counts[r];
  std::vector<Entry> all(static_cast<std::size_t>(at[ranks]) / sizeof(Entry));
  MPI_Gatherv(mine.data(), bytes, MPI_BYTE, all.data(), counts.data(), at.data(), MPI_BYTE, 0, comm);
  DofMap out;
  for (const Entry& e : all) out[{e.gid, static_cast<int>(e.c)}] += e.value;
  return out;
}

// The assembled contact gradient by (gid, component), summed on rank 0.
inline DofMap gradient(const ipc::ContactSet& set, double kappa) {
  DofMap local;
  const int d = set.dim();
  set.for_each_gradient(kappa, [&](int n, const std::int64_t* gid, const PetscInt*, const double* g) {
    for (int k = 0; k < n; ++k)
      for (int c = 0; c < d; ++c) local[{gid[k], c}] += g[k * d + c];
  });
  return gather(set.comm(), local);
}

// H v for the direction v of direction(), summed on rank 0.
inline DofMap hessian_times_direction(const ipc::ContactSet& set, double kappa, bool project) {
  DofMap local;
  const int d = set.dim();
  set.for_each_hessian(kappa, project, [&](int n, const std::int64_t* gid, const PetscInt*, const double* h) {
    const int m = n * d;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < m; ++j) local[{gid[i / d], i % d}] += h[i * m + j] * direction(gid[j / d], j % d);
  });
  return gather(set.comm(), local);
}

inline double max_abs(const DofMap& m) {
  double a = 0;
  for (const auto& [k, v] : m) a = std::max(a, std::abs(v));
  return a;
}

// max |a − b| over the union of keys.
inline double max_difference(const DofMap& a, const DofMap& b) {
  double d = 0;
  for (const auto& [k, v] : a) d = std::max(d, std::abs(v - (b.count(k) ? b.at(k) : 0.0)));
  for (const auto& [k, v] : b) d = std::max(d, std::abs(v - (a.count(k) ? a.at(k) : 0.0)));
  return d;
}

inline int rank_of(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}

struct Built {
  geometry::PlexMesh mesh;
  ipc::ContactSurface surface;
  std::vector<double> x;
  ipc::ContactSet set;
};

inline Built build(MPI_Comm comm, const Scene& s) {
  Built b{geometry::build_plex_mesh(comm, s.bodies), {}, {}, {}};
  b.surface = ipc::build_contact_surface(comm, b.mesh);
  b.x = positions(s, b.mesh);
  b.set.build(comm, b.surface, b.x, {}, {}, s.options);
  return b;
}

}  // namespace ipc_contact_test
