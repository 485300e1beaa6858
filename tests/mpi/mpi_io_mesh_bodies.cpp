// Mesh and rigid-body frames in a trajectory: a tetrahedral mesh split over the ranks reads back in global order
// (a fixed mesh's connectivity stored once), bodies and their shapes round trip, and the .xdmf of a file holding
// particles, a mesh and bodies names datasets of exactly its shapes. Runs at 1, 2 and 3 ranks.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>

#include <array>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "../support/io_test_support.hpp"
#include "percussion/core/observable_set.hpp"
#include "percussion/io/h5file.hpp"
#include "percussion/io/inspect.hpp"
#include "percussion/io/trajectory.hpp"

namespace mpi_io_mesh_bodies {

namespace {

using namespace percussion::test;
using percussion::ObservableSet;

// A box of nx*ny*nz cubes, each cut into 6 tetrahedra around its diagonal: vertex (i,j,k) has id i + (nx+1)(j +
// (ny+1)k); element 6c+t is tetrahedron t of cube c.
struct TetBox {
  int nx = 3, ny = 2, nz = 2;
  std::int64_t vertices() const { return std::int64_t{nx + 1} * (ny + 1) * (nz + 1); }
  std::int64_t elements() const { return 6 * std::int64_t{nx} * ny * nz; }
  std::int64_t vertex(int i, int j, int k) const { return i + (nx + 1) * (j + (ny + 1) * std::int64_t{k}); }
  // Vertex g's position in frame f: a sheared, stretched grid, so every component differs.
  double position(std::int64_t g, int c, int f) const {
    const std::int64_t i = g % (nx + 1), j = (g / (nx + 1)) % (ny + 1), k = g / ((nx + 1) * (ny + 1));
    const double p[3] = {0.5 * i + 0.05 * f * k, 0.25 * j, 0.125 * k * (1 + 0.1 * f)};
    return p[c];
  }
  double velocity(std::int64_t g, int c, int f) const { return 0.1 * f - 0.01 * g + c; }
  std::array<std::int64_t, 4> element(std::int64_t e) const {
    static constexpr int kTets[6][4] = {{0, 1, 3, 7}, {0, 1, 5, 7}, {0, 2, 3, 7},
                                        {0, 2, 6, 7}, {0, 4, 5, 7}, {0, 4, 6, 7}};
    const std::int64_t c = e / 6;
    const int i = static_cast<int>(c % nx), j = static_cast<int>((c / nx) % ny), k = static_cast<int>(c / (nx * ny));
    std::array<std::int64_t, 4> out{};
    for (int n = 0; n < 4; ++n) {
      const int corner = kTets[e % 6][n];
      out[n] = vertex(i + (corner & 1), j + ((corner >> 1) & 1), k + ((corner >> 2) & 1));
    }
    return out;
  }
};

// This rank's part: vertices interleaved (gid % size), elements in contiguous blocks or interleaved.
struct MeshPart {
  std::vector<std::int64_t> vertex_id, element_id, connectivity;
  std::vector<double> position, velocity;
  MeshFields fields() const { return {vertex_id, position, velocity, element_id, connectivity}; }
};

MeshPart mesh_part(const TetBox& box, int frame, bool interleaved_elements) {
  MeshPart p;
  p.vertex_id = interleaved_rows(box.vertices());
  for (std::int64_t g : p.vertex_id)
    for (int c = 0; c < 3; ++c) {
      p.position.push_back(box.position(g, c, frame));
      p.velocity.push_back(box.velocity(g, c, frame));
    }
  const std::int64_t e_total = box.elements();
  const std::int64_t block = (e_total + world_size() - 1) / world_size();
  for (std::int64_t e = 0; e < e_total; ++e) {
    const bool mine = interleaved_elements ? e % world_size() == world_rank() : e / block == world_rank();
    if (!mine) continue;
    p.element_id.push_back(e);
    const auto nodes = box.element(e);
    p.connectivity.insert(p.connectivity.end(), nodes.begin(), nodes.end());
  }
  return p;
}

ObservableSet frame_observables(int f) {
  ObservableSet o;
  o.set("kinetic", 0.5 * f);
  return o;
}

// How many names (hard links) the object at `path` has.
unsigned link_count(hid_t file, const std::string& path) {
#if H5_VERSION_GE(1, 12, 0)
  H5O_info2_t info;
  H5Oget_info_by_name3(file, path.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT);
#else
  H5O_info_t info;
  H5Oget_info_by_name2(file, path.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT);
#endif
  return info.rc;
}

void check_mesh_frame(hid_t file, int index, const TetBox& box, int frame) {
  const std::string g = "frames/" + TrajectoryWriter::frame_name(index) + "/mesh";
  int c = 0;
  const std::vector<double> pos = read_all_double(file, g + "/position", &c);
  ASSERT_EQ(c, 3);
  const std::vector<double> vel = read_all_double(file, g + "/velocity");
  const std::vector<std::int64_t> id = read_all_int(file, g + "/id");
  ASSERT_EQ(id.size(), static_cast<std::size_t>(box.vertices()));
  ASSERT_EQ(pos.size(), 3 * id.size());
  for (std::int64_t v = 0; v < box.vertices(); ++v) {
    ASSERT_EQ(id[v], v);
    for (int k = 0; k < 3; ++k) {
      ASSERT_EQ(pos[3 * v + k], box.position(v, k, frame)) << v;
      ASSERT_EQ(vel[3 * v + k], box.velocity(v, k, frame)) << v;
    }
  }
  const std::vector<std::int64_t> conn = read_all_int(file, g + "/connectivity", &c);
  ASSERT_EQ(c, 4);
  ASSERT_EQ(conn.size(), static_cast<std::size_t>(4 * box.elements()));
  for (std::int64_t e = 0; e < box.elements(); ++e)
    for (int n = 0; n < 4; ++n) ASSERT_EQ(conn[4 * e + n], box.element(e)[n]) << e;
}

TEST(MeshFrames, ATetMeshSplitOverRanksReadsBackInGlobalOrder) {
  TempDir tmp;
  const TetBox box;
  ASSERT_EQ(box.vertices(), 36);
  ASSERT_EQ(box.elements(), 72);
  // Cube 5 is (2, 1, 0); its tetrahedron 3 has corners 0, 2, 6, 7 (bits x, y, z).
  ASSERT_EQ(box.element(6 * 5 + 3), (std::array<std::int64_t, 4>{box.vertex(2, 1, 0), box.vertex(2, 2, 0),
                                                                   box.vertex(2, 2, 1), box.vertex(3, 2, 1)}));
  const TrajectoryLayout layout{std::nullopt, MeshLayout{box.vertices(), box.elements(), 4}, std::nullopt};
  {
    TrajectoryWriter w(MPI_COMM_WORLD, tmp / "out", layout);
    for (int f = 0; f < 3; ++f) {
      // The third frame moves the elements to other owners: same mesh, written again where ranks > 1.
      const MeshPart part = mesh_part(box, f, f == 2);
      const MeshFields fields = part.fields();
      FrameContent content;
      content.mesh = &fields;
      w.write_frame(10 * f, 0.1 * f, frame_observables(f), content);
    }
  }
  H5File file = H5File::open_read(MPI_COMM_WORLD, tmp / "out/trajectory.h5");
  EXPECT_FALSE(has_attribute(file.id(), "particles"));
  EXPECT_EQ(read_attribute_int(file.id(), "mesh_vertices"), 36);
  EXPECT_EQ(read_attribute_int(file.id(), "mesh_elements"), 72);
  EXPECT_EQ(read_attribute_int(file.id(), "mesh_nodes_per_element"), 4);
  for (int f = 0; f < 3; ++f) check_mesh_frame(file.id(), f, box, f);
  EXPECT_FALSE(exists(file.id(), "frames/000000/position"));  // no particle datasets
  // Frames 0 and 1 share one connectivity dataset; frame 2 shares it too unless its owners changed.
  EXPECT_EQ(link_count(file.id(), "/frames/000000/mesh/connectivity"), world_size() == 1 ? 3u : 2u);
  EXPECT_EQ(read_all_double(file.id(), "observables/kinetic"), (std::vector<double>{0.0, 0.5, 1.0}));
}

TEST(MeshFrames, ResumeRewritesTheConnectivityAndBadElementsThrowEverywhere) {
  TempDir tmp;
  const TetBox box{2, 1, 1};
  const TrajectoryLayout layout{std::nullopt, MeshLayout{box.vertices(), box.elements(), 4}, std::nullopt};
  auto write = [&](TrajectoryWriter& w, long step, int f) {
    const MeshPart part = mesh_part(box, f, false);
    const MeshFields fields = part.fields();
    FrameContent content;
    content.mesh = &fields;
    w.write_frame(step, 0.01 * step, frame_observables(f), content);
  };
  {
    TrajectoryWriter w(MPI_COMM_WORLD, tmp / "out", layout);
    for (int f = 0; f < 3; ++f) write(w, 10 * f, f);
  }
  {
    TrajectoryWriter w(MPI_COMM_WORLD, tmp / "out", layout, /*resume_step=*/10);
    EXPECT_EQ(w.frames(), 2);
    write(w, 11, 4);

    MeshPart bad = mesh_part(box, 0, false);
    if (!bad.connectivity.empty() && world_rank() == world_size() - 1) bad.connectivity[0] = box.vertices();
    const MeshFields fields = bad.fields();
    FrameContent content;
    content.mesh = &fields;
    EXPECT_THROW(w.write_frame(12, 0.12, frame_observables(0), content), std::invalid_argument);
    EXPECT_EQ(w.frames(), 3);
  }
  // A layout other than the file's is a user error naming the file.
  const TrajectoryLayout other{std::nullopt, MeshLayout{box.vertices(), box.elements(), 3}, std::nullopt};
  EXPECT_TRUE(throws_input_error_naming([&] { TrajectoryWriter(MPI_COMM_WORLD, tmp / "out", other, 10); },
                                        "nodes per mesh element"));
  EXPECT_TRUE(throws_input_error_naming([&] { TrajectoryWriter(MPI_COMM_WORLD, tmp / "out", 5, 10); },
                                        "holds no particles"));

  H5File file = H5File::open_read(MPI_COMM_WORLD, tmp / "out/trajectory.h5");
  EXPECT_EQ(read_all_int(file.id(), "observables/step"), (std::vector<std::int64_t>{0, 10, 11}));
  check_mesh_frame(file.id(), 1, box, 1);
  check_mesh_frame(file.id(), 2, box, 4);
  EXPECT_EQ(link_count(file.id(), "/frames/000002/mesh/connectivity"), 1u);
}

// A triangulated 3x2 sheet: Triangle cells in the .xdmf, connectivity [E,3], and `info` naming the mesh.
TEST(MeshFrames, ATriangleSheetReadsBackAndItsXdmfSaysTriangle) {
  TempDir tmp;
  constexpr int kCols = 3, kRows = 2;
  const std::int64_t n_vertices = (kCols + 1) * (kRows + 1), n_elements = 2 * kCols * kRows;
  auto corner = [](int i, int j) { return std::int64_t{i} + (kCols + 1) * std::int64_t{j}; };
  auto triangle = [&](std::int64_t e) {
    const int i = static_cast<int>(e / 2) % kCols, j = static_cast<int>(e / 2) / kCols;
    return e % 2 == 0 ? std::array<std::int64_t, 3>{corner(i, j), corner(i + 1, j), corner(i + 1, j + 1)}
                      : std::array<std::int64_t, 3>{corner(i, j), corner(i + 1, j + 1), corner(i, j + 1)};
  };
  std::vector<std::int64_t> vertex_id = interleaved_rows(n_vertices), element_id, connectivity;
  std::vector<double> position, velocity;
  for (std::int64_t v : vertex_id) {
    const double column = static_cast<double>(v % (kCols + 1)), row = static_cast<double>(v / (kCols + 1));
    position.insert(position.end(), {0.5 * column, 0.5 * row, 0.0});
    velocity.insert(velocity.end(), {0.0, 0.0, -1.0 * static_cast<double>(v)});
  }
  for (std::int64_t e = n_elements - 1 - world_rank(); e >= 0; e -= world_size())
    element_id.insert(element_id.begin(), e);  // ascending
  for (std::int64_t e : element_id) {
    const auto t = triangle(e);
    connectivity.insert(connectivity.end(), t.begin(), t.end());
  }
  {
    const TrajectoryLayout layout{std::nullopt, MeshLayout{n_vertices, n_elements, 3}, std::nullopt};
    TrajectoryWriter w(MPI_COMM_WORLD, tmp / "out", layout);
    const MeshFields fields{vertex_id, position, velocity, element_id, connectivity};
    w.write_frame(0, 0.0, frame_observables(0), FrameContent{nullptr, &fields, nullptr});
  }
  H5File file = H5File::open_read(MPI_COMM_WORLD, tmp / "out/trajectory.h5");
  int c = 0;
  const std::vector<std::int64_t> conn = read_all_int(file.id(), "frames/000000/mesh/connectivity", &c);
  ASSERT_EQ(c, 3);
  ASSERT_EQ(conn.size(), static_cast<std::size_t>(3 * n_elements));
  for (std::int64_t e = 0; e < n_elements; ++e)
    for (int k = 0; k < 3; ++k) EXPECT_EQ(conn[3 * e + k], triangle(e)[k]) << e;
  EXPECT_EQ(read_all_double(file.id(), "frames/000000/mesh/velocity").at(3 * 11 + 2), -11.0);
  if (world_rank() != 0) return;
  std::ifstream in(tmp / "out/trajectory.xdmf");
  std::stringstream text;
  text << in.rdbuf();
  XmlNode root;
  ASSERT_NO_THROW(root = XmlReader(text.str()).document());
  const XmlNode& series = *children_named(*children_named(root, "Domain").at(0), "Grid").at(0);
  const XmlNode& mesh = *children_named(*children_named(series, "Grid").at(0), "Grid").at(0);
  const XmlNode& topology = *children_named(mesh, "Topology").at(0);
  EXPECT_EQ(topology.attributes.at("TopologyType"), "Triangle");
  EXPECT_EQ(topology.attributes.at("NumberOfElements"), "12");
  H5File serial = H5File::open_read(MPI_COMM_SELF, tmp / "out/trajectory.h5");
  int items = 0;
  check_data_items(root, serial.id(), &items);
  EXPECT_EQ(items, 4);
  std::ostringstream info;
  print_info(tmp / "out/trajectory.h5", info);
  EXPECT_NE(info.str().find("mesh: 12 vertices, 12 elements of 3 nodes"), std::string::npos) << info.str();
  EXPECT_NE(info.str().find("kinetic = 0\n"), std::string::npos) << info.str();
}

// ----- rigid bodies
constexpr std::int64_t kBodies = 7;

BodyLayout body_layout() {
  BodyLayout b;
  b.bodies = kBodies;
  BodyShape sphere;
  sphere.radius = 0.5;
  BodyShape tet;  // in body coordinates; its bounding radius about the origin is 3
  tet.vertices = {1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, -3};
  tet.triangles = {0, 1, 2, 0, 1, 3, 0, 2, 3, 1, 2, 3};
  b.shapes = {sphere, tet};
  return b;
}

struct BodyPart {
  std::vector<std::int64_t> id, shape;
  std::vector<double> position, quaternion, velocity, angular_velocity;
  BodyFields fields() const { return {id, position, quaternion, velocity, angular_velocity, shape}; }
};

double body_value(std::int64_t b, int c, int f) { return 1.25 * b - 0.5 * c + 0.1 * f; }
std::int64_t body_shape(std::int64_t b) { return b % 3 == 1 ? 1 : 0; }

BodyPart body_part(int f) {
  BodyPart p;
  // Bodies owned in reverse interleaving: rank r holds b with (kBodies - 1 - b) % size == r, in ascending id.
  for (std::int64_t b = 0; b < kBodies; ++b) {
    if ((kBodies - 1 - b) % world_size() != world_rank()) continue;
    p.id.push_back(b);
    p.shape.push_back(body_shape(b));
    for (int c = 0; c < 3; ++c) {
      p.position.push_back(body_value(b, c, f));
      p.velocity.push_back(-body_value(b, c, f));
      p.angular_velocity.push_back(2 * body_value(b, c, f));
    }
    const double a = 0.1 * b + 0.2 * f;
    p.quaternion.insert(p.quaternion.end(), {0.0, std::sin(a), 0.0, std::cos(a)});
  }
  return p;
}

TEST(BodyFrames, BodiesAndTheirShapesRoundTrip) {
  TempDir tmp;
  const TrajectoryLayout layout{std::nullopt, std::nullopt, body_layout()};
  {
    TrajectoryWriter w(MPI_COMM_WORLD, tmp / "out", layout);
    for (int f = 0; f < 2; ++f) {
      const BodyPart part = body_part(f);
      const BodyFields fields = part.fields();
      FrameContent content;
      content.bodies = &fields;
      w.write_frame(f, 0.25 * f, frame_observables(f), content);
    }
    BodyPart bad = body_part(0);
    if (world_rank() == 0 && !bad.shape.empty()) bad.shape[0] = 2;  // there are two shapes
    const BodyFields fields = bad.fields();
    FrameContent content;
    content.bodies = &fields;
    EXPECT_THROW(w.write_frame(2, 0.5, frame_observables(2), content), std::invalid_argument);
    FrameContent wrong_kind;  // no bodies
    EXPECT_THROW(w.write_frame(2, 0.5, frame_observables(2), wrong_kind), std::invalid_argument);
  }
  H5File file = H5File::open_read(MPI_COMM_WORLD, tmp / "out/trajectory.h5");
  EXPECT_EQ(read_attribute_int(file.id(), "bodies"), kBodies);
  EXPECT_EQ(read_attribute_int(file.id(), "shapes"), 2);
  EXPECT_EQ(members(file.id(), "shapes"), (std::vector<std::string>{"000000", "000001"}));
  {
    H5Group s0 = H5Group::open(file.id(), "shapes/000000");
    H5Group s1 = H5Group::open(file.id(), "shapes/000001");
    EXPECT_EQ(read_attribute_double(s0.id(), "radius"), 0.5);
    EXPECT_FALSE(exists(s0.id(), "vertices"));
    EXPECT_EQ(read_attribute_double(s1.id(), "radius"), 3.0);
    EXPECT_EQ(read_all_double(s1.id(), "vertices"), body_layout().shapes[1].vertices);
    int c = 0;
    EXPECT_EQ(read_all_int(s1.id(), "triangles", &c), body_layout().shapes[1].triangles);
    EXPECT_EQ(c, 3);
  }
  EXPECT_EQ(members(file.id(), "frames"), (std::vector<std::string>{"000000", "000001"}));
  for (int f = 0; f < 2; ++f) {
    const std::string g = "frames/" + TrajectoryWriter::frame_name(f) + "/bodies/";
    const std::vector<double> pos = read_all_double(file.id(), g + "position");
    const std::vector<double> vel = read_all_double(file.id(), g + "velocity");
    const std::vector<double> omega = read_all_double(file.id(), g + "angular_velocity");
    int c = 0;
    const std::vector<double> q = read_all_double(file.id(), g + "quaternion", &c);
    EXPECT_EQ(c, 4);
    const std::vector<double> radius = read_all_double(file.id(), g + "radius");
    const std::vector<std::int64_t> id = read_all_int(file.id(), g + "id");
    const std::vector<std::int64_t> shape_index = read_all_int(file.id(), g + "shape");
    ASSERT_EQ(id.size(), static_cast<std::size_t>(kBodies));
    for (std::int64_t b = 0; b < kBodies; ++b) {
      EXPECT_EQ(id[b], b);
      EXPECT_EQ(shape_index[b], body_shape(b));
      EXPECT_EQ(radius[b], body_shape(b) == 1 ? 3.0 : 0.5);
      for (int k = 0; k < 3; ++k) {
        EXPECT_EQ(pos[3 * b + k], body_value(b, k, f));
        EXPECT_EQ(vel[3 * b + k], -body_value(b, k, f));
        EXPECT_EQ(omega[3 * b + k], 2 * body_value(b, k, f));
      }
      EXPECT_EQ(q[4 * b + 1], std::sin(0.1 * b + 0.2 * f));
      EXPECT_EQ(q[4 * b + 3], std::cos(0.1 * b + 0.2 * f));
    }
  }
}

// ----- all kinds in one file, and its .xdmf
TEST(TrajectoryXdmf, ParticlesMeshAndBodiesGridsMatchTheDatasets) {
  TempDir tmp;
  const std::int64_t n = 20;
  const TetBox box{2, 2, 1};
  const TrajectoryLayout layout{n, MeshLayout{box.vertices(), box.elements(), 4}, body_layout()};
  {
    TrajectoryWriter w(MPI_COMM_WORLD, tmp / "out", layout);
    for (int f = 0; f < 2; ++f) {
      const SyntheticFrame particles = make_frame(n, f);
      const FrameFields pf = particles.fields();
      const MeshPart mesh = mesh_part(box, f, false);
      const MeshFields mf = mesh.fields();
      const BodyPart bodies = body_part(f);
      const BodyFields bf = bodies.fields();
      w.write_frame(5 * f, 0.5 * f, frame_observables(f), FrameContent{&pf, &mf, &bf});
    }
  }
  if (world_rank() != 0) return;
  std::ifstream in(tmp / "out/trajectory.xdmf");
  std::stringstream text;
  text << in.rdbuf();
  XmlNode root;
  ASSERT_NO_THROW(root = XmlReader(text.str()).document());
  const XmlNode& series = *children_named(*children_named(root, "Domain").at(0), "Grid").at(0);
  const auto steps = children_named(series, "Grid");
  ASSERT_EQ(steps.size(), 2u);
  for (const XmlNode* step : steps) {
    const auto grids = children_named(*step, "Grid");
    ASSERT_EQ(grids.size(), 4u);
    EXPECT_EQ(grids[0]->attributes.at("Name"), "particles");
    EXPECT_EQ(grids[1]->attributes.at("Name"), "bonds");
    EXPECT_EQ(grids[2]->attributes.at("Name"), "mesh");
    EXPECT_EQ(grids[3]->attributes.at("Name"), "bodies");
    const XmlNode& mesh_topology = *children_named(*grids[2], "Topology").at(0);
    EXPECT_EQ(mesh_topology.attributes.at("TopologyType"), "Tetrahedron");
    EXPECT_EQ(mesh_topology.attributes.at("NumberOfElements"), std::to_string(box.elements()));
    EXPECT_EQ(children_named(*grids[2], "Geometry").at(0)->attributes.at("GeometryType"), "XYZ");
    const XmlNode& body_topology = *children_named(*grids[3], "Topology").at(0);
    EXPECT_EQ(body_topology.attributes.at("TopologyType"), "Polyvertex");
    EXPECT_EQ(body_topology.attributes.at("NumberOfElements"), std::to_string(kBodies));
    std::set<std::string> names;
    for (const XmlNode* a : children_named(*grids[3], "Attribute")) names.insert(a->attributes.at("Name"));
    EXPECT_EQ(names, (std::set<std::string>{"velocity", "angular_velocity", "radius", "id", "shape", "quaternion"}));
  }
  H5File file = H5File::open_read(MPI_COMM_SELF, tmp / "out/trajectory.h5");
  int items = 0;
  check_data_items(root, file.id(), &items);
  EXPECT_EQ(items, 2 * (7 + 2 + 4 + 8));  // particles, bonds, mesh (topology, geometry, 2 attributes), bodies
}

}  // namespace

}  // namespace mpi_io_mesh_bodies
