// The trajectory writer's file: creating or continuing trajectory.h5, checking a continued file's layout, and the
// order in which one frame's groups, rows and XDMF lines are written.
#include "percussion/io/trajectory.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <type_traits>

#include "percussion/core/error.hpp"
#include "percussion/core/log.hpp"
#include "percussion/io/h5file.hpp"

namespace percussion::io {
namespace {

namespace fs = std::filesystem;

void check_count(const char* what, std::int64_t n) {
  if (n < 0) throw std::invalid_argument(std::string("TrajectoryWriter: negative ") + what + " count");
}

}  // namespace

bool is_frame_name(const std::string& name) {
  return !name.empty() && name.size() <= 9 &&
         std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string TrajectoryWriter::frame_name(int index) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%06d", index);
  return buffer;
}

TrajectoryWriter::TrajectoryWriter(MPI_Comm comm, const std::string& dir, std::int64_t n_particles,
                                   long resume_step)
    : TrajectoryWriter(comm, dir, TrajectoryLayout{n_particles, std::nullopt, std::nullopt}, resume_step) {}

TrajectoryWriter::TrajectoryWriter(MPI_Comm comm, const std::string& dir, TrajectoryLayout layout, long resume_step)
    : comm_(comm),
      h5_path_((fs::path(dir) / "trajectory.h5").string()),
      xdmf_path_((fs::path(dir) / "trajectory.xdmf").string()),
      layout_(std::move(layout)) {
  MPI_Comm_rank(comm_, &rank_);
  if (!layout_.particles && !layout_.mesh && !layout_.bodies)
    throw std::invalid_argument("TrajectoryWriter: the layout names no particles, mesh or bodies");
  if (layout_.particles) check_count("particle", *layout_.particles);
  if (layout_.mesh) {
    check_count("vertex", layout_.mesh->vertices);
    check_count("element", layout_.mesh->elements);
    if (layout_.mesh->nodes_per_element != 3 && layout_.mesh->nodes_per_element != 4)
      throw std::invalid_argument("TrajectoryWriter: mesh elements must be triangles (3 nodes) or tetrahedra (4)");
  }
  if (layout_.bodies) {
    check_count("body", layout_.bodies->bodies);
    for (const BodyShape& s : layout_.bodies->shapes) {
      if (s.vertices.size() % 3 != 0 || s.triangles.size() % 3 != 0)
        throw std::invalid_argument("TrajectoryWriter: a body shape's vertices and triangles come in threes");
      const auto n = static_cast<std::int64_t>(s.vertices.size() / 3);
      for (std::int64_t v : s.triangles)
        if (v < 0 || v >= n) throw std::invalid_argument("TrajectoryWriter: a body shape's triangle names no vertex");
      double r = s.radius;
      if (!s.vertices.empty()) {
        r = 0.0;
        for (std::size_t i = 0; i < s.vertices.size(); i += 3)
          r = std::max(r, std::hypot(s.vertices[i], s.vertices[i + 1], s.vertices[i + 2]));
      }
      shape_radius_.push_back(r);
    }
  }
  int present = 0;
  on_rank0(comm_, [&] {
    fs::create_directories(dir);
    present = fs::exists(h5_path_) ? 1 : 0;
  });
  MPI_Bcast(&present, 1, MPI_INT, 0, comm_);
  if (resume_step < 0 || present == 0) {
    start_new();
  } else {
    resume(resume_step);
  }
  on_rank0(comm_, [&] { write_xdmf(); });
}

void TrajectoryWriter::start_new() {
  // No checksums here, unlike checkpoints: a run never continues from a frame, and every frame would go through
  // HDF5's filtered collective write, which gathers each chunk on one rank.
  file_ = H5File::create(comm_, h5_path_, Checksums::off);
  const hid_t root = file_.id();
  write_attribute(root, "kind", "trajectory");
  write_attribute(root, "format_version", std::int64_t{1});
  if (layout_.particles) write_attribute(root, "particles", *layout_.particles);
  if (layout_.mesh) {
    write_attribute(root, "mesh_vertices", layout_.mesh->vertices);
    write_attribute(root, "mesh_elements", layout_.mesh->elements);
    write_attribute(root, "mesh_nodes_per_element", layout_.mesh->nodes_per_element);
  }
  if (layout_.bodies) write_shapes();
  H5Group::create(root, "frames");
  H5Group::create(root, "observables");
  file_.flush();
  frames_.clear();
  columns_.clear();
  columns_fixed_ = false;
}

void TrajectoryWriter::check_layout() const {
  const hid_t root = file_.id();
  auto expect = [&](const char* name, bool wanted, std::int64_t value, const char* what) {
    if (!wanted) {
      if (has_attribute(root, name))
        throw InputError(h5_path_ + ": holds " + what + " (@" + name + "), the run writes none");
      return;
    }
    if (!has_attribute(root, name)) throw InputError(h5_path_ + ": holds no " + what + ", the run writes them");
    const std::int64_t stored = read_attribute_int(root, name);
    if (stored != value)
      throw InputError(h5_path_ + ": holds " + std::to_string(stored) + " " + what + " (@" + name + "), the run has " +
                       std::to_string(value));
  };
  expect("particles", layout_.particles.has_value(), layout_.particles.value_or(0), "particles");
  const MeshLayout mesh = layout_.mesh.value_or(MeshLayout{});
  expect("mesh_vertices", layout_.mesh.has_value(), mesh.vertices, "mesh vertices");
  expect("mesh_elements", layout_.mesh.has_value(), mesh.elements, "mesh elements");
  expect("mesh_nodes_per_element", layout_.mesh.has_value(), mesh.nodes_per_element, "nodes per mesh element");
  expect("bodies", layout_.bodies.has_value(), layout_.bodies ? layout_.bodies->bodies : 0, "bodies");
  expect("shapes", layout_.bodies.has_value(),
         layout_.bodies ? static_cast<std::int64_t>(layout_.bodies->shapes.size()) : 0, "body shapes");
}

// A frame's datasets are written in this order; the last one of each kind present means the kind is complete.
bool TrajectoryWriter::frame_complete(hid_t frame) const {
  return (!layout_.particles || exists(frame, "bonds")) && (!layout_.mesh || exists(frame, "mesh/connectivity")) &&
         (!layout_.bodies || exists(frame, "bodies/radius"));
}

void TrajectoryWriter::resume(long resume_step) {
  file_ = H5File::open_rw(comm_, h5_path_);
  if (!has_attribute(file_.id(), "kind") || read_attribute_string(file_.id(), "kind") != "trajectory")
    throw InputError(h5_path_ + ": not a Percussion trajectory (no kind=\"trajectory\" attribute)");
  check_layout();

  // Frames and observable rows are written together; keep their common prefix with step <=
  // resume_step (a frame interrupted before its observables row is dropped too, and so is one that cannot be read).
  std::vector<std::int64_t> rows;
  if (exists(file_.id(), "observables/step")) rows = read_all_int(file_.id(), "observables/step");
  std::vector<std::string> names = members(file_.id(), "frames");
  std::vector<std::string> frame_names;
  for (const std::string& name : names)
    if (is_frame_name(name)) frame_names.push_back(name);
  std::sort(frame_names.begin(), frame_names.end(),
            [](const std::string& a, const std::string& b) { return std::stol(a) < std::stol(b); });

  frames_.clear();
  for (std::size_t i = 0; i < frame_names.size() && i < rows.size(); ++i) {
    if (frame_names[i] != frame_name(static_cast<int>(i))) break;
    try {
      H5Group group = H5Group::open(file_.id(), "frames/" + frame_names[i]);
      const long step = static_cast<long>(read_attribute_int(group.id(), "step"));
      if (step > resume_step || step != rows[i] || !frame_complete(group.id())) break;
      const std::int64_t bonds = layout_.particles ? shape(group.id(), "bonds").at(0) : 0;
      frames_.push_back({step, read_attribute_double(group.id(), "time"), bonds});
    } catch (const std::exception&) {
      break;
    }
  }
  // Cut in place; where HDF5 cannot (a half-written frame it cannot delete), rewrite the kept prefix.
  int failed = 0;
  try {
    for (const std::string& name : names)
      if (is_frame_name(name) && std::stol(name) >= static_cast<long>(frames_.size()))
        remove(file_.id(), "frames/" + name);
    // Every table keeps a row per kept frame; one that was shorter (an effort row out of step) stays shorter.
    H5Group observables = H5Group::open(file_.id(), "observables");
    const auto kept = static_cast<std::int64_t>(frames_.size());
    for (const std::string& name : members(file_.id(), "observables"))
      if (shape(observables.id(), name).at(0) > kept) resize_rows(observables.id(), name, kept);
    file_.flush();
  } catch (const OutputError&) {
    failed = 1;
  }
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm_);
  if (failed) {
    file_ = H5File();  // closes it quietly on every rank
    on_rank0(comm_, [&] {
      rewrite_trajectory_prefix(h5_path_, frames_.size());
      log::warn(h5_path_ + ": its tail (a frame written half when the run stopped) could not be removed in place; "
                "rewrote the file with its first " + std::to_string(frames_.size()) + " frames");
    });
    file_ = H5File::open_rw(comm_, h5_path_);
  }
  H5Group observables = H5Group::open(file_.id(), "observables");
  load_columns(observables.id());
}

