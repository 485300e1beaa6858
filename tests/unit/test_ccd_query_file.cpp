// CCD-Query-IO files: rationals of any length rounded to the nearest double, and malformed files rejected with
// the file and line.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "percussion/core/error.hpp"
#include "percussion/geometry/ccd/query_file.hpp"

namespace test_ccd_query_file {

using namespace percussion;
using geometry::nearest_double;

TEST(CcdQueryFile, NearestDouble) {
  EXPECT_EQ(nearest_double("1", "3"), 1.0 / 3.0);
  EXPECT_EQ(nearest_double("-1", "3"), -1.0 / 3.0);
  EXPECT_EQ(nearest_double("2", "-3"), -2.0 / 3.0);
  EXPECT_EQ(nearest_double("0", "-7"), 0.0);
  EXPECT_EQ(nearest_double("1", "10"), 0.1);
  // Beyond 64 bits.
  EXPECT_EQ(nearest_double("3" + std::string(40, '0'), "1" + std::string(40, '0')), 3.0);
  EXPECT_EQ(nearest_double("1", "1" + std::string(30, '0')), 1e-30);
  // Ties go to even: 2^53 + 1 -> 2^53, 2^53 + 3 -> 2^53 + 4; just above a tie rounds up.
  EXPECT_EQ(nearest_double("9007199254740993", "1"), 9007199254740992.0);
  EXPECT_EQ(nearest_double("9007199254740995", "1"), 9007199254740996.0);
  EXPECT_EQ(nearest_double("90071992547409930000000000000000001", "10000000000000000000"), 9007199254740994.0);
  // Long decimals against the C library's correctly rounded strtod.
  std::mt19937_64 rng(5);
  for (int k = 0; k < 2000; ++k) {
    std::string digits = std::to_string(1 + rng() % 9);
    const int length = 10 + static_cast<int>(rng() % 30);
    while (static_cast<int>(digits.size()) < length) digits += static_cast<char>('0' + rng() % 10);
    const int scale = static_cast<int>(rng() % 60);
    const std::string decimal = digits + "e-" + std::to_string(scale);
    EXPECT_EQ(nearest_double(digits, "1" + std::string(scale, '0')), std::strtod(decimal.c_str(), nullptr)) << decimal;
  }
  EXPECT_THROW(nearest_double("1", "0"), std::invalid_argument);
  EXPECT_THROW(nearest_double("1.5", "2"), std::invalid_argument);
}

namespace {

std::string write(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("percussion_ccd_" + name + ".csv");
  std::ofstream(path) << text;
  return path.string();
}

std::string rows(int n, const std::string& row = "1,2,-3,4,5,1,1\n") {
  std::string s;
  for (int i = 0; i < n; ++i) s += row;
  return s;
}

void expect_error(const std::string& path, const std::string& message) {
  try {
    geometry::read_ccd_queries(path);
    ADD_FAILURE() << "no error for " << path;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(CcdQueryFile, ReadsQueries) {
  const std::string path = write("good", rows(8) + rows(8, " 0 , 1 , 0 , 1 , 7 , 2 , 0 \n"));
  const auto q = geometry::read_ccd_queries(path);
  ASSERT_EQ(q.size(), 2u);
  EXPECT_TRUE(q[0].truth);
  EXPECT_FALSE(q[1].truth);
  EXPECT_EQ(q[0].x[5], Eigen::Vector3d(0.5, -0.75, 5.0));
  EXPECT_EQ(q[1].x[7], Eigen::Vector3d(0, 0, 3.5));
  EXPECT_EQ(q[1].line, 9);
  std::filesystem::remove(path);
}

TEST(CcdQueryFile, RejectsMalformedFiles) {
  expect_error("/nonexistent/q.csv", "/nonexistent/q.csv: cannot read file");
  std::string p = write("columns", rows(3) + "1,2,3,4,5,6\n" + rows(4));
  expect_error(p, p + ": line 4: expected 7 comma-separated integers, got 6 columns");
  p = write("zero", rows(5) + "1,2,3,0,5,6,1\n" + rows(2));
  expect_error(p, p + ": line 6: column 4: zero denominator");
  p = write("count", rows(9));
  expect_error(p, p + ": line 9: 9 rows, not a multiple of 8");
  p = write("text", rows(2) + "1,2,x,4,5,6,1\n" + rows(5));
  expect_error(p, p + ": line 3: column 3: not an integer: 'x'");
  p = write("truth", rows(7) + "1,2,3,4,5,6,0\n");
  expect_error(p, p + ": line 8: ground truth differs from the query's first row (line 1)");
  p = write("label", rows(7) + "1,2,3,4,5,6,2\n");
  expect_error(p, p + ": line 8: column 7: ground truth must be 0 or 1");
  for (const char* name : {"columns", "zero", "count", "text", "truth", "label"})
    std::filesystem::remove(std::filesystem::temp_directory_path() / (std::string("percussion_ccd_") + name + ".csv"));
}

}  // namespace test_ccd_query_file
