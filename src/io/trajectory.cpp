#include "percussion/io/trajectory.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "percussion/core/error.hpp"
#include "percussion/io/h5file.hpp"

namespace percussion::io {
namespace {

namespace fs = std::filesystem;

constexpr const char* kH5Name = "trajectory.h5";
constexpr const char* kObservableNames[] = {"step",     "time",     "kinetic",     "potential",
                                            "total",    "momentum", "angular_momentum",
                                            "bonds_broken", "contacts", "wall_seconds", "newton_iterations",
                                            "krylov_iterations"};

constexpr const char* kXdmfHead =
    "<?xml version=\"1.0\" ?>\n"
    "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
    "<Xdmf Version=\"2.0\">\n"
    "  <Domain>\n"
    "    <Grid Name=\"trajectory\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
constexpr const char* kXdmfTail =
    "    </Grid>\n"
    "  </Domain>\n"
    "</Xdmf>\n";

bool is_frame_name(const std::string& name) {
  return !name.empty() && name.size() <= 9 &&
         std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

void append_double(hid_t group, const char* name, double value) {
  append_row(group, name, std::span<const double>(&value, 1));
}

void append_int(hid_t group, const char* name, std::int64_t value) {
  append_row(group, name, std::span<const std::int64_t>(&value, 1));
}

// One <DataItem> that points into trajectory.h5 (path relative to the .xdmf, as ParaView expects).
void data_item(std::ostream& out, const std::string& indent, const std::string& dims, bool integer,
               const std::string& dataset) {
  out << indent << "<DataItem Dimensions=\"" << dims << "\" NumberType=\"" << (integer ? "Int" : "Float")
      << "\" Precision=\"8\" Format=\"HDF\">" << kH5Name << ":" << dataset << "</DataItem>\n";
}

void attribute(std::ostream& out, const std::string& frame, std::int64_t n, const char* name,
               const char* type, int components) {
  const std::string dims = components == 1 ? std::to_string(n) : std::to_string(n) + " " + std::to_string(components);
  out << "          <Attribute Name=\"" << name << "\" AttributeType=\"" << type << "\" Center=\"Node\">\n";
  data_item(out, "            ", dims, std::string(name) == "id", frame + "/" + name);
  out << "          </Attribute>\n";
}

}  // namespace

std::string TrajectoryWriter::frame_name(int index) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%06d", index);
  return buffer;
}

TrajectoryWriter::TrajectoryWriter(MPI_Comm comm, const std::string& dir, std::int64_t n_particles,
                                   long resume_step)
    : comm_(comm),
      h5_path_((fs::path(dir) / kH5Name).string()),
      xdmf_path_((fs::path(dir) / "trajectory.xdmf").string()),
      n_particles_(n_particles) {
  MPI_Comm_rank(comm_, &rank_);
  if (n_particles < 0) throw std::invalid_argument("TrajectoryWriter: negative particle count");
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
  file_ = H5File::create(comm_, h5_path_);
  write_attribute(file_.id(), "kind", "trajectory");
  write_attribute(file_.id(), "format_version", std::int64_t{1});
  write_attribute(file_.id(), "particles", n_particles_);
  H5Group::create(file_.id(), "frames");
  H5Group::create(file_.id(), "observables");
  file_.flush();
  frames_.clear();
}

void TrajectoryWriter::resume(long resume_step) {
  file_ = H5File::open_rw(comm_, h5_path_);
  if (!has_attribute(file_.id(), "kind") || read_attribute_string(file_.id(), "kind") != "trajectory")
    throw InputError(h5_path_ + ": not a Percussion trajectory (no kind=\"trajectory\" attribute)");
  const std::int64_t stored = read_attribute_int(file_.id(), "particles");
  if (stored != n_particles_)
    throw InputError(h5_path_ + ": holds " + std::to_string(stored) + " particles, the run has " +
                     std::to_string(n_particles_));

  // Frames and observable rows are written together; keep their common prefix with step <=
  // resume_step (a frame interrupted before its observables row is dropped too).
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
    H5Group group = H5Group::open(file_.id(), "frames/" + frame_names[i]);
    const long step = static_cast<long>(read_attribute_int(group.id(), "step"));
    if (step > resume_step || step != rows[i] || !exists(group.id(), "bonds")) break;
    frames_.push_back({step, read_attribute_double(group.id(), "time"), shape(group.id(), "bonds").at(0)});
  }
  for (const std::string& name : names)
    if (is_frame_name(name) && std::stol(name) >= static_cast<long>(frames_.size()))
      remove(file_.id(), "frames/" + name);
  {
    H5Group observables = H5Group::open(file_.id(), "observables");
    for (const char* name : kObservableNames)
      if (exists(observables.id(), name))
        resize_rows(observables.id(), name, static_cast<std::int64_t>(frames_.size()));
  }
  file_.flush();
}

