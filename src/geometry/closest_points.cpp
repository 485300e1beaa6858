// Closest points by region: the triangle's vertex, edge or face region that holds p; the segments' clamped
// parameters (Ericson, Real-Time Collision Detection, §5.1.5 and §5.1.9).
#include "percussion/geometry/closest_points.hpp"

#include <algorithm>

namespace percussion::geometry {

namespace {

double clamp01(double x) { return std::clamp(x, 0.0, 1.0); }

// The closest point of a segment (possibly a point) to p, as the parameter along it.
double segment_parameter(const Eigen::Vector3d& p, const Eigen::Vector3d& a, const Eigen::Vector3d& b) {
  const Eigen::Vector3d e = b - a;
  const double ee = e.squaredNorm();
  return ee > 0 ? clamp01((p - a).dot(e) / ee) : 0.0;
}

}  // namespace

std::array<double, 3> point_triangle_closest(const Eigen::Vector3d& p, const Eigen::Vector3d& t0,
                                             const Eigen::Vector3d& t1, const Eigen::Vector3d& t2) {
  const Eigen::Vector3d ab = t1 - t0, ac = t2 - t0, ap = p - t0;
  const double d1 = ab.dot(ap), d2 = ac.dot(ap);
  if (d1 <= 0 && d2 <= 0) return {1, 0, 0};
  const Eigen::Vector3d bp = p - t1;
  const double d3 = ab.dot(bp), d4 = ac.dot(bp);
  if (d3 >= 0 && d4 <= d3) return {0, 1, 0};
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0 && d1 - d3 > 0) {
    const double v = d1 / (d1 - d3);
    return {1 - v, v, 0};
  }
  const Eigen::Vector3d cp = p - t2;
  const double d5 = ab.dot(cp), d6 = ac.dot(cp);
  if (d6 >= 0 && d5 <= d6) return {0, 0, 1};
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0 && d2 - d6 > 0) {
    const double w = d2 / (d2 - d6);
    return {1 - w, 0, w};
  }
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0 && (d4 - d3) + (d5 - d6) > 0) {
    const double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    return {0, 1 - w, w};
  }
  const double sum = va + vb + vc;
  if (sum > 0) return {va / sum, vb / sum, vc / sum};
  // A degenerate triangle: the nearest of its edges.
  std::array<double, 3> best{1, 0, 0};
  double best_distance = (p - t0).squaredNorm();
  const Eigen::Vector3d* t[3] = {&t0, &t1, &t2};
  for (int i = 0; i < 3; ++i) {
    const int j = (i + 1) % 3;
    const double s = segment_parameter(p, *t[i], *t[j]);
    const double d = (p - ((1 - s) * *t[i] + s * *t[j])).squaredNorm();
    if (d < best_distance) {
      best_distance = d;
      best = {0, 0, 0};
      best[i] = 1 - s;
      best[j] = s;
    }
  }
  return best;
}

std::array<double, 2> segment_segment_closest(const Eigen::Vector3d& a0, const Eigen::Vector3d& a1,
                                              const Eigen::Vector3d& b0, const Eigen::Vector3d& b1) {
  const Eigen::Vector3d d1 = a1 - a0, d2 = b1 - b0, r = a0 - b0;
  const double a = d1.squaredNorm(), e = d2.squaredNorm(), f = d2.dot(r);
  if (a <= 0 && e <= 0) return {0, 0};
  if (a <= 0) return {0, clamp01(f / e)};
  const double c = d1.dot(r);
  if (e <= 0) return {clamp01(-c / a), 0};
  const double b = d1.dot(d2), denom = a * e - b * b;
  // Parallel segments (denominator 0, or lost to cancellation) take s = 0 and the t it implies.
  double s = denom > 1e-14 * a * e ? clamp01((b * f - c * e) / denom) : 0.0;
  double t = (b * s + f) / e;
  if (t < 0) {
    t = 0;
    s = clamp01(-c / a);
  } else if (t > 1) {
    t = 1;
    s = clamp01((b - c) / a);
  }
  return {s, t};
}

}  // namespace percussion::geometry
