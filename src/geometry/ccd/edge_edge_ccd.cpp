// Edge-edge CCD: F(t, u, v) = (a(t) + u (b(t) - a(t))) - (c(t) + v (d(t) - c(t))), u, v in [0, 1].
#include <cmath>

#include "inclusion_solver.hpp"
#include "percussion/geometry/ccd/ccd.hpp"

namespace percussion::geometry {
namespace {

struct EdgeEdge : ccd_detail::QueryData<4, 3, 3> {
  // corners() evaluates F in the order error_bound() counts (no reordering, no shared rounding).
  bool outside(const ccd_detail::Box&) const { return false; }

  void corners(const ccd_detail::Box& b, double f[8][3]) const {
    for (int s = 0; s < 2; ++s) {
      const double t = s ? b.hi[0] : b.lo[0];
      for (int i = 0; i < 3; ++i) {
        const double a = x0[0][i] + t * dx[0][i];
        const double ea = (x0[1][i] + t * dx[1][i]) - a;
        const double c = x0[2][i] + t * dx[2][i];
        const double ec = (x0[3][i] + t * dx[3][i]) - c;
        const double pa[2] = {a + b.lo[1] * ea, a + b.hi[1] * ea};
        const double pc[2] = {c + b.lo[2] * ec, c + b.hi[2] * ec};
        for (int su = 0; su < 2; ++su)
          for (int sv = 0; sv < 2; ++sv) f[4 * s + 2 * su + sv][i] = pa[su] - pc[sv];
      }
    }
  }

  // At the box's middle time: the common normal of the edges and each edge's normal in their common plane.
  int directions(const ccd_detail::Box& b, double n[4][3]) const {
    const double t = 0.5 * (b.lo[0] + b.hi[0]);
    double ea[3], ec[3];
    for (int i = 0; i < 3; ++i) {
      ea[i] = x0[1][i] + t * dx[1][i] - (x0[0][i] + t * dx[0][i]);
      ec[i] = x0[3][i] + t * dx[3][i] - (x0[2][i] + t * dx[2][i]);
    }
    ccd_detail::cross(ea, ec, n[0]);
    ccd_detail::cross(n[0], ea, n[1]);
    ccd_detail::cross(n[0], ec, n[2]);
    return 3;
  }
};

}  // namespace

CcdResult edge_edge_ccd(const Eigen::Vector3d& a0, const Eigen::Vector3d& b0, const Eigen::Vector3d& c0,
                        const Eigen::Vector3d& d0, const Eigen::Vector3d& a1, const Eigen::Vector3d& b1,
                        const Eigen::Vector3d& c1, const Eigen::Vector3d& d1, const CcdOptions& options) {
  EdgeEdge q;
  const Eigen::Vector3d* start[4] = {&a0, &b0, &c0, &d0};
  const Eigen::Vector3d* end[4] = {&a1, &b1, &c1, &d1};
  double rate_t;
  if (!ccd_detail::load(q, start, end, options, rate_t)) return {true, 0.0, 0};
  q.tolerance[0] = ccd_detail::parameter_tolerance(options.tolerance, rate_t);
  q.tolerance[1] = ccd_detail::parameter_tolerance(options.tolerance, ccd_detail::edge_rate(a0, b0, a1, b1));
  q.tolerance[2] = ccd_detail::parameter_tolerance(options.tolerance, ccd_detail::edge_rate(c0, d0, c1, d1));
  return ccd_detail::solve(q, options);
}

}  // namespace percussion::geometry
