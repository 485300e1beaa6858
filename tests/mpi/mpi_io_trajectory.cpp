// Particle trajectories: frames written by interleaved owners, effort rows, resume, and the .xdmf ParaView reads.
// Runs at 1, 2 and 3 ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "percussion/io/h5file.hpp"
#include "percussion/io/trajectory.hpp"

#include "../support/io_test_support.hpp"

namespace mpi_io_trajectory {

namespace {

using namespace percussion::test;
using percussion::InputError;

TEST(Trajectory, TwoFramesWithInterleavedOwnershipReadBack) {
  TempDir tmp;
  const std::int64_t n = 100;
  {
    TrajectoryWriter writer(MPI_COMM_WORLD, tmp / "out", n);
    EXPECT_EQ(writer.frames(), 0);
    write_fixed(writer, make_observables(0, 0), make_frame(n, 0).fields());
    SyntheticFrame f1 = make_frame(n, 1);
    write_fixed(writer, make_observables(25, 1), f1.fields());
    EXPECT_EQ(writer.frames(), 2);
  }
  H5File file = H5File::open_read(MPI_COMM_WORLD, tmp / "out/trajectory.h5");
  EXPECT_EQ(read_attribute_string(file.id(), "kind"), "trajectory");
  EXPECT_EQ(read_attribute_int(file.id(), "particles"), n);
  check_frame(file.id(), 0, 0, n);
  check_frame(file.id(), 1, 1, n);
  H5Group f1 = H5Group::open(file.id(), "frames/000001");
  EXPECT_EQ(read_attribute_int(f1.id(), "step"), 25);
  EXPECT_EQ(read_attribute_double(f1.id(), "time"), 1e-3 * 25);
  EXPECT_EQ(read_all_int(file.id(), "observables/step"), (std::vector<std::int64_t>{0, 25}));
  EXPECT_EQ(read_all_double(file.id(), "observables/total"), (std::vector<double>{1.25, 1.75}));
  int c = 0;
  EXPECT_EQ(read_all_double(file.id(), "observables/angular_momentum", &c),
            (std::vector<double>{-1.0, 0.0, 0.0, -1.0, 0.0, 2.0}));
  EXPECT_EQ(c, 3);
  EXPECT_EQ(read_all_int(file.id(), "observables/bonds_broken"), (std::vector<std::int64_t>{0, 3}));
  EXPECT_EQ(read_all_int(file.id(), "observables/contacts"), (std::vector<std::int64_t>{11, 12}));
}

// Effort rows (FrameEffort) go with the frame they precede, rank 0's values, the iteration counts only when counted;
// a resume trims them with the frames, and a trajectory started without them never gets misaligned ones.
TEST(Trajectory, EffortRowsFollowTheFramesTheyAreSetFor) {
  TempDir tmp;
  const std::int64_t n = 12;
  const double rank_wall = 0.5 + world_rank();  // rank 0's is written
  {
    TrajectoryWriter writer(MPI_COMM_WORLD, tmp / "counted", n);
    for (int k = 0; k < 3; ++k) {
      writer.set_effort({rank_wall * k, 3L * k, 10L * k});
      write_fixed(writer, make_observables(10 * k, k % 2), make_frame(n, k % 2).fields());
    }
  }
  {
    TrajectoryWriter writer(MPI_COMM_WORLD, tmp / "counted", n, /*resume_step=*/15);
    writer.set_effort({7.0, 4, 40});
    write_fixed(writer, make_observables(20, 0), make_frame(n, 0).fields());
  }
  {
    H5File file = H5File::open_read(MPI_COMM_WORLD, tmp / "counted/trajectory.h5");
    EXPECT_EQ(read_all_double(file.id(), "observables/wall_seconds"), (std::vector<double>{0.0, 0.5, 7.0}));
    EXPECT_EQ(read_all_int(file.id(), "observables/newton_iterations"), (std::vector<std::int64_t>{0, 3, 4}));
    EXPECT_EQ(read_all_int(file.id(), "observables/krylov_iterations"), (std::vector<std::int64_t>{0, 10, 40}));
  }
  {
    TrajectoryWriter writer(MPI_COMM_WORLD, tmp / "uncounted", n);
    writer.set_effort({1.0, -1, -1});  // a method without Newton iterations
    write_fixed(writer, make_observables(0, 0), make_frame(n, 0).fields());
    write_fixed(writer, make_observables(10, 1), make_frame(n, 1).fields());  // no effort set: no row
    writer.set_effort({2.0, 5, 6});
    write_fixed(writer, make_observables(20, 0), make_frame(n, 0).fields());
  }
  H5File file = H5File::open_read(MPI_COMM_WORLD, tmp / "uncounted/trajectory.h5");
  EXPECT_EQ(read_all_int(file.id(), "observables/step"), (std::vector<std::int64_t>{0, 10, 20}));
  EXPECT_EQ(read_all_double(file.id(), "observables/wall_seconds"), (std::vector<double>{1.0}));  // then out of step
  EXPECT_FALSE(exists(file.id(), "observables/newton_iterations"));  // would start at the third frame
}

TEST(Trajectory, ResumeDropsLaterFramesAndContinues) {
  TempDir tmp;
  const std::int64_t n = 30;
  {
    TrajectoryWriter writer(MPI_COMM_WORLD, tmp / "out", n);
    for (int k = 0; k < 4; ++k) write_fixed(writer, make_observables(10 * k, k % 2), make_frame(n, k % 2).fields());
  }
  {
    TrajectoryWriter writer(MPI_COMM_WORLD, tmp / "out", n, /*resume_step=*/15);
    EXPECT_EQ(writer.frames(), 2);
    write_fixed(writer, make_observables(17, 0), make_frame(n, 0).fields());
    EXPECT_EQ(writer.frames(), 3);
  }
  H5File file = H5File::open_read(MPI_COMM_WORLD, tmp / "out/trajectory.h5");
  EXPECT_EQ(members(file.id(), "frames"), (std::vector<std::string>{"000000", "000001", "000002"}));
  EXPECT_EQ(read_all_int(file.id(), "observables/step"), (std::vector<std::int64_t>{0, 10, 17}));
  EXPECT_EQ(read_all_double(file.id(), "observables/kinetic"), (std::vector<double>{1.25, 2.25, 1.25}));
  int c = 0;
  EXPECT_EQ(read_all_double(file.id(), "observables/momentum", &c).size(), 9u);
  {
    H5Group f2 = H5Group::open(file.id(), "frames/000002");
    EXPECT_EQ(read_attribute_int(f2.id(), "step"), 17);
  }
  check_frame(file.id(), 1, 1, n);
  check_frame(file.id(), 2, 0, n);  // the continued frame
  file.close();

  // Frames are appended to the .xdmf in place; a resumed writer writes it whole: the two texts agree.
  auto xdmf_text = [&] {
    std::ifstream in(tmp / "out/trajectory.xdmf");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  const std::string appended = world_rank() == 0 ? xdmf_text() : "";
  { TrajectoryWriter rewritten(MPI_COMM_WORLD, tmp / "out", n, /*resume_step=*/100); }
  if (world_rank() == 0) {
    EXPECT_EQ(xdmf_text(), appended);
    EXPECT_NE(appended.find("frame_000002"), std::string::npos);
    EXPECT_EQ(appended.find("frame_000003"), std::string::npos);
  }

  // A wrong particle count is a user error naming the file; resuming in an empty dir starts fresh.
  EXPECT_TRUE(throws_input_error_naming([&] { TrajectoryWriter(MPI_COMM_WORLD, tmp / "out", n + 1, 10); },
                                        "trajectory.h5"));
  TrajectoryWriter fresh(MPI_COMM_WORLD, tmp / "other", n, 100);
  EXPECT_EQ(fresh.frames(), 0);
}


TEST(Trajectory, XdmfIsWellFormedAndNamesTheRightCounts) {
  TempDir tmp;
  const std::int64_t n = 100;
  std::vector<std::int64_t> bonds_per_frame;
  {
    TrajectoryWriter writer(MPI_COMM_WORLD, tmp / "out", n);
    write_fixed(writer, make_observables(0, 0), make_frame(n, 0).fields());
    write_fixed(writer, make_observables(5, 1), make_frame(n, 1).fields());
    SyntheticFrame broken = make_frame(n, 1);
    broken.bonds.clear();  // all bonds broken: no bonds grid
    write_fixed(writer, make_observables(9, 1), broken.fields());
  }
  bonds_per_frame = {static_cast<std::int64_t>(expected_bonds(n, 0).size()),
                     static_cast<std::int64_t>(expected_bonds(n, 1).size()), 0};
  if (world_rank() == 0) {
    std::ifstream in(tmp / "out/trajectory.xdmf");
    ASSERT_TRUE(in.good());
    std::stringstream text;
    text << in.rdbuf();
    XmlNode root;
    ASSERT_NO_THROW(root = XmlReader(text.str()).document());
    EXPECT_EQ(root.name, "Xdmf");
    EXPECT_EQ(root.attributes.at("Version"), "2.0");
    const XmlNode& domain = *children_named(root, "Domain").at(0);
    const XmlNode& series = *children_named(domain, "Grid").at(0);
    EXPECT_EQ(series.attributes.at("CollectionType"), "Temporal");
    const auto steps = children_named(series, "Grid");
    ASSERT_EQ(steps.size(), 3u);
    const std::vector<double> times{0.0, 1e-3 * 5, 1e-3 * 9};  // as make_observables computes them
    for (std::size_t k = 0; k < steps.size(); ++k) {
      EXPECT_EQ(steps[k]->attributes.at("CollectionType"), "Spatial");
      EXPECT_EQ(std::stod(children_named(*steps[k], "Time").at(0)->attributes.at("Value")), times[k]);
      const auto grids = children_named(*steps[k], "Grid");
      ASSERT_EQ(grids.size(), bonds_per_frame[k] > 0 ? 2u : 1u);
      const XmlNode& particles = *grids[0];
      EXPECT_EQ(particles.attributes.at("Name"), "particles");
      const XmlNode& topo = *children_named(particles, "Topology").at(0);
      EXPECT_EQ(topo.attributes.at("TopologyType"), "Polyvertex");
      EXPECT_EQ(topo.attributes.at("NumberOfElements"), std::to_string(n));
      EXPECT_EQ(children_named(particles, "Geometry").at(0)->attributes.at("GeometryType"), "XYZ");
      std::set<std::string> names;
      for (const XmlNode* a : children_named(particles, "Attribute")) names.insert(a->attributes.at("Name"));
      EXPECT_EQ(names, (std::set<std::string>{"velocity", "angular_velocity", "radius", "id", "quaternion"}));
      if (bonds_per_frame[k] > 0) {
        EXPECT_EQ(grids[1]->attributes.at("Name"), "bonds");
        const XmlNode& lines = *children_named(*grids[1], "Topology").at(0);
        EXPECT_EQ(lines.attributes.at("TopologyType"), "Polyline");
        EXPECT_EQ(lines.attributes.at("NodesPerElement"), "2");
        EXPECT_EQ(lines.attributes.at("NumberOfElements"), std::to_string(bonds_per_frame[k]));
      }
    }
    H5File file = H5File::open_read(MPI_COMM_SELF, tmp / "out/trajectory.h5");
    int items = 0;
    check_data_items(root, file.id(), &items);
    EXPECT_EQ(items, 3 * 7 + 2 * 2);  // 7 per particles grid, 2 per bonds grid
  }
}

}  // namespace

}  // namespace mpi_io_trajectory
