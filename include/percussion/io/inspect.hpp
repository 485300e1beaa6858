#pragma once
// `percussion info` and `percussion compare`: read-only looks at output files, serial (the calling
// rank opens the file on MPI_COMM_SELF).
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace percussion::io {

// What the file is (trajectory summary, or checkpoint root attributes), then its tree: groups,
// datasets with shape and type, attributes (frame groups between the first and last are skipped).
// Missing or non-HDF5 file → InputError naming the path.
void print_info(const std::string& path, std::ostream& out);

// One kind of a frame (particles, mesh vertices, rigid bodies) in both files.
struct KindDifference {
  std::string kind;
  std::int64_t rows = 0;
  double position = 0.0, velocity = 0.0;
  double quaternion = -1.0;  // −1 where the kind has none (mesh vertices)
};

struct CompareResult {
  double max_rel_position = 0.0;    // max_i |x_a - x_b| / max_i |x_a|, the largest over the kinds
  double max_rel_velocity = 0.0;    // likewise with velocities
  double max_rel_quaternion = 0.0;  // likewise, with q and -q treated as the same rotation
  std::vector<KindDifference> kinds;
  std::int64_t bonds_a = 0;
  std::int64_t bonds_b = 0;
  std::int64_t bonds_only_in_one = 0;  // size of the symmetric difference of the bond sets
  long step_a = 0;
  long step_b = 0;
};

// Last frame of two trajectory.h5 files, every kind it holds (particles, mesh, bodies). Norms are per row
// (Euclidean); a zero denominator makes the measure absolute. Files with different kinds or row counts → InputError.
CompareResult compare_last_frames(const std::string& a, const std::string& b);

}  // namespace percussion::io
