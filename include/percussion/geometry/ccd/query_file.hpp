#pragma once
// CCD-Query-IO files (the CCD benchmark of Wang et al. 2021): 8 rows per query, the 4 vertices at t = 0 then the
// same 4 at t = 1 (vertex-face: the vertex, then the face's 3; edge-edge: edge a, then edge b); 7 integer columns
// per row: numerator and denominator of x, y, z, then the ground truth 0/1 (the same on the query's 8 rows).
#include <array>
#include <string>
#include <vector>

#include <Eigen/Core>

namespace percussion::geometry {

struct CcdQuery {
  std::array<Eigen::Vector3d, 8> x;  // each coordinate the double nearest the file's rational
  bool truth = false;
  long line = 0;  // the query's first line in the file
};

// Throws InputError "PATH: line N: what" on a missing file or a malformed row.
std::vector<CcdQuery> read_ccd_queries(const std::string& path);

// The double nearest to num/den (ties to even), for decimal integers of any length; den != 0.
double nearest_double(const std::string& num, const std::string& den);

}  // namespace percussion::geometry
