// ElasticSystem set-up (elastic_system.hpp): the scene's bodies as one distributed mesh, the displacement nodes,
// prescribed regions, initial velocities, and the transfers between global vectors and local node arrays.
#include "percussion/methods/ipc/elastic_system.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <limits>

#include "percussion/core/error.hpp"
#include "percussion/solvers/petsc_check.hpp"

namespace percussion::ipc {
namespace {

using solvers::petsc_check;

geometry::MeshBody mesh_body(const ElasticBody& b, int dim, int id) {
  geometry::MeshBody m;
  m.body_id = id;
  const MeshSpec& s = b.mesh;
  switch (s.kind) {
    case MeshSpec::Kind::box: {
      geometry::BoxShape box;
      box.dim = dim;
      for (int i = 0; i < 3; ++i) {
        box.lower[i] = s.min[i];
        box.upper[i] = s.max[i];
      }
      box.element_size = s.element_size;
      m.shape = box;
      break;
    }
    case MeshSpec::Kind::disk:
      m.shape = geometry::DiskShape{s.radius, s.element_size};
      m.placement.translation = s.center;
      break;
    case MeshSpec::Kind::ball:
      m.shape = geometry::BallShape{s.radius, s.element_size};
      m.placement.translation = s.center;
      break;
    case MeshSpec::Kind::file:
      m.shape = geometry::GmshFileShape{s.file};
      m.placement.translation = s.translation;
      m.placement.scale = s.scale;
      break;
  }
  return m;
}

std::vector<geometry::MeshBody> mesh_bodies(const IpcScene& scene) {
  std::vector<geometry::MeshBody> bodies;
  for (std::size_t k = 0; k < scene.bodies.size(); ++k)
    bodies.push_back(mesh_body(scene.bodies[k], scene.dimension, static_cast<int>(k)));
  return bodies;
}

// One Lagrange order for the whole system: its dofs come from one section.
int common_order(const IpcScene& scene) {
  const int order = scene.bodies.front().order;
  for (const ElasticBody& b : scene.bodies)
    if (b.order != order)
      throw InputError(scene.path + ": " + b.pointer + "/order: every body of a scene has the same order (the first "
                       "has " + std::to_string(order) + ", this one " + std::to_string(b.order) + ")");
  return order;
}

geometry::PlexMesh build_mesh(const IpcScene& scene, MPI_Comm comm) {
  geometry::MeshOptions options;
  options.overlap = 1;  // every cell around an owned node is local: owned rows assemble without communication
  geometry::PlexMesh mesh = build_plex_mesh(comm, mesh_bodies(scene), options);
  if (mesh.dim != scene.dimension)
    throw InputError(scene.path + ": /dimension: the scene is " + std::to_string(scene.dimension) +
                     "D but its meshes are " + std::to_string(mesh.dim) + "D");
  return mesh;
}

bool inside(const double* x, int dim, const Eigen::Vector3d& lo, const Eigen::Vector3d& hi) {
  for (int i = 0; i < dim; ++i)
    if (x[i] < lo[i] || x[i] > hi[i]) return false;
  return true;
}

}  // namespace

ElasticSystem::ElasticSystem(const IpcScene& scene, MPI_Comm comm)
    : comm_(comm),
      materials_(scene.materials),
      gravity_(scene.gravity),
      mesh_(build_mesh(scene, comm)),
      space_(geometry::make_displacement_space(mesh_, common_order(scene))),
      order_(space_.order) {
  std::int64_t owned = space_.owned_dof_count, first = 0;
  MPI_Exscan(&owned, &first, 1, MPI_INT64_T, MPI_SUM, comm_);
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  first_row_ = rank == 0 ? 0 : static_cast<PetscInt>(first);
  cell_material_.resize(static_cast<std::size_t>(mesh_.local_cell_count()));
  for (std::size_t c = 0; c < cell_material_.size(); ++c)
    cell_material_[c] = scene.bodies[static_cast<std::size_t>(mesh_.cell_body[c])].material;
  set_nodes(scene);
  set_loads(scene);
}

void ElasticSystem::set_nodes(const IpcScene& scene) {
  const int d = mesh_.dim;
  PetscSection local = nullptr;
  petsc_check(DMGetLocalSection(space_.dm.get(), &local), "DMGetLocalSection");
  auto add = [&](PetscInt point, PetscInt dof, bool owned, const double* x) {
    PetscInt offset = 0;
    petsc_check(PetscSectionGetOffset(local, point, &offset), "PetscSectionGetOffset");
    node_dof_.push_back(dof);
    node_local_offset_.push_back(offset);
    owned_.push_back(owned ? 1 : 0);
    rest_.insert(rest_.end(), x, x + d);
  };
  for (PetscInt v = 0; v < mesh_.local_vertex_count(); ++v)
    add(mesh_.vertex_point[static_cast<std::size_t>(v)], space_.vertex_dof[static_cast<std::size_t>(v)],
        v < mesh_.owned_vertex_count, &mesh_.vertex_coordinates[static_cast<std::size_t>(v * d)]);
  std::vector<int> node_body(mesh_.vertex_body.begin(), mesh_.vertex_body.end());
  if (order_ == 2) {
    for (PetscInt e = 0; e < mesh_.local_edge_count(); ++e) {
      const PetscInt a = mesh_.edge_vertices[static_cast<std::size_t>(2 * e)];
      const PetscInt b = mesh_.edge_vertices[static_cast<std::size_t>(2 * e + 1)];
      double mid[3];
      for (int i = 0; i < d; ++i)
        mid[i] = 0.5 * (mesh_.vertex_coordinates[static_cast<std::size_t>(a * d + i)] +
                        mesh_.vertex_coordinates[static_cast<std::size_t>(b * d + i)]);
      add(mesh_.edge_point[static_cast<std::size_t>(e)], space_.edge_dof[static_cast<std::size_t>(e)],
          e < mesh_.owned_edge_count, mid);
      node_body.push_back(mesh_.vertex_body[static_cast<std::size_t>(a)]);
    }
  }
  const std::size_t n = node_dof_.size();

  // Prescribed nodes: inside a region at rest; the first region that holds a node moves it.
  prescribed_.assign(n, 0);
  prescribed_velocity_.assign(n * d, 0.0);
  for (std::size_t k = 0; k < n; ++k)
    for (const PrescribedRegion& r : scene.prescribed)
      if (inside(&rest_[k * d], d, r.min, r.max)) {
        prescribed_[k] = 1;
        for (int i = 0; i < d; ++i) prescribed_velocity_[k * d + i] = r.velocity[i];
        break;
      }

  // Initial velocity: each body's v + ω × (X − centroid), the centroid weighted by the owned cells' volumes.
  const std::size_t bodies = scene.bodies.size();
  std::vector<double> moments(bodies * 4, 0.0);
  const std::vector<double> volume = geometry::cell_signed_volumes(mesh_, mesh_.vertex_coordinates);
  for (PetscInt c = 0; c < mesh_.owned_cell_count; ++c) {
    const auto body = static_cast<std::size_t>(mesh_.cell_body[static_cast<std::size_t>(c)]);
    const double w = volume[static_cast<std::size_t>(c)];
    moments[body * 4 + 3] += w;
    for (int a = 0; a <= d; ++a) {
      const PetscInt v = mesh_.cell_vertices[static_cast<std::size_t>(c * (d + 1) + a)];
      for (int i = 0; i < d; ++i)
        moments[body * 4 + i] += w / (d + 1) * mesh_.vertex_coordinates[static_cast<std::size_t>(v * d + i)];
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, moments.data(), static_cast<int>(moments.size()), MPI_DOUBLE, MPI_SUM, comm_);
  initial_velocity_.assign(n * d, 0.0);
  for (std::size_t k = 0; k < n; ++k) {
    const auto body = static_cast<std::size_t>(node_body[k]);
    const ElasticBody& b = scene.bodies[body];
    Eigen::Vector3d r = Eigen::Vector3d::Zero();
    for (int i = 0; i < d; ++i) r[i] = rest_[k * d + i] - moments[body * 4 + i] / moments[body * 4 + 3];
    const Eigen::Vector3d v = b.velocity + b.angular_velocity.cross(r);  // 2D: ω along z, r in the plane
    for (int i = 0; i < d; ++i) initial_velocity_[k * d + i] = prescribed_[k] ? prescribed_velocity_[k * d + i] : v[i];
  }

  double lo[3], hi[3];
  for (int i = 0; i < 3; ++i) {
    lo[i] = std::numeric_limits<double>::infinity();
    hi[i] = -lo[i];
  }
  for (PetscInt v = 0; v < mesh_.owned_vertex_count; ++v)
    for (int i = 0; i < d; ++i) {
      lo[i] = std::min(lo[i], mesh_.vertex_coordinates[static_cast<std::size_t>(v * d + i)]);
      hi[i] = std::max(hi[i], mesh_.vertex_coordinates[static_cast<std::size_t>(v * d + i)]);
    }
  MPI_Allreduce(MPI_IN_PLACE, lo, 3, MPI_DOUBLE, MPI_MIN, comm_);
  MPI_Allreduce(MPI_IN_PLACE, hi, 3, MPI_DOUBLE, MPI_MAX, comm_);
  double sq = 0;
  for (int i = 0; i < d; ++i) sq += (hi[i] - lo[i]) * (hi[i] - lo[i]);
  diagonal_ = std::sqrt(sq);
}

void ElasticSystem::set_loads(const IpcScene& scene) {
  load_.assign(static_cast<std::size_t>(space_.owned_dof_count), 0.0);
  if (mesh_.dim == 2) {
    if (order_ == 1) add_loads<2, 1>(scene);
    else add_loads<2, 2>(scene);
  } else {
    if (order_ == 1) add_loads<3, 1>(scene);
    else add_loads<3, 2>(scene);
  }
}

void ElasticSystem::cell_nodes(PetscInt c, PetscInt* nodes) const {
  const int d = mesh_.dim;
  for (int a = 0; a <= d; ++a) nodes[a] = mesh_.cell_vertices[static_cast<std::size_t>(c * (d + 1) + a)];
  if (order_ == 2) {
    const int ne = mesh_.edges_per_cell();
    for (int e = 0; e < ne; ++e)
      nodes[d + 1 + e] = mesh_.local_vertex_count() + mesh_.cell_edges[static_cast<std::size_t>(c * ne + e)];
  }
}

::Vec ElasticSystem::create_vector() const {
  ::Vec v = nullptr;
  petsc_check(DMCreateGlobalVector(space_.dm.get(), &v), "DMCreateGlobalVector");
  petsc_check(VecSetBlockSize(v, mesh_.dim), "VecSetBlockSize");
  return v;
}

::Mat ElasticSystem::create_matrix() const {
  ::Mat m = nullptr;
  petsc_check(DMSetMatType(space_.dm.get(), MATAIJ), "DMSetMatType");
  petsc_check(DMCreateMatrix(space_.dm.get(), &m), "DMCreateMatrix");
  petsc_check(MatSetOption(m, MAT_NO_OFF_PROC_ENTRIES, PETSC_TRUE), "MatSetOption");
  petsc_check(MatSetOption(m, MAT_SYMMETRIC, PETSC_TRUE), "MatSetOption");
  petsc_check(MatSetOption(m, MAT_SYMMETRY_ETERNAL, PETSC_TRUE), "MatSetOption");
  return m;
}

void ElasticSystem::to_local(::Vec global, std::vector<double>& local) const {
  const int d = mesh_.dim;
  ::Vec lv = nullptr;
  petsc_check(DMGetLocalVector(space_.dm.get(), &lv), "DMGetLocalVector");
  petsc_check(DMGlobalToLocal(space_.dm.get(), global, INSERT_VALUES, lv), "DMGlobalToLocal");
  const PetscScalar* a = nullptr;
  petsc_check(VecGetArrayRead(lv, &a), "VecGetArrayRead");
  local.resize(node_dof_.size() * d);
  for (std::size_t k = 0; k < node_dof_.size(); ++k)
    for (int i = 0; i < d; ++i) local[k * d + i] = a[node_local_offset_[k] + i];
  petsc_check(VecRestoreArrayRead(lv, &a), "VecRestoreArrayRead");
  petsc_check(DMRestoreLocalVector(space_.dm.get(), &lv), "DMRestoreLocalVector");
}

void ElasticSystem::to_global(const std::vector<double>& local, ::Vec global) const {
  const int d = mesh_.dim;
  PetscScalar* a = nullptr;
  petsc_check(VecGetArray(global, &a), "VecGetArray");
  for (std::size_t k = 0; k < node_dof_.size(); ++k)
    if (owned_[k])
      for (int i = 0; i < d; ++i) a[node_dof_[k] - first_row_ + i] = local[k * d + i];
  petsc_check(VecRestoreArray(global, &a), "VecRestoreArray");
}

}  // namespace percussion::ipc
