// trajectory.xdmf: an XDMF 2 temporal collection of the frames in trajectory.h5, one spatial collection per frame
// with a grid per kind (particles and their bonds, the mesh, the bodies), which ParaView's Xdmf reader opens.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "percussion/io/trajectory.hpp"

#include "percussion/core/error.hpp"

namespace percussion::io {
namespace {

namespace fs = std::filesystem;

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
constexpr const char* kIndent = "            ";

std::string dims(std::int64_t rows, int components) {
  return components == 1 ? std::to_string(rows) : std::to_string(rows) + " " + std::to_string(components);
}

// One <DataItem> that points into trajectory.h5 (path relative to the .xdmf, as ParaView expects).
void data_item(std::ostream& out, const std::string& indent, const std::string& dims, bool integer,
               const std::string& dataset) {
  out << indent << "<DataItem Dimensions=\"" << dims << "\" NumberType=\"" << (integer ? "Int" : "Float")
      << "\" Precision=\"8\" Format=\"HDF\">trajectory.h5:" << dataset << "</DataItem>\n";
}

void attribute(std::ostream& out, const std::string& group, std::int64_t n, const char* name, const char* type,
               int components, bool integer = false, const char* center = "Node") {
  out << "          <Attribute Name=\"" << name << "\" AttributeType=\"" << type << "\" Center=\"" << center
      << "\">\n";
  data_item(out, kIndent, dims(n, components), integer, group + "/" + name);
  out << "          </Attribute>\n";
}

void geometry(std::ostream& out, std::int64_t n, const std::string& group) {
  out << "          <Geometry GeometryType=\"XYZ\">\n";
  data_item(out, kIndent, dims(n, 3), false, group + "/position");
  out << "          </Geometry>\n";
}

// Points: one vertex cell per row; the connectivity is the id column (row = global id).
void polyvertex(std::ostream& out, const char* name, std::int64_t n, const std::string& group) {
  out << "        <Grid Name=\"" << name << "\" GridType=\"Uniform\">\n"
      << "          <Topology TopologyType=\"Polyvertex\" NumberOfElements=\"" << n << "\" NodesPerElement=\"1\">\n";
  data_item(out, kIndent, std::to_string(n), true, group + "/id");
  out << "          </Topology>\n";
  geometry(out, n, group);
}

}  // namespace

std::string TrajectoryWriter::frame_xdmf(std::size_t index) const {
  std::ostringstream out;
  out.precision(std::numeric_limits<double>::max_digits10);
  const FrameRecord& f = frames_[index];
  const std::string frame = "/frames/" + frame_name(static_cast<int>(index));
  out << "      <Grid Name=\"frame_" << frame_name(static_cast<int>(index))
      << "\" GridType=\"Collection\" CollectionType=\"Spatial\">\n"
      << "        <Time Value=\"" << f.time << "\"/>\n";
  if (layout_.particles) {
    const std::int64_t n = *layout_.particles;
    polyvertex(out, "particles", n, frame);
    attribute(out, frame, n, "velocity", "Vector", 3);
    attribute(out, frame, n, "angular_velocity", "Vector", 3);
    attribute(out, frame, n, "radius", "Scalar", 1);
    attribute(out, frame, n, "id", "Scalar", 1, true);
    attribute(out, frame, n, "quaternion", "Matrix", 4);
    out << "        </Grid>\n";
    // Bonds: line cells between particle rows; omitted when none are intact (empty DataItems upset the reader).
    if (f.bonds > 0) {
      out << "        <Grid Name=\"bonds\" GridType=\"Uniform\">\n"
          << "          <Topology TopologyType=\"Polyline\" NumberOfElements=\"" << f.bonds
          << "\" NodesPerElement=\"2\">\n";
      data_item(out, kIndent, dims(f.bonds, 2), true, frame + "/bonds");
      out << "          </Topology>\n";
      geometry(out, n, frame);
      out << "        </Grid>\n";
    }
  }
  if (layout_.mesh && layout_.mesh->vertices > 0) {
    // Elements index the vertex rows directly (row = global vertex id); a mesh without elements shows its vertices.
    const MeshLayout& m = *layout_.mesh;
    const std::string group = frame + "/mesh";
    if (m.elements > 0) {
      out << "        <Grid Name=\"mesh\" GridType=\"Uniform\">\n"
          << "          <Topology TopologyType=\"" << (m.nodes_per_element == 4 ? "Tetrahedron" : "Triangle")
          << "\" NumberOfElements=\"" << m.elements << "\">\n";
      data_item(out, kIndent, dims(m.elements, m.nodes_per_element), true, group + "/connectivity");
      out << "          </Topology>\n";
      geometry(out, m.vertices, group);
    } else {
      polyvertex(out, "mesh", m.vertices, group);
    }
    attribute(out, group, m.vertices, "velocity", "Vector", 3);
    if (m.displacement) attribute(out, group, m.vertices, "displacement", "Vector", 3);
    if (m.stress && m.elements > 0) attribute(out, group, m.elements, "stress", "Tensor", 9, false, "Cell");
    attribute(out, group, m.vertices, "id", "Scalar", 1, true);
    out << "        </Grid>\n";
  }
  if (layout_.bodies && layout_.bodies->bodies > 0) {
    const std::int64_t n = layout_.bodies->bodies;
    const std::string group = frame + "/bodies";
    polyvertex(out, "bodies", n, group);
    attribute(out, group, n, "velocity", "Vector", 3);
    attribute(out, group, n, "angular_velocity", "Vector", 3);
    attribute(out, group, n, "radius", "Scalar", 1);
    attribute(out, group, n, "id", "Scalar", 1, true);
    attribute(out, group, n, "shape", "Scalar", 1, true);
    attribute(out, group, n, "quaternion", "Matrix", 4);
    out << "        </Grid>\n";
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
  std::error_code ignored;
  const std::string temp = xdmf_path_ + ".tmp";
  {
    std::ofstream file(temp, std::ios::trunc | std::ios::binary);
    file << text;
    file.close();
    if (!file) {
      const int err = errno;
      fs::remove(temp, ignored);
      throw OutputError(temp + ": cannot write (" + std::strerror(err) + ")");
    }
  }
  fs::rename(temp, xdmf_path_);
}

void TrajectoryWriter::append_xdmf() {
  // Each frame writes only its own lines, over the closing tags, and the tags after them: rewriting the whole file
  // would cost every frame time in proportion to the frames before it, and on ext4 renaming over a file flushes it.
  // A viewer reading in the instant of the write may see the file cut short; a restart writes it whole again.
  if (xdmf_tail_ < 0 || !fs::exists(xdmf_path_)) return write_xdmf();
  const std::string text = frame_xdmf(frames_.size() - 1) + kXdmfTail;
  std::fstream file(xdmf_path_, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(xdmf_tail_);
  file << text;
  file.close();
  if (!file) throw OutputError(xdmf_path_ + ": cannot write (" + std::strerror(errno) + ")");
  xdmf_tail_ += static_cast<std::streamoff>(text.size()) - static_cast<std::streamoff>(std::strlen(kXdmfTail));
}

}  // namespace percussion::io
