// Parallel HDF5 primitives: tables written by interleaved owners, blocks, attributes, strings, extensible rows,
// files that are missing or not HDF5. Runs at 1, 2 and 3 ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "percussion/io/h5file.hpp"
#include "percussion/io/inspect.hpp"

#include "../support/io_test_support.hpp"

namespace mpi_io_h5 {

namespace {

using namespace percussion::test;
using percussion::InputError;

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

}  // namespace

}  // namespace mpi_io_h5
