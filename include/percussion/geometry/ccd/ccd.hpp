#pragma once
// Conservative continuous collision detection for linear trajectories over t in [0, 1] (vertices move from their
// position at t0 to their position at t1 along straight lines). Inclusion-based root finding on the (t, u, v)
// parameter domain with a floating-point error bound (Tight-Inclusion style, Wang et al. 2021): a query whose exact
// trajectories come within `min_distance` (in the infinity norm, so also in the Euclidean one) is never reported
// as a miss; a reported hit may be a near miss within about min_distance + 3 tolerance, or a query the search
// gave up on (max_boxes, or its fixed queue full: degenerate near misses), with a valid but looser time bound.
// No allocation: the search's box queue lives on the stack.
#include <Eigen/Core>

namespace percussion::geometry {

struct CcdOptions {
  double min_distance = 0.0;  // report a hit when the primitives may come this close (negative counts as 0)
  double tolerance = 1e-6;    // distance resolution of the search (absolute, the coordinates' unit)
  int max_boxes = 100000;     // boxes examined before giving up with a (conservative) hit
};

struct CcdResult {
  bool hit = false;  // the primitives may come within min_distance during the step
  double toi = 1.0;  // a time before which they certainly stay farther apart than min_distance; 1 without a hit
  int boxes = 0;     // parameter boxes examined
};

// Vertex p against the triangle (a, b, c); *0 at t = 0, *1 at t = 1.
CcdResult vertex_face_ccd(const Eigen::Vector3d& p0, const Eigen::Vector3d& a0, const Eigen::Vector3d& b0,
                          const Eigen::Vector3d& c0, const Eigen::Vector3d& p1, const Eigen::Vector3d& a1,
                          const Eigen::Vector3d& b1, const Eigen::Vector3d& c1, const CcdOptions& options = {});

// Edge (a, b) against edge (c, d).
CcdResult edge_edge_ccd(const Eigen::Vector3d& a0, const Eigen::Vector3d& b0, const Eigen::Vector3d& c0,
                        const Eigen::Vector3d& d0, const Eigen::Vector3d& a1, const Eigen::Vector3d& b1,
                        const Eigen::Vector3d& c1, const Eigen::Vector3d& d1, const CcdOptions& options = {});

// 2D: point p against the edge (a, b).
CcdResult point_edge_ccd(const Eigen::Vector2d& p0, const Eigen::Vector2d& a0, const Eigen::Vector2d& b0,
                         const Eigen::Vector2d& p1, const Eigen::Vector2d& a1, const Eigen::Vector2d& b1,
                         const CcdOptions& options = {});

}  // namespace percussion::geometry
