// Checkpoint directories (commit, prune, latest) and the inspection commands `info` and `compare`. Runs at 1, 2
// and 3 ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "percussion/io/checkpoint_files.hpp"
#include "percussion/io/h5file.hpp"
#include "percussion/io/inspect.hpp"
#include "percussion/io/trajectory.hpp"

#include "../support/io_test_support.hpp"

namespace mpi_io_files {

namespace {

using namespace percussion::test;
using percussion::InputError;

// ---------------------------------------------------------------------------------------------
void write_checkpoint_file(const CheckpointDirectory& dir, long step) {
  H5File file = H5File::create(MPI_COMM_WORLD, dir.temp_path(step));
  write_attribute(file.id(), "kind", "checkpoint");
  write_attribute(file.id(), "step", static_cast<std::int64_t>(step));
  file.close();
}

long step_of(const std::string& path) {
  H5File file = H5File::open_read(MPI_COMM_SELF, path);
  return static_cast<long>(read_attribute_int(file.id(), "step"));
}

TEST(Checkpoints, CommitKeepsNewestAndPointsLatest) {
  TempDir tmp;
  const std::string out = tmp / "out";
  CheckpointDirectory dir(out + "/checkpoints", 2);
  EXPECT_EQ(fs::path(dir.temp_path(42)).filename(), ".ckpt_0000000042.h5.tmp");
  EXPECT_EQ(fs::path(dir.final_path(42)).filename(), "ckpt_0000000042.h5");
  EXPECT_TRUE(throws_input_error_naming([&] { CheckpointDirectory::resolve(out); }, out));

  for (long step : {10L, 20L, 30L}) {
    write_checkpoint_file(dir, step);
    dir.commit(MPI_COMM_WORLD, step);
  }
  EXPECT_EQ(dir.committed(), (std::vector<std::string>{dir.final_path(20), dir.final_path(30)}));
  EXPECT_EQ(fs::read_symlink(dir.latest_path()), "ckpt_0000000030.h5");
  const std::string newest = fs::canonical(dir.final_path(30)).string();
  EXPECT_EQ(CheckpointDirectory::resolve(out), newest);
  EXPECT_EQ(CheckpointDirectory::resolve(dir.dir()), newest);
  EXPECT_EQ(CheckpointDirectory::resolve(dir.latest_path()), newest);
  EXPECT_EQ(CheckpointDirectory::resolve(dir.final_path(20)), fs::canonical(dir.final_path(20)).string());
  EXPECT_EQ(step_of(CheckpointDirectory::resolve(out)), 30);
  EXPECT_TRUE(throws_input_error_naming([&] { CheckpointDirectory::resolve(out + "/absent"); },
                                        out + "/absent: no checkpoint found"));

  // A crash after writing the temporary but before commit: previous checkpoint and latest intact.
  write_checkpoint_file(dir, 40);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_TRUE(fs::exists(dir.temp_path(40)));
  EXPECT_EQ(fs::read_symlink(dir.latest_path()), "ckpt_0000000030.h5");
  EXPECT_EQ(step_of(CheckpointDirectory::resolve(out)), 30);
  EXPECT_EQ(dir.committed().size(), 2u);

  // The next commit cleans the stale temporary and prunes to `keep`.
  write_checkpoint_file(dir, 50);
  dir.commit(MPI_COMM_WORLD, 50);
  EXPECT_FALSE(fs::exists(dir.temp_path(40)));
  EXPECT_EQ(dir.committed(), (std::vector<std::string>{dir.final_path(30), dir.final_path(50)}));
  EXPECT_EQ(step_of(CheckpointDirectory::resolve(dir.latest_path())), 50);

  // Committing nothing fails on every rank.
  EXPECT_THROW(dir.commit(MPI_COMM_WORLD, 60), std::runtime_error);

  // Without the link (e.g. copied by a tool that drops symlinks), the newest file is used.
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) fs::remove(dir.latest_path());
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(step_of(CheckpointDirectory::resolve(out)), 50);
}

// ---------------------------------------------------------------------------------------------
TEST(Inspect, InfoDescribesTrajectoriesAndCheckpoints) {
  TempDir tmp;
  const std::int64_t n = 100;
  {
    TrajectoryWriter writer(MPI_COMM_WORLD, tmp / "out", n);
    for (int k = 0; k < 5; ++k) write_fixed(writer, make_observables(10 * k, k % 2), make_frame(n, k % 2).fields());
  }
  {
    H5File file = H5File::create(MPI_COMM_WORLD, tmp / "ckpt.h5");
    write_attribute(file.id(), "kind", "checkpoint");
    write_attribute(file.id(), "method", "bdem");
    write_attribute(file.id(), "step", std::int64_t{42});
    write_attribute(file.id(), "time", 0.5);
    write_rows(file.id(), "state/position", interleaved_rows(n), n, make_frame(n, 0).position, 3);
  }
  if (world_rank() != 0) return;
  std::ostringstream traj;
  print_info(tmp / "out/trajectory.h5", traj);
  const std::string t = traj.str();
  EXPECT_NE(t.find("Percussion trajectory"), std::string::npos) << t;
  EXPECT_NE(t.find("particles: 100"), std::string::npos) << t;
  EXPECT_NE(t.find("frames: 5 (steps 0 .. 40"), std::string::npos) << t;
  EXPECT_NE(t.find("total = 1.25"), std::string::npos) << t;  // last frame: kinetic 1.25, potential 0
  EXPECT_NE(t.find("contacts = 11"), std::string::npos) << t;
  EXPECT_NE(t.find("000000/"), std::string::npos) << t;
  EXPECT_NE(t.find("000004/"), std::string::npos) << t;
  EXPECT_EQ(t.find("000002/"), std::string::npos) << t;  // middle frames are summarised
  EXPECT_NE(t.find("... (3 more frame groups)"), std::string::npos) << t;
  EXPECT_NE(t.find("position  float64[100,3]"), std::string::npos) << t;

  std::ostringstream ckpt;
  print_info(tmp / "ckpt.h5", ckpt);
  const std::string c = ckpt.str();
  EXPECT_NE(c.find("Percussion checkpoint"), std::string::npos) << c;
  EXPECT_NE(c.find("method: \"bdem\""), std::string::npos) << c;
  EXPECT_NE(c.find("step: 42"), std::string::npos) << c;
  EXPECT_NE(c.find("state/"), std::string::npos) << c;
}

TEST(Inspect, CompareLastFramesMeasuresTheExactPerturbation) {
  TempDir tmp;
  const std::int64_t n = 100;
  const std::int64_t moved = 37;
  const double dx = 0.25;
  const double dv = 0.5;
  SyntheticFrame base = make_frame(n, 1);
  SyntheticFrame perturbed = base;
  std::int64_t dropped_bonds = 0;
  for (std::size_t i = 0; i < perturbed.id.size(); ++i) {
    if (perturbed.id[i] != moved) continue;
    perturbed.position[3 * i + 1] += dx;
    perturbed.velocity[3 * i + 2] -= dv;
    // q and -q are the same rotation: not a difference.
    for (int k = 0; k < 4; ++k) perturbed.quaternion[4 * i + k] = -perturbed.quaternion[4 * i + k];
  }
  // Replace one bond: two entries of the symmetric difference.
  for (std::size_t k = 0; k < perturbed.bonds.size(); k += 2)
    if (perturbed.bonds[k] == moved && perturbed.bonds[k + 1] == moved + 1) {
      perturbed.bonds[k + 1] = moved + 50;
      ++dropped_bonds;
    }
  for (const char* name : {"a", "b", "c"}) {
    TrajectoryWriter writer(MPI_COMM_WORLD, tmp / name, n);
    write_fixed(writer, make_observables(3, 0), make_frame(n, 0).fields());
    write_fixed(writer, make_observables(8, 1), (std::string(name) == "c" ? perturbed : base).fields());
  }
  MPI_Allreduce(MPI_IN_PLACE, &dropped_bonds, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  ASSERT_EQ(dropped_bonds, 1);

  const CompareResult same = compare_last_frames(tmp / "a/trajectory.h5", tmp / "b/trajectory.h5");
  EXPECT_EQ(same.max_rel_position, 0.0);
  EXPECT_EQ(same.max_rel_velocity, 0.0);
  EXPECT_EQ(same.max_rel_quaternion, 0.0);
  EXPECT_EQ(same.bonds_only_in_one, 0);
  EXPECT_EQ(same.bonds_a, static_cast<std::int64_t>(expected_bonds(n, 1).size()));
  EXPECT_EQ(same.step_a, 8);
  EXPECT_EQ(same.step_b, 8);

  // Denominators: the largest position and velocity norms of the reference frame.
  double max_x = 0.0, max_v = 0.0;
  for (std::int64_t g = 0; g < n; ++g) {
    double x2 = 0.0, v2 = 0.0;
    for (int c = 0; c < 3; ++c) {
      x2 += field_value(g, c, 1) * field_value(g, c, 1);
      v2 += std::pow(field_value(g, c, 1) * 0.5 + 1, 2);
    }
    max_x = std::max(max_x, std::sqrt(x2));
    max_v = std::max(max_v, std::sqrt(v2));
  }
  const CompareResult diff = compare_last_frames(tmp / "a/trajectory.h5", tmp / "c/trajectory.h5");
  EXPECT_NEAR(diff.max_rel_position, dx / max_x, 1e-15);
  EXPECT_NEAR(diff.max_rel_velocity, dv / max_v, 1e-15);
  EXPECT_EQ(diff.max_rel_quaternion, 0.0);
  EXPECT_EQ(diff.bonds_a, diff.bonds_b);
  EXPECT_EQ(diff.bonds_only_in_one, 2);
  EXPECT_TRUE(throws_input_error_naming(
      [&] { compare_last_frames(tmp / "a/trajectory.h5", tmp / "missing.h5"); }, tmp / "missing.h5"));
}

}  // namespace

}  // namespace mpi_io_files
