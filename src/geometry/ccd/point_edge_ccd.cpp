// 2D point-edge CCD: F(t, u) = p(t) - (a(t) + u (b(t) - a(t))), u in [0, 1].
#include <cmath>

#include "inclusion_solver.hpp"
#include "percussion/geometry/ccd/ccd.hpp"

namespace percussion::geometry {
namespace {

struct PointEdge : ccd_detail::QueryData<3, 2, 2> {
  // corners() evaluates F in the order error_bound() counts (no reordering, no shared rounding).
  bool outside(const ccd_detail::Box&) const { return false; }

  void corners(const ccd_detail::Box& b, double f[4][2]) const {
    for (int s = 0; s < 2; ++s) {
      const double t = s ? b.hi[0] : b.lo[0];
      for (int i = 0; i < 2; ++i) {
        const double p = x0[0][i] + t * dx[0][i];
        const double a = x0[1][i] + t * dx[1][i];
        const double e = (x0[2][i] + t * dx[2][i]) - a;
        for (int su = 0; su < 2; ++su) f[2 * s + su][i] = p - (a + (su ? b.hi[1] : b.lo[1]) * e);
      }
    }
  }

  // At the box's middle time: the edge's normal and its direction (which separates collinear near misses).
  int directions(const ccd_detail::Box& b, double n[4][2]) const {
    const double t = 0.5 * (b.lo[0] + b.hi[0]);
    for (int i = 0; i < 2; ++i) n[1][i] = x0[2][i] + t * dx[2][i] - (x0[1][i] + t * dx[1][i]);
    n[0][0] = -n[1][1];
    n[0][1] = n[1][0];
    return 2;
  }
};

}  // namespace

CcdResult point_edge_ccd(const Eigen::Vector2d& p0, const Eigen::Vector2d& a0, const Eigen::Vector2d& b0,
                         const Eigen::Vector2d& p1, const Eigen::Vector2d& a1, const Eigen::Vector2d& b1,
                         const CcdOptions& options) {
  PointEdge q;
  const Eigen::Vector2d* start[3] = {&p0, &a0, &b0};
  const Eigen::Vector2d* end[3] = {&p1, &a1, &b1};
  double rate_t;
  if (!ccd_detail::load(q, start, end, options, rate_t)) return {true, 0.0, 0};
  q.tolerance[0] = ccd_detail::parameter_tolerance(options.tolerance, rate_t);
  q.tolerance[1] = ccd_detail::parameter_tolerance(options.tolerance, ccd_detail::edge_rate(a0, b0, a1, b1));
  return ccd_detail::solve(q, options);
}

}  // namespace percussion::geometry