void TrajectoryWriter::write_frame(const FrameObservables& observables, const FrameFields& fields) {
  // Attributes and observable rows are metadata every rank must write identically: use rank 0's.
  static_assert(std::is_trivially_copyable_v<FrameObservables>);
  FrameObservables obs = observables;
  MPI_Bcast(&obs, sizeof(obs), MPI_BYTE, 0, comm_);

  const int index = frames();
  const std::string name = "frames/" + frame_name(index);
  std::int64_t bonds = 0;
  {
    remove(file_.id(), name);  // left over from a frame that was interrupted
    H5Group group = H5Group::create(file_.id(), name);
    write_attribute(group.id(), "step", static_cast<std::int64_t>(obs.step));
    write_attribute(group.id(), "time", obs.time);
    const hid_t g = group.id();
    write_rows(g, "position", fields.id, n_particles_, fields.position, 3);
    write_rows(g, "quaternion", fields.id, n_particles_, fields.quaternion, 4);
    write_rows(g, "velocity", fields.id, n_particles_, fields.velocity, 3);
    write_rows(g, "angular_velocity", fields.id, n_particles_, fields.angular_velocity, 3);
    write_rows(g, "radius", fields.id, n_particles_, fields.radius, 1);
    write_rows(g, "id", fields.id, n_particles_, fields.id, 1);
    write_blocks(g, "bonds", fields.bonds, 2);
    bonds = shape(g, "bonds").at(0);
  }
  {
    H5Group group = H5Group::open(file_.id(), "observables");
    const hid_t g = group.id();
    append_int(g, "step", obs.step);
    append_double(g, "time", obs.time);
    append_double(g, "kinetic", obs.kinetic);
    append_double(g, "potential", obs.potential);
    append_double(g, "total", obs.total);
    append_row(g, "momentum", std::span<const double>(obs.momentum));
    append_row(g, "angular_momentum", std::span<const double>(obs.angular_momentum));
    append_int(g, "bonds_broken", obs.bonds_broken);
    append_int(g, "contacts", obs.contacts);
    append_effort(g);
  }
  file_.flush();
  frames_.push_back({obs.step, obs.time, bonds});
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
  if (in_step("wall_seconds")) append_double(observables, "wall_seconds", effort.wall_seconds);
  if (effort.newton_iterations < 0) return;
  if (in_step("newton_iterations")) append_int(observables, "newton_iterations", effort.newton_iterations);
  if (in_step("krylov_iterations")) append_int(observables, "krylov_iterations", effort.krylov_iterations);
}

std::string TrajectoryWriter::frame_xdmf(std::size_t index) const {
  std::ostringstream out;
  out.precision(std::numeric_limits<double>::max_digits10);
  const std::int64_t n = n_particles_;
  const FrameRecord& f = frames_[index];
  const std::string frame = "/frames/" + frame_name(static_cast<int>(index));
  out << "      <Grid Name=\"frame_" << frame_name(static_cast<int>(index))
      << "\" GridType=\"Collection\" CollectionType=\"Spatial\">\n"
      << "        <Time Value=\"" << f.time << "\"/>\n"
      // Particles: one vertex cell per particle; connectivity is the id column (row = global id).
      << "        <Grid Name=\"particles\" GridType=\"Uniform\">\n"
      << "          <Topology TopologyType=\"Polyvertex\" NumberOfElements=\"" << n
      << "\" NodesPerElement=\"1\">\n";
  data_item(out, "            ", std::to_string(n), true, frame + "/id");
  out << "          </Topology>\n"
      << "          <Geometry GeometryType=\"XYZ\">\n";
  data_item(out, "            ", std::to_string(n) + " 3", false, frame + "/position");
  out << "          </Geometry>\n";
  attribute(out, frame, n, "velocity", "Vector", 3);
  attribute(out, frame, n, "angular_velocity", "Vector", 3);
  attribute(out, frame, n, "radius", "Scalar", 1);
  attribute(out, frame, n, "id", "Scalar", 1);
  attribute(out, frame, n, "quaternion", "Matrix", 4);
  out << "        </Grid>\n";
  // Bonds: line cells between particle rows; omitted when none are intact (empty DataItems upset
  // the reader).
  if (f.bonds > 0) {
    out << "        <Grid Name=\"bonds\" GridType=\"Uniform\">\n"
        << "          <Topology TopologyType=\"Polyline\" NumberOfElements=\"" << f.bonds
        << "\" NodesPerElement=\"2\">\n";
    data_item(out, "            ", std::to_string(f.bonds) + " 2", true, frame + "/bonds");
    out << "          </Topology>\n"
        << "          <Geometry GeometryType=\"XYZ\">\n";
    data_item(out, "            ", std::to_string(n) + " 3", false, frame + "/position");
    out << "          </Geometry>\n"
        << "        </Grid>\n";
  }
  out << "      </Grid>\n";
  return out.str();
}

void TrajectoryWriter::write_xdmf() {
  std::string text = kXdmfHead;
  for (std::size_t i = 0; i < frames_.size(); ++i) text += frame_xdmf(i);
  xdmf_tail_ = static_cast<std::streamoff>(text.size());
  text += kXdmfTail;

  // Write-then-rename: a viewer polling the file never sees half of it.
  const std::string temp = xdmf_path_ + ".tmp";
  {
    std::ofstream file(temp, std::ios::trunc | std::ios::binary);
    file << text;
    file.close();
    if (!file) throw std::runtime_error(temp + ": cannot write");
  }
  fs::rename(temp, xdmf_path_);
}

void TrajectoryWriter::append_xdmf() {
  // Each frame writes only its own lines, over the closing tags, and the tags after them: rewriting the whole
  // file costs every frame time in proportion to the frames before it, and on ext4 renaming over a file flushes
  // it. A viewer reading in the instant of the write may see the file cut short; a
  // restart writes it whole again.
  if (xdmf_tail_ < 0 || !fs::exists(xdmf_path_)) return write_xdmf();
  const std::string text = frame_xdmf(frames_.size() - 1) + kXdmfTail;
  std::fstream file(xdmf_path_, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(xdmf_tail_);
  file << text;
  file.close();
  if (!file) throw std::runtime_error(xdmf_path_ + ": cannot write");
  xdmf_tail_ += static_cast<std::streamoff>(text.size()) - static_cast<std::streamoff>(std::strlen(kXdmfTail));
}

}  // namespace percussion::io
