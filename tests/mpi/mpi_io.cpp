// Parallel HDF5 I/O: tables written by interleaved owners, blocks, attributes, strings, trajectory +
// XDMF, checkpoint commit/prune/latest, `info` and `compare`. Runs at 1, 2 and 3 ranks.
#include <gtest/gtest.h>
#include <mpi.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "percussion/core/error.hpp"
#include "percussion/io/checkpoint_files.hpp"
#include "percussion/io/h5file.hpp"
#include "percussion/io/inspect.hpp"
#include "percussion/io/trajectory.hpp"

namespace {

namespace fs = std::filesystem;
using namespace percussion::io;
using percussion::InputError;

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

// A fresh directory per test: rank 0 makes it, everyone gets its name, rank 0 removes it.
class TempDir {
 public:
  TempDir() {
    char name[64] = "/tmp/percussion_io_XXXXXX";
    if (world_rank() == 0 && mkdtemp(name) == nullptr) std::abort();
    MPI_Bcast(name, sizeof(name), MPI_CHAR, 0, MPI_COMM_WORLD);
    path_ = name;
  }
  ~TempDir() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) fs::remove_all(path_);
  }
  std::string operator/(const std::string& name) const { return (fs::path(path_) / name).string(); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Rows owned by this rank when ownership is interleaved (gid % size), the worst case for selections.
std::vector<std::int64_t> interleaved_rows(std::int64_t n) {
  std::vector<std::int64_t> rows;
  for (std::int64_t g = world_rank(); g < n; g += world_size()) rows.push_back(g);
  return rows;
}

double field_value(std::int64_t g, int c, int frame) { return 0.5 * g + 0.125 * c - 3.0 * frame + 0.0625; }

template <class F>
bool throws_input_error_naming(F&& f, const std::string& text) {
  try {
    f();
  } catch (const InputError& e) {
    return std::string(e.what()).find(text) != std::string::npos;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
TEST(H5Table, InterleavedRowsReadBackAsTheGlobalArray) {
  TempDir tmp;
  const std::int64_t n = 1001;
  const std::vector<std::int64_t> rows = interleaved_rows(n);
  std::vector<double> values;
  std::vector<std::int64_t> ids;
  for (std::int64_t g : rows) {
    for (int c = 0; c < 3; ++c) values.push_back(field_value(g, c, 0));
    ids.push_back(7 * g - 5);
  }
  {
    H5File file = H5File::create(MPI_COMM_WORLD, tmp / "t.h5");
    write_rows(file.id(), "grp/x", rows, n, values, 3);
    write_rows(file.id(), "ids", rows, n, ids, 1);
    // Overwrite in place with other values: the second write wins everywhere.
    for (double& v : values) v = -v;
    write_rows(file.id(), "grp/x", rows, n, values, 3);
    file.close();
  }
  H5File file = H5File::open_read(MPI_COMM_WORLD, tmp / "t.h5");
  int components = 0;
  const std::vector<double> all = read_all_double(file.id(), "grp/x", &components);
  ASSERT_EQ(components, 3);
  ASSERT_EQ(all.size(), static_cast<std::size_t>(3 * n));
  for (std::int64_t g = 0; g < n; ++g)
    for (int c = 0; c < 3; ++c) ASSERT_EQ(all[3 * g + c], -field_value(g, c, 0)) << g << "," << c;
  const std::vector<std::int64_t> all_ids = read_all_int(file.id(), "ids", &components);
  ASSERT_EQ(components, 1);
  for (std::int64_t g = 0; g < n; ++g) ASSERT_EQ(all_ids[g], 7 * g - 5);
  EXPECT_EQ(shape(file.id(), "grp/x"), (std::vector<std::int64_t>{n, 3}));
  EXPECT_EQ(shape(file.id(), "ids"), (std::vector<std::int64_t>{n}));

  // Selected rows in any order, with repeats, different on every rank.
  const std::vector<std::int64_t> wanted{n - 1, 3 + world_rank(), 0, 3 + world_rank(), 500};
  const std::vector<double> picked = read_rows_double(file.id(), "grp/x", wanted, 3);
  for (std::size_t i = 0; i < wanted.size(); ++i)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(picked[3 * i + c], -field_value(wanted[i], c, 0));
  const std::vector<std::int64_t> picked_ids = read_rows_int(file.id(), "ids", wanted, 1);
  for (std::size_t i = 0; i < wanted.size(); ++i) EXPECT_EQ(picked_ids[i], 7 * wanted[i] - 5);
  // Ranks with nothing to read still take part.
  EXPECT_TRUE(read_rows_double(file.id(), "grp/x", {}, 3).empty());
  EXPECT_TRUE(throws_input_error_naming([&] { read_rows_double(file.id(), "grp/x", wanted, 2); }, "t.h5"));
}

TEST(H5Table, IrregularRunsOverwriteExactlyTheirRows) {
  TempDir tmp;
  const std::int64_t n = 5000;
  // Irregular runs of 1..5 rows (hundreds per rank: the pairwise-merged selection), dealt to ranks
  // in turn; rows with g % 4 == 3 are skipped so the selection has gaps on every rank count.
  std::vector<std::int64_t> all_rows = interleaved_rows(n);
  std::vector<std::int64_t> patch_rows;
  int owner = 0;
  for (std::int64_t g = 0; g < n;) {
    const std::int64_t len = 1 + (g * 7 + 3) % 5;
    for (std::int64_t k = 0; k < len && g < n; ++k, ++g)
      if (owner == world_rank() && g % 4 != 3) patch_rows.push_back(g);
    owner = (owner + 1) % world_size();
  }
  std::vector<double> base, patch;
  for (std::int64_t g : all_rows) base.insert(base.end(), {1.0 * g, -1.0 * g});
  for (std::int64_t g : patch_rows) patch.insert(patch.end(), {0.5 * g, 2.0 * g});
  H5File file = H5File::create(MPI_COMM_WORLD, tmp / "f.h5");
  write_rows(file.id(), "x", all_rows, n, base, 2);
  write_rows(file.id(), "x", patch_rows, n, patch, 2);  // same shape: rewritten in place
  const std::vector<double> got = read_all_double(file.id(), "x");
  for (std::int64_t g = 0; g < n; ++g) {
    const bool patched = g % 4 != 3;
    ASSERT_EQ(got[2 * g], patched ? 0.5 * g : 1.0 * g) << g;
    ASSERT_EQ(got[2 * g + 1], patched ? 2.0 * g : -1.0 * g) << g;
  }
  // Distinct rows in descending order come back in the order asked.
  const std::vector<std::int64_t> wanted{4999, 2500, 3, 1};
  const std::vector<double> picked = read_rows_double(file.id(), "x", wanted, 2);
  for (std::size_t i = 0; i < wanted.size(); ++i) EXPECT_EQ(picked[2 * i], got[2 * wanted[i]]);
}

TEST(H5Table, RanksWithoutRowsAndEmptyTables) {
  TempDir tmp;
  const bool last = world_rank() == world_size() - 1;
  std::vector<std::int64_t> rows;
  std::vector<double> values;
  if (last)
    for (std::int64_t g = 0; g < 4; ++g) {
      rows.push_back(g);
      values.push_back(1.5 * g);
    }
  {
    H5File file = H5File::create(MPI_COMM_WORLD, tmp / "t.h5");
    write_rows(file.id(), "only_last", rows, 4, values, 1);
    write_rows(file.id(), "empty", {}, 0, std::span<const double>(), 2);
    write_blocks(file.id(), "no_blocks", std::span<const std::int64_t>(), 2);
  }
  H5File file = H5File::open_read(MPI_COMM_WORLD, tmp / "t.h5");
  EXPECT_EQ(read_all_double(file.id(), "only_last"), (std::vector<double>{0.0, 1.5, 3.0, 4.5}));
  int components = 0;
  EXPECT_TRUE(read_all_double(file.id(), "empty", &components).empty());
  EXPECT_EQ(components, 2);
  EXPECT_EQ(shape(file.id(), "no_blocks"), (std::vector<std::int64_t>{0, 2}));
}

TEST(H5Table, BadRowsThrowOnEveryRank) {
  TempDir tmp;
  H5File file = H5File::create(MPI_COMM_WORLD, tmp / "t.h5");
  // Only the last rank passes descending rows; every rank must throw rather than hang.
  std::vector<std::int64_t> rows;
  std::vector<double> values;
  if (world_rank() == world_size() - 1) {
    rows = {5, 2};
    values = {1.0, 2.0};
  }
  EXPECT_THROW(write_rows(file.id(), "x", rows, 10, values, 1), std::invalid_argument);
  // Ranks disagreeing on the table width.
  std::vector<double> one_row(static_cast<std::size_t>(1 + world_rank() % 2), 0.0);
  if (world_size() > 1) {
    EXPECT_THROW(write_blocks(file.id(), "y", one_row, static_cast<int>(one_row.size())),
                 std::invalid_argument);
  }
}

TEST(H5Table, BlocksFollowRankOrder) {
  TempDir tmp;
  const int r = world_rank();
  // Rank r contributes r+1 rows, except rank 1 which contributes none.
  const int local = r == 1 ? 0 : r + 1;
  std::vector<std::int64_t> pairs;
  std::vector<double> weights;
  for (int k = 0; k < local; ++k) {
    pairs.push_back(r);
    pairs.push_back(k);
    weights.push_back(r + 0.25 * k);
  }
  {
    H5File file = H5File::create(MPI_COMM_WORLD, tmp / "b.h5");
    write_blocks(file.id(), "pairs", pairs, 2);
    write_blocks(file.id(), "weights", weights, 1);
  }
  std::vector<std::int64_t> expected;
  std::vector<double> expected_w;
  for (int q = 0; q < world_size(); ++q)
    for (int k = 0; k < (q == 1 ? 0 : q + 1); ++k) {
      expected.push_back(q);
      expected.push_back(k);
      expected_w.push_back(q + 0.25 * k);
    }
  H5File file = H5File::open_read(MPI_COMM_WORLD, tmp / "b.h5");
  int components = 0;
  EXPECT_EQ(read_all_int(file.id(), "pairs", &components), expected);
  EXPECT_EQ(components, 2);
  EXPECT_EQ(read_all_double(file.id(), "weights"), expected_w);
}

TEST(H5Attributes, ValuesAndLongStringsRoundTrip) {
  TempDir tmp;
  std::string long_text;
  for (std::int64_t i = 0; i < (1 << 20); ++i) long_text.push_back(static_cast<char>(' ' + (i * 7919) % 95));
  const std::string medium(5000, 'm');
  {
    H5File file = H5File::create(MPI_COMM_WORLD, tmp / "a.h5");
    H5Group group = H5Group::create(file.id(), "a/b");
    write_attribute(file.id(), "time", 0.1);
    write_attribute(file.id(), "step", std::int64_t{9007199254740993});  // 2^53 + 1: not a double
    write_attribute(file.id(), "method", "bdem");
    write_attribute(file.id(), "empty", std::string());
    write_attribute(group.id(), "medium", medium);
    write_attribute(group.id(), "replaced", 3.5);
    write_attribute(group.id(), "replaced", "now text");
    write_string(file.id(), "scene", long_text);
    write_string(file.id(), "nothing", "");
    EXPECT_THROW(write_attribute(file.id(), "too_long", long_text), std::invalid_argument);
  }
  H5File file = H5File::open_read(MPI_COMM_WORLD, tmp / "a.h5");
  const hid_t root = file.id();
  EXPECT_EQ(read_attribute_double(root, "time"), 0.1);
  EXPECT_EQ(read_attribute_int(root, "step"), 9007199254740993);
  EXPECT_EQ(read_attribute_string(root, "method"), "bdem");
  EXPECT_EQ(read_attribute_string(root, "empty"), "");
  H5Group group = H5Group::open(root, "a/b");
  EXPECT_EQ(read_attribute_string(group.id(), "medium"), medium);
  EXPECT_EQ(read_attribute_string(group.id(), "replaced"), "now text");
  EXPECT_EQ(read_string(root, "scene"), long_text);
  EXPECT_EQ(read_string(root, "nothing"), "");
  EXPECT_EQ(attribute_names(root), (std::vector<std::string>{"empty", "method", "step", "time"}));
  EXPECT_TRUE(exists(root, "/a/b"));
  EXPECT_TRUE(exists(root, "a"));
  EXPECT_FALSE(exists(root, "a/c/d"));
  EXPECT_EQ(members(root, "/"), (std::vector<std::string>{"a", "nothing", "scene"}));
  // Missing or wrong-kind objects name the file.
  EXPECT_TRUE(throws_input_error_naming([&] { read_attribute_int(root, "absent"); }, "a.h5"));
  EXPECT_TRUE(throws_input_error_naming([&] { read_attribute_int(root, "time"); }, "a.h5"));
  EXPECT_TRUE(throws_input_error_naming([&] { read_all_int(root, "scene"); }, "a.h5"));
  EXPECT_TRUE(throws_input_error_naming([&] { read_all_double(root, "absent"); }, "a.h5:/absent"));
  EXPECT_TRUE(throws_input_error_naming([&] { H5Group::open(root, "x/y"); }, "a.h5"));
}

TEST(H5Tables, AppendAndResizeExtensibleRows) {
  TempDir tmp;
  {
    H5File file = H5File::create(MPI_COMM_WORLD, tmp / "o.h5");
    for (int i = 0; i < 258; ++i) {  // crosses a chunk boundary (256 rows)
      const std::int64_t step = 10 * i;
      append_row(file.id(), "obs/step", std::span<const std::int64_t>(&step, 1));
    }
    for (int i = 0; i < 5; ++i) {
      const std::array<double, 3> row{1.0 * i, 2.0 * i, -1.0 * i};
      append_row(file.id(), "obs/momentum", row);
    }
    resize_rows(file.id(), "obs/momentum", 3);  // a restart drops rows 3 and 4 ...
    append_row(file.id(), "obs/momentum", std::array<double, 3>{7.0, 8.0, 9.0});  // ... and continues
  }
  H5File file = H5File::open_read(MPI_COMM_WORLD, tmp / "o.h5");
  int components = 0;
  EXPECT_EQ(read_all_double(file.id(), "obs/momentum", &components),
            (std::vector<double>{0, 0, 0, 1, 2, -1, 2, 4, -2, 7, 8, 9}));
  EXPECT_EQ(components, 3);
  const std::vector<std::int64_t> steps = read_all_int(file.id(), "obs/step");
  ASSERT_EQ(steps.size(), 258u);
  for (std::size_t i = 0; i < steps.size(); ++i) ASSERT_EQ(steps[i], 10 * static_cast<std::int64_t>(i));
}

TEST(H5Files, MissingAndNonHdf5FilesNameThePath) {
  TempDir tmp;
  const std::string text = tmp / "notes.txt";
  if (world_rank() == 0) std::ofstream(text) << "this is not HDF5\n";
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_TRUE(throws_input_error_naming([&] { H5File::open_read(MPI_COMM_WORLD, text); }, text));
  EXPECT_TRUE(throws_input_error_naming([&] { H5File::open_rw(MPI_COMM_WORLD, tmp / "nope.h5"); },
                                        tmp / "nope.h5"));
  std::ostringstream out;
  EXPECT_TRUE(throws_input_error_naming([&] { print_info(text, out); }, text));
  EXPECT_TRUE(throws_input_error_naming([&] { print_info(tmp / "nope.h5", out); }, tmp / "nope.h5"));
  EXPECT_TRUE(throws_input_error_naming([&] { print_info(tmp.path(), out); }, tmp.path()));
}

// ---------------------------------------------------------------------------------------------
// One frame of a synthetic N-particle system; rank-local fields for interleaved ownership.
struct SyntheticFrame {
  std::vector<std::int64_t> id, bonds;
  std::vector<double> position, quaternion, velocity, angular_velocity, radius;
  FrameFields fields() const {
    return {id, position, quaternion, velocity, angular_velocity, radius, bonds};
  }
};

// Bonds (g, g+1) for g < n-1, plus (g, g+2) for even g; frame 1 loses every bond with g % 5 == 0.
bool bond_intact(std::int64_t g, int frame) { return frame == 0 || g % 5 != 0; }

SyntheticFrame make_frame(std::int64_t n, int frame) {
  SyntheticFrame f;
  f.id = interleaved_rows(n);
  for (std::int64_t g : f.id) {
    for (int c = 0; c < 3; ++c) {
      f.position.push_back(field_value(g, c, frame));
      f.velocity.push_back(field_value(g, c, frame) * 0.5 + 1);
      f.angular_velocity.push_back(-field_value(g, c, frame));
    }
    const double a = 0.01 * g + 0.1 * frame;
    const std::array<double, 4> q{std::sin(a) * 0.6, std::sin(a) * 0.8, 0.0, std::cos(a)};
    f.quaternion.insert(f.quaternion.end(), q.begin(), q.end());
    f.radius.push_back(0.01 + 1e-4 * g);
    if (g + 1 < n && bond_intact(g, frame)) f.bonds.insert(f.bonds.end(), {g, g + 1});
    if (g % 2 == 0 && g + 2 < n && bond_intact(g, frame)) f.bonds.insert(f.bonds.end(), {g, g + 2});
  }
  return f;
}

std::set<std::pair<std::int64_t, std::int64_t>> expected_bonds(std::int64_t n, int frame) {
  std::set<std::pair<std::int64_t, std::int64_t>> s;
  for (std::int64_t g = 0; g < n; ++g) {
    if (g + 1 < n && bond_intact(g, frame)) s.insert({g, g + 1});
    if (g % 2 == 0 && g + 2 < n && bond_intact(g, frame)) s.insert({g, g + 2});
  }
  return s;
}

FrameObservables make_observables(long step, int frame) {
  FrameObservables o;
  o.step = step;
  o.time = 1e-3 * step;
  o.kinetic = 1.25 + frame;
  o.potential = -0.5 * frame;
  o.total = o.kinetic + o.potential;
  o.momentum = {0.1 * frame, 0.2, 0.3};
  o.angular_momentum = {-1.0, 0.0, 2.0 * frame};
  o.bonds_broken = 3 * frame;
  o.contacts = 11 + frame;
  return o;
}

// Frame group `index` holds make_frame(n, frame) written by interleaved owners.
void check_frame(hid_t file, int index, int frame, std::int64_t n) {
  const std::string g = "frames/" + TrajectoryWriter::frame_name(index);
  H5Group group = H5Group::open(file, g);
  int c = 0;
  const std::vector<double> pos = read_all_double(group.id(), "position", &c);
  ASSERT_EQ(c, 3);
  const std::vector<double> vel = read_all_double(group.id(), "velocity");
  const std::vector<double> omega = read_all_double(group.id(), "angular_velocity");
  const std::vector<double> quat = read_all_double(group.id(), "quaternion", &c);
  ASSERT_EQ(c, 4);
  const std::vector<double> radius = read_all_double(group.id(), "radius");
  const std::vector<std::int64_t> id = read_all_int(group.id(), "id");
  ASSERT_EQ(pos.size(), static_cast<std::size_t>(3 * n));
  ASSERT_EQ(id.size(), static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(id[i], i);
    for (int k = 0; k < 3; ++k) {
      ASSERT_EQ(pos[3 * i + k], field_value(i, k, frame));
      ASSERT_EQ(vel[3 * i + k], field_value(i, k, frame) * 0.5 + 1);
      ASSERT_EQ(omega[3 * i + k], -field_value(i, k, frame));
    }
    const double a = 0.01 * i + 0.1 * frame;
    ASSERT_EQ(quat[4 * i + 0], std::sin(a) * 0.6);
    ASSERT_EQ(quat[4 * i + 3], std::cos(a));
    ASSERT_EQ(radius[i], 0.01 + 1e-4 * i);
  }
  const std::vector<std::int64_t> bonds = read_all_int(group.id(), "bonds", &c);
  ASSERT_EQ(c, 2);
  std::set<std::pair<std::int64_t, std::int64_t>> got;
  for (std::size_t k = 0; k < bonds.size(); k += 2) got.insert({bonds[k], bonds[k + 1]});
  EXPECT_EQ(got.size(), bonds.size() / 2);  // no duplicates
  EXPECT_EQ(got, expected_bonds(n, frame));
}

TEST(Trajectory, TwoFramesWithInterleavedOwnershipReadBack) {
  TempDir tmp;
  const std::int64_t n = 100;
  {
    TrajectoryWriter writer(MPI_COMM_WORLD, tmp / "out", n);
    EXPECT_EQ(writer.frames(), 0);
    writer.write_frame(make_observables(0, 0), make_frame(n, 0).fields());
    SyntheticFrame f1 = make_frame(n, 1);
    writer.write_frame(make_observables(25, 1), f1.fields());
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
      writer.write_frame(make_observables(10 * k, k % 2), make_frame(n, k % 2).fields());
    }
  }
  {
    TrajectoryWriter writer(MPI_COMM_WORLD, tmp / "counted", n, /*resume_step=*/15);
    writer.set_effort({7.0, 4, 40});
    writer.write_frame(make_observables(20, 0), make_frame(n, 0).fields());
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
    writer.write_frame(make_observables(0, 0), make_frame(n, 0).fields());
    writer.write_frame(make_observables(10, 1), make_frame(n, 1).fields());  // no effort set: no row
    writer.set_effort({2.0, 5, 6});
    writer.write_frame(make_observables(20, 0), make_frame(n, 0).fields());
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
    for (int k = 0; k < 4; ++k) writer.write_frame(make_observables(10 * k, k % 2), make_frame(n, k % 2).fields());
  }
  {
    TrajectoryWriter writer(MPI_COMM_WORLD, tmp / "out", n, /*resume_step=*/15);
    EXPECT_EQ(writer.frames(), 2);
    writer.write_frame(make_observables(17, 0), make_frame(n, 0).fields());
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

// ----- a minimal XML reader, enough to check the .xdmf is well formed and says the right things
struct XmlNode {
  std::string name;
  std::map<std::string, std::string> attributes;
  std::vector<XmlNode> children;
  std::string text;
};

class XmlReader {
 public:
  explicit XmlReader(std::string text) : s_(std::move(text)) {}
  XmlNode document() {
    skip_prolog();
    XmlNode root = element();
    skip_space();
    if (pos_ != s_.size()) throw std::runtime_error("content after the root element");
    return root;
  }

 private:
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  void skip_prolog() {
    for (;;) {
      skip_space();
      if (s_.compare(pos_, 2, "<?") == 0) {
        pos_ = s_.find("?>", pos_);
        if (pos_ == std::string::npos) throw std::runtime_error("unterminated <?");
        pos_ += 2;
      } else if (s_.compare(pos_, 2, "<!") == 0) {
        pos_ = s_.find('>', pos_);
        if (pos_ == std::string::npos) throw std::runtime_error("unterminated <!");
        pos_ += 1;
      } else {
        return;
      }
    }
  }
  std::string name() {
    const std::size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    if (pos_ == start) throw std::runtime_error("expected a name at " + std::to_string(pos_));
    return s_.substr(start, pos_ - start);
  }
  XmlNode element() {
    if (s_[pos_] != '<') throw std::runtime_error("expected <");
    ++pos_;
    XmlNode node;
    node.name = name();
    for (;;) {
      skip_space();
      if (s_.compare(pos_, 2, "/>") == 0) {
        pos_ += 2;
        return node;
      }
      if (s_[pos_] == '>') {
        ++pos_;
        break;
      }
      const std::string key = name();
      if (s_[pos_] != '=' || s_[pos_ + 1] != '"') throw std::runtime_error("bad attribute " + key);
      const std::size_t end = s_.find('"', pos_ + 2);
      if (!node.attributes.emplace(key, s_.substr(pos_ + 2, end - pos_ - 2)).second)
        throw std::runtime_error("duplicate attribute " + key);
      pos_ = end + 1;
    }
    for (;;) {
      const std::size_t lt = s_.find('<', pos_);
      if (lt == std::string::npos) throw std::runtime_error("unclosed <" + node.name + ">");
      node.text += s_.substr(pos_, lt - pos_);
      pos_ = lt;
      if (s_.compare(pos_, 2, "</") == 0) {
        pos_ += 2;
        if (name() != node.name || s_[pos_] != '>') throw std::runtime_error("mismatched </" + node.name + ">");
        ++pos_;
        node.text.erase(0, node.text.find_first_not_of(" \n"));
        node.text.erase(node.text.find_last_not_of(" \n") + 1);
        return node;
      }
      node.children.push_back(element());
    }
  }
  std::string s_;
  std::size_t pos_ = 0;
};

std::vector<const XmlNode*> children_named(const XmlNode& node, const std::string& name) {
  std::vector<const XmlNode*> out;
  for (const XmlNode& c : node.children)
    if (c.name == name) out.push_back(&c);
  return out;
}

// Every DataItem names an existing dataset of trajectory.h5 whose shape equals its Dimensions.
void check_data_items(const XmlNode& node, hid_t file, int* count) {
  if (node.name == "DataItem") {
    ++*count;
    EXPECT_EQ(node.attributes.at("Format"), "HDF");
    const std::string prefix = "trajectory.h5:";
    ASSERT_EQ(node.text.compare(0, prefix.size(), prefix), 0) << node.text;
    const std::string dataset = node.text.substr(prefix.size());
    ASSERT_TRUE(exists(file, dataset)) << dataset;
    std::string dims;
    for (std::int64_t d : shape(file, dataset)) dims += (dims.empty() ? "" : " ") + std::to_string(d);
    EXPECT_EQ(node.attributes.at("Dimensions"), dims) << dataset;
  }
  for (const XmlNode& c : node.children) check_data_items(c, file, count);
}

TEST(Trajectory, XdmfIsWellFormedAndNamesTheRightCounts) {
  TempDir tmp;
  const std::int64_t n = 100;
  std::vector<std::int64_t> bonds_per_frame;
  {
    TrajectoryWriter writer(MPI_COMM_WORLD, tmp / "out", n);
    writer.write_frame(make_observables(0, 0), make_frame(n, 0).fields());
    writer.write_frame(make_observables(5, 1), make_frame(n, 1).fields());
    SyntheticFrame broken = make_frame(n, 1);
    broken.bonds.clear();  // all bonds broken: no bonds grid
    writer.write_frame(make_observables(9, 1), broken.fields());
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
    for (int k = 0; k < 5; ++k) writer.write_frame(make_observables(10 * k, k % 2), make_frame(n, k % 2).fields());
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
    writer.write_frame(make_observables(3, 0), make_frame(n, 0).fields());
    writer.write_frame(make_observables(8, 1), (std::string(name) == "c" ? perturbed : base).fields());
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
