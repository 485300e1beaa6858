// Vertex-face CCD: F(t, u, v) = p(t) - (a(t) + u (b(t) - a(t)) + v (c(t) - a(t))), u, v >= 0, u + v <= 1.
#include <cmath>

#include "inclusion_solver.hpp"
#include "percussion/geometry/ccd/ccd.hpp"

namespace percussion::geometry {
namespace {

struct VertexFace : ccd_detail::QueryData<4, 3, 3> {
  // corners() evaluates F in the order error_bound() counts (no reordering, no shared rounding).
  bool outside(const ccd_detail::Box& b) const { return b.lo[1] + b.lo[2] > 1.0; }

  void corners(const ccd_detail::Box& b, double f[8][3]) const {
    for (int s = 0; s < 2; ++s) {
      const double t = s ? b.hi[0] : b.lo[0];
      for (int i = 0; i < 3; ++i) {
        const double p = x0[0][i] + t * dx[0][i];
        const double a = x0[1][i] + t * dx[1][i];
        const double e1 = (x0[2][i] + t * dx[2][i]) - a;
        const double e2 = (x0[3][i] + t * dx[3][i]) - a;
        for (int su = 0; su < 2; ++su) {
          const double au = a + (su ? b.hi[1] : b.lo[1]) * e1;
          for (int sv = 0; sv < 2; ++sv) f[4 * s + 2 * su + sv][i] = p - (au + (sv ? b.hi[2] : b.lo[2]) * e2);
        }
      }
    }
  }

  // At the box's middle time: the face normal and the normals of the three edges in the face's plane.
  int directions(const ccd_detail::Box& b, double n[4][3]) const {
    const double t = 0.5 * (b.lo[0] + b.hi[0]);
    double e[3][3];  // b - a, c - b, a - c
    for (int i = 0; i < 3; ++i) {
      const double a = x0[1][i] + t * dx[1][i], bb = x0[2][i] + t * dx[2][i], c = x0[3][i] + t * dx[3][i];
      e[0][i] = bb - a, e[1][i] = c - bb, e[2][i] = a - c;
    }
    ccd_detail::cross(e[0], e[1], n[0]);
    for (int k = 0; k < 3; ++k) ccd_detail::cross(n[0], e[k], n[k + 1]);
    return 4;
  }
};

}  // namespace

CcdResult vertex_face_ccd(const Eigen::Vector3d& p0, const Eigen::Vector3d& a0, const Eigen::Vector3d& b0,
                          const Eigen::Vector3d& c0, const Eigen::Vector3d& p1, const Eigen::Vector3d& a1,
                          const Eigen::Vector3d& b1, const Eigen::Vector3d& c1, const CcdOptions& options) {
  VertexFace q;
  const Eigen::Vector3d* start[4] = {&p0, &a0, &b0, &c0};
  const Eigen::Vector3d* end[4] = {&p1, &a1, &b1, &c1};
  double rate_t;
  if (!ccd_detail::load(q, start, end, options, rate_t)) return {true, 0.0, 0};
  q.tolerance[0] = ccd_detail::parameter_tolerance(options.tolerance, rate_t);
  q.tolerance[1] = ccd_detail::parameter_tolerance(options.tolerance, ccd_detail::edge_rate(a0, b0, a1, b1));
  q.tolerance[2] = ccd_detail::parameter_tolerance(options.tolerance, ccd_detail::edge_rate(a0, c0, a1, c1));
  return ccd_detail::solve(q, options);
}

}  // namespace percussion::geometry
