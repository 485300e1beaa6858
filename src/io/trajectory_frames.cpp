// The datasets of one frame for each kind a trajectory holds (particles, a mesh, rigid bodies), written by every rank
// for the items it owns, and the body shapes stored once per file.
#include <algorithm>
#include <stdexcept>

#include "percussion/io/h5file.hpp"
#include "percussion/io/trajectory.hpp"

namespace percussion::io {
namespace {

// Checks that must hold on every rank before a collective write: a rank that finds a problem makes all ranks throw.
void agree_valid(MPI_Comm comm, bool locally_bad, const std::string& what) {
  int bad = locally_bad ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm);
  if (bad != 0) throw std::invalid_argument(what);
}

}  // namespace

std::int64_t TrajectoryWriter::write_particles(hid_t g, const FrameFields& fields) {
  const std::int64_t n = *layout_.particles;
  write_rows(g, "position", fields.id, n, fields.position, 3);
  write_rows(g, "quaternion", fields.id, n, fields.quaternion, 4);
  write_rows(g, "velocity", fields.id, n, fields.velocity, 3);
  write_rows(g, "angular_velocity", fields.id, n, fields.angular_velocity, 3);
  write_rows(g, "radius", fields.id, n, fields.radius, 1);
  write_rows(g, "id", fields.id, n, fields.id, 1);
  write_blocks(g, "bonds", fields.bonds, 2);
  return shape(g, "bonds").at(0);
}

bool TrajectoryWriter::check_mesh(const MeshFields& fields) const {
  const MeshLayout& m = *layout_.mesh;
  const auto k = static_cast<std::size_t>(m.nodes_per_element);
  bool bad = fields.connectivity.size() != fields.element_id.size() * k;
  bad = bad || (m.displacement && fields.displacement.size() != fields.vertex_id.size() * 3) ||
        (m.stress && fields.stress.size() != fields.element_id.size() * 9);
  for (std::int64_t v : fields.connectivity) bad = bad || v < 0 || v >= m.vertices;
  // A frame whose elements (ids and vertices, on every rank) are the previous frame's shares its dataset.
  const bool same = !last_connectivity_path_.empty() &&
                    std::equal(fields.element_id.begin(), fields.element_id.end(), last_element_id_.begin(),
                               last_element_id_.end()) &&
                    std::equal(fields.connectivity.begin(), fields.connectivity.end(), last_connectivity_.begin(),
                               last_connectivity_.end());
  int flags[2] = {bad ? 1 : 0, same ? 0 : 1};
  MPI_Allreduce(MPI_IN_PLACE, flags, 2, MPI_INT, MPI_MAX, comm_);
  if (flags[0] != 0)
    throw std::invalid_argument(h5_path_ + ": mesh frame: an element's vertex is out of range, or the connectivity "
                                "is not nodes_per_element vertices per element, or a displacement or stress field has the wrong size");
  return flags[1] == 0 && exists(file_.id(), last_connectivity_path_);
}

void TrajectoryWriter::write_mesh(hid_t frame, const std::string& frame_path, const MeshFields& fields,
                                  bool same_elements) {
  const MeshLayout& m = *layout_.mesh;
  H5Group group = H5Group::create(frame, "mesh");
  const hid_t g = group.id();
  write_rows(g, "position", fields.vertex_id, m.vertices, fields.position, 3);
  write_rows(g, "velocity", fields.vertex_id, m.vertices, fields.velocity, 3);
  write_rows(g, "id", fields.vertex_id, m.vertices, fields.vertex_id, 1);
  if (m.displacement) write_rows(g, "displacement", fields.vertex_id, m.vertices, fields.displacement, 3);
  if (m.stress) write_rows(g, "stress", fields.element_id, m.elements, fields.stress, 9);
  if (same_elements) {
    link(g, last_connectivity_path_, "connectivity");
  } else {
    write_rows(g, "connectivity", fields.element_id, m.elements, fields.connectivity, m.nodes_per_element);
    last_connectivity_path_ = frame_path + "/mesh/connectivity";
    last_element_id_.assign(fields.element_id.begin(), fields.element_id.end());
    last_connectivity_.assign(fields.connectivity.begin(), fields.connectivity.end());
  }
}

void TrajectoryWriter::check_bodies(const BodyFields& fields) const {
  const auto shapes = static_cast<std::int64_t>(shape_radius_.size());
  bool bad = fields.shape.size() != fields.id.size();
  for (std::int64_t s : fields.shape) bad = bad || s < 0 || s >= shapes;
  agree_valid(comm_, bad, h5_path_ + ": body frame: a body's shape is not one of the layout's " +
                              std::to_string(shapes) + " shapes, or there is not one shape per body");
}

void TrajectoryWriter::write_bodies(hid_t frame, const BodyFields& fields) {
  const std::int64_t n = layout_.bodies->bodies;
  std::vector<double> radius;
  for (std::int64_t s : fields.shape) radius.push_back(shape_radius_[static_cast<std::size_t>(s)]);
  H5Group group = H5Group::create(frame, "bodies");
  const hid_t g = group.id();
  write_rows(g, "position", fields.id, n, fields.position, 3);
  write_rows(g, "quaternion", fields.id, n, fields.quaternion, 4);
  write_rows(g, "velocity", fields.id, n, fields.velocity, 3);
  write_rows(g, "angular_velocity", fields.id, n, fields.angular_velocity, 3);
  write_rows(g, "id", fields.id, n, fields.id, 1);
  write_rows(g, "shape", fields.id, n, fields.shape, 1);
  write_rows(g, "radius", fields.id, n, radius, 1);  // last: its presence marks the bodies complete
}

void TrajectoryWriter::write_shapes() {
  const hid_t root = file_.id();
  write_attribute(root, "bodies", layout_.bodies->bodies);
  write_attribute(root, "shapes", static_cast<std::int64_t>(layout_.bodies->shapes.size()));
  H5Group shapes = H5Group::create(root, "shapes");
  for (std::size_t s = 0; s < layout_.bodies->shapes.size(); ++s) {
    const BodyShape& shape = layout_.bodies->shapes[s];
    H5Group group = H5Group::create(shapes.id(), frame_name(static_cast<int>(s)));
    write_attribute(group.id(), "radius", shape_radius_[s]);
    if (shape.vertices.empty()) continue;
    // Every rank holds the shapes; rank 0 writes them.
    const bool writes = rank_ == 0;
    write_blocks(group.id(), "vertices", writes ? std::span<const double>(shape.vertices) : std::span<const double>(),
                 3);
    write_blocks(group.id(), "triangles",
                 writes ? std::span<const std::int64_t>(shape.triangles) : std::span<const std::int64_t>(), 3);
  }
}

}  // namespace percussion::io
