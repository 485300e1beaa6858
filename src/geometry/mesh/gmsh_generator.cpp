// Gmsh-generated boxes, disks and balls (gmsh_generator.hpp).
#include "percussion/geometry/mesh/gmsh_generator.hpp"

#include <gmsh.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "percussion/core/error.hpp"

namespace percussion::geometry {
namespace {

// Gmsh keeps one process-wide model: each generation starts and ends its own session.
struct GmshSession {
  GmshSession() {
    gmsh::initialize(0, nullptr, false);
    gmsh::option::setNumber("General.Terminal", 0);
    gmsh::option::setNumber("General.NumThreads", 1);
    gmsh::model::add("percussion");
  }
  ~GmshSession() { gmsh::finalize(); }
  GmshSession(const GmshSession&) = delete;
  GmshSession& operator=(const GmshSession&) = delete;
};

void check_size(double h, double extent, const char* what) {
  if (!(h > 0) || !std::isfinite(h)) throw InputError(std::string(what) + ": element_size must be > 0");
  if (!(extent > 0) || !std::isfinite(extent)) throw InputError(std::string(what) + ": the size must be > 0");
}

// Builds the geometry in the current model, meshes it and returns its dimension.
int mesh_model(const GeneratedShape& shape) {
  int dim = 0;
  double h = 0;
  if (const auto* box = std::get_if<BoxShape>(&shape)) {
    if (box->dim != 2 && box->dim != 3) throw InputError("box: dim must be 2 or 3");
    dim = box->dim;
    h = box->element_size;
    for (int d = 0; d < dim; ++d) check_size(h, box->upper[d] - box->lower[d], "box");
    if (dim == 2) {
      gmsh::model::occ::addRectangle(box->lower[0], box->lower[1], 0, box->upper[0] - box->lower[0],
                                     box->upper[1] - box->lower[1]);
    } else {
      gmsh::model::occ::addBox(box->lower[0], box->lower[1], box->lower[2], box->upper[0] - box->lower[0],
                               box->upper[1] - box->lower[1], box->upper[2] - box->lower[2]);
    }
  } else if (const auto* disk = std::get_if<DiskShape>(&shape)) {
    dim = 2;
    h = disk->element_size;
    check_size(h, disk->radius, "disk");
    gmsh::model::occ::addDisk(0, 0, 0, disk->radius, disk->radius);
  } else {
    const auto& ball = std::get<BallShape>(shape);
    dim = 3;
    h = ball.element_size;
    check_size(h, ball.radius, "ball");
    gmsh::model::occ::addSphere(0, 0, 0, ball.radius);
  }
  gmsh::model::occ::synchronize();
  gmsh::option::setNumber("Mesh.MeshSizeMax", h);
  gmsh::option::setNumber("Mesh.MeshSizeMin", 0.0);
  // Frontal-Delaunay in 2D, Delaunay in 3D: HXT is about 4x faster in 3D but not reproducible run to run.
  gmsh::option::setNumber("Mesh.Algorithm", 6);
  gmsh::option::setNumber("Mesh.Algorithm3D", 1);
  gmsh::model::mesh::generate(dim);
  return dim;
}

}  // namespace

SerialMesh generate_gmsh_mesh(const GeneratedShape& shape) {
  GmshSession session;
  SerialMesh mesh;
  mesh.dim = mesh_model(shape);
  const int element_type = mesh.dim == 2 ? 2 : 4;  // Gmsh's 3-node triangle, 4-node tetrahedron
  std::vector<std::size_t> element_tags, element_nodes;
  gmsh::model::mesh::getElementsByType(element_type, element_tags, element_nodes);
  std::vector<std::size_t> node_tags;
  std::vector<double> coords, parametric;
  gmsh::model::mesh::getNodes(node_tags, coords, parametric, -1, -1, false, false);
  // Keep the nodes the cells use, in Gmsh's node order.
  std::unordered_map<std::size_t, PetscInt> used;
  for (std::size_t tag : element_nodes) used.emplace(tag, -1);
  PetscInt next = 0;
  for (std::size_t i = 0; i < node_tags.size(); ++i) {
    auto it = used.find(node_tags[i]);
    if (it == used.end() || it->second >= 0) continue;
    it->second = next++;
    for (int d = 0; d < mesh.dim; ++d) mesh.coordinates.push_back(coords[3 * i + static_cast<std::size_t>(d)]);
  }
  mesh.cells.reserve(element_nodes.size());
  for (std::size_t tag : element_nodes) mesh.cells.push_back(used.at(tag));
  if (mesh.cells.empty()) throw std::runtime_error("gmsh generated no cells");
  return mesh;
}

void write_gmsh_file(const GeneratedShape& shape, const std::string& path) {
  GmshSession session;
  const int dim = mesh_model(shape);
  std::vector<std::pair<int, int>> entities;
  gmsh::model::getEntities(entities, dim);
  std::vector<int> tags;
  for (const auto& [d, tag] : entities) tags.push_back(tag);
  gmsh::model::addPhysicalGroup(dim, tags, 1);  // only the cells of full dimension are saved
  gmsh::option::setNumber("Mesh.MshFileVersion", 4.1);
  gmsh::write(path);
}

}  // namespace percussion::geometry