void TrajectoryWriter::write_frame(long step, double time, std::span<const Observable> observables,
                                   const FrameContent& content) {
  if (static_cast<bool>(content.particles) != layout_.particles.has_value() ||
      static_cast<bool>(content.mesh) != layout_.mesh.has_value() ||
      static_cast<bool>(content.bodies) != layout_.bodies.has_value())
    throw std::invalid_argument(h5_path_ + ": a frame must hold exactly the kinds of the trajectory's layout");
  // Attributes and observable rows are metadata every rank must write identically: use rank 0's.
  struct Head {
    std::int64_t step;
    double time;
  } head{step, time};
  MPI_Bcast(&head, sizeof(head), MPI_BYTE, 0, comm_);
  step = static_cast<long>(head.step);
  time = head.time;
  const std::vector<Observable> values = agreed_observables(step, observables);  // throws before anything is written

  // Each kind's items are checked on every rank before the frame's group exists.
  const bool same_elements = content.mesh && check_mesh(*content.mesh);
  if (content.bodies) check_bodies(*content.bodies);

  const int index = frames();
  const std::string path = "frames/" + frame_name(index);
  std::int64_t bonds = 0;
  {
    remove(file_.id(), path);  // left over from a frame that was interrupted
    H5Group group = H5Group::create(file_.id(), path);
    write_attribute(group.id(), "step", static_cast<std::int64_t>(step));
    write_attribute(group.id(), "time", time);
    if (content.particles) bonds = write_particles(group.id(), *content.particles);
    if (content.mesh) write_mesh(group.id(), "/" + path, *content.mesh, same_elements);
    if (content.bodies) write_bodies(group.id(), *content.bodies);
  }
  {
    H5Group group = H5Group::open(file_.id(), "observables");
    const hid_t g = group.id();
    const std::int64_t s = step;
    append_row(g, "step", std::span<const std::int64_t>(&s, 1));
    append_row(g, "time", std::span<const double>(&time, 1));
    append_observables(g, values);
    append_effort(g);
  }
  file_.flush();
  frames_.push_back({step, time, bonds});
  on_rank0(comm_, [&] { append_xdmf(); });
}

void TrajectoryWriter::append_effort(hid_t observables) {
  if (!pending_effort_) return;
  pending_effort_ = false;
  static_assert(std::is_trivially_copyable_v<FrameEffort>);
  FrameEffort effort = effort_;
  MPI_Bcast(&effort, sizeof(effort), MPI_BYTE, 0, comm_);
  // A dataset is extended only while it has a row for every earlier frame: one that a trajectory started without
  // (an older file, or a frame written without effort) stays as it is.
  const std::int64_t earlier = static_cast<std::int64_t>(frames_.size());
  auto in_step = [&](const char* name) {
    return exists(observables, name) ? shape(observables, name).at(0) == earlier : earlier == 0;
  };
  if (in_step("wall_seconds"))
    append_row(observables, "wall_seconds", std::span<const double>(&effort.wall_seconds, 1));
  if (effort.newton_iterations < 0) return;
  if (in_step("newton_iterations"))
    append_row(observables, "newton_iterations", std::span<const std::int64_t>(&effort.newton_iterations, 1));
  if (in_step("krylov_iterations"))
    append_row(observables, "krylov_iterations", std::span<const std::int64_t>(&effort.krylov_iterations, 1));
}

}  // namespace percussion::io
