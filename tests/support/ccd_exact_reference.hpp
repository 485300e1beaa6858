#pragma once
// An exact (GMP rational) reference for CCD queries, for the tests and the CCD bench only. A query's doubles are
// exact rationals; the reference certifies a miss (every parameter box excluded by exact corner bounds of the
// multilinear F) or a hit (a sign change of the coplanarity polynomial over a rational time interval on which
// interval arithmetic proves the contact point strictly inside both primitives, or an exact zero at a sampled
// time), and otherwise says it does not know.
#include <array>
#include <string>

#include <Eigen/Core>

namespace percussion::testing {

enum class CcdKind { VertexFace, EdgeEdge, PointEdge2D };

// x[0..3] at t = 0, x[4..7] at t = 1, as in a CCD-Query-IO file (vertex-face: p, a, b, c; edge-edge: a, b, c, d).
// Point-edge 2D: p, a, b in x[0..2] and x[4..6], z = 0; x[3] and x[7] unused.
struct CcdCase {
  CcdKind kind = CcdKind::VertexFace;
  std::array<Eigen::Vector3d, 8> x;
  bool truth = false;
  std::string name;
};

enum class ExactVerdict { Miss, Hit, Unknown };

struct ExactOptions {
  int miss_boxes = 20000;  // boxes the miss certificate may examine
  int samples = 64;        // times sampled for sign changes of the coplanarity polynomial
  int refine = 40;         // bisections of a sign-change interval before the interval test
};

ExactVerdict exact_ccd(const CcdCase& query, const ExactOptions& options = {});

}  // namespace percussion::testing
