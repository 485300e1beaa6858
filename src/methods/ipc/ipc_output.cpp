// The IPC method's observables, trajectory frames (the deformed mesh with displacement, velocity and stress) and
// checkpoints (the displacement and velocity histories by global vertex and edge id).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "percussion/core/error.hpp"
#include "percussion/io/h5file.hpp"
#include "percussion/methods/ipc/ipc_method.hpp"

namespace percussion::ipc {
namespace {

constexpr const char* kHistory[4] = {"u", "u_prev", "v", "v_prev"};

// Values of the given local items (node index = item + offset), dim per node, as rows of 3 (2D: z = 0) or of dim.
std::vector<double> rows_of(const std::vector<double>& local, std::span<const PetscInt> items, PetscInt offset, int dim,
                            int width) {
  std::vector<double> out(items.size() * static_cast<std::size_t>(width), 0.0);
  for (std::size_t r = 0; r < items.size(); ++r)
    for (int i = 0; i < dim; ++i)
      out[r * width + i] = local[static_cast<std::size_t>((items[r] + offset) * dim + i)];
  return out;
}

}  // namespace

ObservableSet IpcMethod::observables() {
  std::vector<double> u, v;
  system_->to_local(u_[0], u);
  system_->to_local(v_[0], v);
  const ElasticSystem::Totals t = system_->totals(u, v);
  ObservableSet o;
  o.set("kinetic", t.kinetic);
  o.set("elastic", t.elastic);
  o.set("gravitational", t.gravitational);
  o.set("total_energy", t.kinetic + t.elastic + t.gravitational);
  o.set("momentum", {t.momentum[0], t.momentum[1], t.momentum[2]});
  o.set_count("inverted_elements", t.inverted);
  o.set_count("step_newton_iterations", last_newton_);
  o.set_count("step_krylov_iterations", last_krylov_);
  if (minimisation_->contact().enabled()) {
    o.set_count("contacts", last_contacts_);
    o.set("min_distance", last_min_distance_);
    o.set("barrier_stiffness", minimisation_->contact().kappa());
    // An exact check of what the barrier promises, at every frame: crossing surfaces, vertices behind planes.
    const std::int64_t crossing = minimisation_->contact().intersections(u).count();
    intersections_max_ = std::max(intersections_max_, crossing);
    o.set_count("intersections", crossing);
  }
  return o;
}

io::TrajectoryLayout IpcMethod::trajectory_layout() const {
  io::TrajectoryLayout layout;
  io::MeshLayout mesh;
  mesh.vertices = system_->mesh().global_vertex_count;
  mesh.elements = system_->mesh().global_cell_count;
  mesh.nodes_per_element = system_->dim() + 1;
  mesh.displacement = true;
  mesh.stress = true;
  layout.mesh = mesh;
  return layout;
}

void IpcMethod::write_frame(io::TrajectoryWriter& writer) {
  const geometry::PlexMesh& m = system_->mesh();
  const int d = system_->dim();
  std::vector<double> u, v;
  system_->to_local(u_[0], u);
  system_->to_local(v_[0], v);
  std::vector<double> displacement = rows_of(u, vertex_order_, 0, d, 3);
  std::vector<double> velocity = rows_of(v, vertex_order_, 0, d, 3);
  std::vector<double> position = rows_of(system_->rest(), vertex_order_, 0, d, 3);
  for (std::size_t k = 0; k < position.size(); ++k) position[k] += displacement[k];

  // Owned cells by ascending global id, their vertices as global ids; stress in the same order.
  std::vector<PetscInt> cells(static_cast<std::size_t>(m.owned_cell_count));
  std::iota(cells.begin(), cells.end(), PetscInt{0});
  std::sort(cells.begin(), cells.end(), [&](PetscInt a, PetscInt b) {
    return m.cell_global_id[static_cast<std::size_t>(a)] < m.cell_global_id[static_cast<std::size_t>(b)];
  });
  const std::vector<double> stress = system_->cell_stress(u);
  std::vector<std::int64_t> element_id, connectivity;
  std::vector<double> element_stress;
  for (PetscInt c : cells) {
    element_id.push_back(m.cell_global_id[static_cast<std::size_t>(c)]);
    for (int a = 0; a <= d; ++a)
      connectivity.push_back(
          m.vertex_global_id[static_cast<std::size_t>(m.cell_vertices[static_cast<std::size_t>(c * (d + 1) + a)])]);
    element_stress.insert(element_stress.end(), stress.begin() + c * 9, stress.begin() + (c + 1) * 9);
  }
  io::MeshFields f;
  f.vertex_id = vertex_ids_;
  f.position = position;
  f.velocity = velocity;
  f.displacement = displacement;
  f.element_id = element_id;
  f.connectivity = connectivity;
  f.stress = element_stress;
  io::FrameContent content;
  content.mesh = &f;
  const ObservableSet obs = observables();
  writer.write_frame(step_, time_, obs, content);
}

void IpcMethod::write_checkpoint(const std::string& path) {
  const geometry::PlexMesh& m = system_->mesh();
  const int d = system_->dim();
  io::H5File file = io::H5File::create(comm_, path);
  const hid_t root = file.id();
  io::write_attribute(root, "kind", std::string("checkpoint"));
  io::write_attribute(root, "method", std::string("ipc"));
  io::write_attribute(root, "format_version", std::int64_t{1});
  io::write_attribute(root, "step", std::int64_t{step_});
  io::write_attribute(root, "time", time_);
  io::write_attribute(root, "dimension", std::int64_t{d});
  io::write_attribute(root, "order", std::int64_t{system_->order()});
  io::write_attribute(root, "vertices", m.global_vertex_count);
  io::write_attribute(root, "edges", m.global_edge_count);
  io::write_attribute(root, "newton_iterations", newton_iterations_);
  io::write_attribute(root, "krylov_iterations", krylov_iterations_);
  io::write_attribute(root, "linear_solver_fallbacks", std::int64_t{minimisation_->solver_fallbacks()});
  io::write_attribute(root, "inverted_elements", inverted_max_);
  io::write_attribute(root, "barrier_stiffness", minimisation_->contact().kappa());
  io::write_attribute(root, "min_distance", min_distance_);
  io::write_attribute(root, "previous_min_distance", minimisation_->contact().previous_min_distance());
  io::write_attribute(root, "last_min_distance", last_min_distance_);
  io::write_attribute(root, "contacts", last_contacts_);
  io::write_attribute(root, "intersections", intersections_max_);
  io::write_attribute(root, "scene_path", scene_.path);
  io::write_string(root, "scene", scene_.source);
  const ::Vec history[4] = {u_[0], u_[1], v_[0], v_[1]};
  {  // the groups close before the file
    const io::H5Group vertices = io::H5Group::create(root, "vertices");
    std::optional<io::H5Group> edges;
    if (system_->order() == 2) edges.emplace(io::H5Group::create(root, "edges"));
    std::vector<double> local;
    for (int h = 0; h < 4; ++h) {
      system_->to_local(history[h], local);
      io::write_rows(vertices.id(), kHistory[h], vertex_ids_, m.global_vertex_count,
                     rows_of(local, vertex_order_, 0, d, d), d);
      if (edges)
        io::write_rows(edges->id(), kHistory[h], edge_ids_, m.global_edge_count,
                       rows_of(local, edge_order_, m.local_vertex_count(), d, d), d);
    }
  }
  file.close();
}

void IpcMethod::read_checkpoint(const std::string& path) {
  const geometry::PlexMesh& m = system_->mesh();
  const int d = system_->dim();
  io::H5File file = io::H5File::open_read(comm_, path);
  const hid_t root = file.id();
  const auto refuse = [&](const std::string& what) { throw InputError(path + ": " + what); };
  if (!io::has_attribute(root, "method") || io::read_attribute_string(root, "method") != "ipc")
    refuse("not a checkpoint of the ipc method");
  const auto expect = [&](const char* name, std::int64_t value) {
    if (io::read_attribute_int(root, name) != value)
      refuse(std::string("/@") + name + ": " + std::to_string(io::read_attribute_int(root, name)) + ", the scene " +
             scene_.path + " has " + std::to_string(value));
  };
  expect("dimension", d);
  expect("order", system_->order());
  expect("vertices", m.global_vertex_count);
  expect("edges", m.global_edge_count);
  const std::int64_t step = io::read_attribute_int(root, "step");
  if (step < 0) refuse("/@step: negative (" + std::to_string(step) + ")");
  ::Vec history[4] = {u_[0], u_[1], v_[0], v_[1]};
  std::vector<double> local(static_cast<std::size_t>(system_->local_nodes() * d), 0.0);
  int finite = 1;
  for (int h = 0; h < 4; ++h) {
    const auto read = [&](const char* group, std::int64_t count, std::span<const std::int64_t> ids,
                          std::span<const PetscInt> items, PetscInt offset) {
      const std::string name = std::string(group) + "/" + kHistory[h];
      if (!io::exists(root, name) || io::shape(root, name) != std::vector<std::int64_t>{count, d})
        refuse("/" + name + ": missing or not " + std::to_string(count) + " rows of " + std::to_string(d));
      const std::vector<double> rows = io::read_rows_double(root, name, ids, d);
      for (std::size_t r = 0; r < items.size(); ++r)
        for (int i = 0; i < d; ++i) {
          const double x = rows[r * d + i];
          if (!std::isfinite(x)) finite = 0;
          local[static_cast<std::size_t>((items[r] + offset) * d + i)] = x;
        }
    };
    read("vertices", m.global_vertex_count, vertex_ids_, vertex_order_, 0);
    if (system_->order() == 2) read("edges", m.global_edge_count, edge_ids_, edge_order_, m.local_vertex_count());
    system_->to_global(local, history[h]);
  }
  MPI_Allreduce(MPI_IN_PLACE, &finite, 1, MPI_INT, MPI_MIN, comm_);
  if (!finite) refuse("/vertices: a displacement or velocity is not finite");
  step_ = static_cast<long>(step);
  time_ = io::read_attribute_double(root, "time");
  newton_iterations_ = io::read_attribute_int(root, "newton_iterations");
  krylov_iterations_ = io::read_attribute_int(root, "krylov_iterations");
  if (io::has_attribute(root, "linear_solver_fallbacks")) {  // absent from the first checkpoints of this format
    const std::int64_t fallbacks = io::read_attribute_int(root, "linear_solver_fallbacks");
    if (fallbacks < 0) refuse("/@linear_solver_fallbacks: negative");
    minimisation_->set_solver_fallbacks(static_cast<long>(fallbacks));
  }
  inverted_max_ = io::read_attribute_int(root, "inverted_elements");
  // κ as the run computed it at its first step: a restart continues the same potential.
  const double kappa = io::read_attribute_double(root, "barrier_stiffness");
  if (!(kappa >= 0)) refuse("/@barrier_stiffness: negative or not a number");
  if (!scene_.contact.barrier_stiffness) minimisation_->contact().set_kappa(kappa);
  min_distance_ = io::read_attribute_double(root, "min_distance");
  minimisation_->contact().set_previous_min_distance(io::read_attribute_double(root, "previous_min_distance"));
  last_min_distance_ = io::read_attribute_double(root, "last_min_distance");
  last_contacts_ = io::read_attribute_int(root, "contacts");
  intersections_max_ = io::read_attribute_int(root, "intersections");
  file.close();
}

}  // namespace percussion::ipc
