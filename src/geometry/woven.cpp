#include "percussion/geometry/woven.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "percussion/core/error.hpp"
#include "percussion/core/json_checker.hpp"

namespace percussion::geometry {

namespace {

// Crimp height of a yarn at offset x from a crossing where it is on top.
double crimp(double r, double s, double x) { return r * std::cos(std::numbers::pi * x / s); }

// The point on the crimp curve at chord distance 2r beyond offset x0. Squared chord length grows
// monotonically with x (the slope is below π/4 for s >= 4r), and it is >= 4r² at x0 + 2r: bisection.
double next_on_curve(double r, double s, double x0) {
  const double z0 = crimp(r, s, x0);
  double lo = x0, hi = x0 + 2.0 * r;
  for (int it = 0; it < 200 && lo < hi; ++it) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    const double dz = crimp(r, s, mid) - z0;
    if ((mid - x0) * (mid - x0) + dz * dz < 4.0 * r * r) lo = mid; else hi = mid;
  }
  return 0.5 * (lo + hi);
}

// Offset reached after n chords of 2r from a crossing, on the crimp curve of spacing s.
double walk(double r, double s, int n) {
  double x = 0.0;
  for (int k = 0; k < n; ++k) x = next_on_curve(r, s, x);
  return x;
}

// The spacing at which n chords of 2r end exactly on the next crossing. walk(s) - s changes sign on
// [2r(n-1), 2rn] for n >= 2: each chord covers less than 2r along the yarn, and at least 2r / √(1 + (πr/s)²).
double spacing_for(double r, int n) {
  double lo = 2.0 * r * (n - 1), hi = 2.0 * r * n;
  for (int it = 0; it < 200 && lo < hi; ++it) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    if (walk(r, mid, n) > mid) lo = mid; else hi = mid;
  }
  return 0.5 * (lo + hi);
}

// Crossings that fit in one direction (centres from r to length - r), as a double so that huge counts can be
// rejected before they are converted.
double crossings(double length, double r, double s) { return std::floor((length - 2.0 * r) / s * (1.0 + 1e-12)) + 1; }

std::string fmt(double v) { return JsonChecker::format_number(v); }

}  // namespace

WovenLayout woven_layout(const Generator& g) {
  const double r = g.particle_radius;
  if (!(r > 0.0) || !std::isfinite(r)) throw InputError("woven: particle_radius must be a positive finite number");
  if (!(g.spacing >= 4.0 * r) || !(g.spacing <= 1000.0 * r))
    throw InputError("woven: spacing must be between 4 and 1000 particle radii (" + fmt(4.0 * r) + " and " +
                     fmt(1000.0 * r) + "), got " + fmt(g.spacing));
  // The realisable spacings lie one per interval (2r(n-1), 2rn); the nearest to the request is among three.
  WovenLayout w;
  const int n0 = static_cast<int>(std::floor(g.spacing / (2.0 * r)));
  for (int n = std::max(3, n0); n <= std::max(3, n0) + 2; ++n) {
    const double s = spacing_for(r, n);
    if (w.steps == 0 || std::abs(s - g.spacing) < std::abs(w.spacing - g.spacing)) {
      w.spacing = s;
      w.steps = n;
    }
  }
  const double weft = crossings(g.size.x(), r, w.spacing), warp = crossings(g.size.y(), r, w.spacing);
  if (!(weft >= 2 && warp >= 2))
    throw InputError("woven: size must hold at least two yarns each way (spacing " + fmt(w.spacing) +
                     " + 2 particle radii), got [" + fmt(g.size.x()) + ", " + fmt(g.size.y()) + "]");
  if (warp * weft * (w.steps + 1) * 2.0 > 2147483647.0)
    throw InputError("woven: too many particles (more than 2^31); use a larger spacing or a smaller size");
  w.weft = static_cast<long>(weft);
  w.warp = static_cast<long>(warp);
  w.half_wave.reserve(w.steps + 1);
  double x = 0.0;
  for (int k = 0; k < w.steps; ++k) {
    w.half_wave.emplace_back(x, crimp(r, w.spacing, x));
    x = next_on_curve(r, w.spacing, x);
  }
  w.half_wave.emplace_back(w.spacing, -r);  // the next crossing, exactly
  return w;
}

std::vector<Eigen::Vector3d> woven_fill(const Generator& g) {
  const WovenLayout w = woven_layout(g);
  return woven_fill(g, 0, w.warp + w.weft, nullptr);
}

std::vector<Eigen::Vector3d> woven_fill(const Generator& g, long begin, long end, std::vector<long>* counts) {
  const WovenLayout w = woven_layout(g);
  const double r = g.particle_radius, s = w.spacing;
  const Eigen::Vector3d o = g.min + Eigen::Vector3d(r, r, 2.0 * r);
  std::vector<Eigen::Vector3d> out;
  // One yarn: `along` is its direction, `across` its offset from o; `sign` = +1 when it is on top at crossing 0.
  // Each half-wave flips the crimp, so consecutive crossings alternate over/under.
  auto yarn = [&](long crossings_along, const Eigen::Vector3d& across, const Eigen::Vector3d& along, double sign) {
    for (long m = 0; m + 1 < crossings_along; ++m) {
      const double flip = (m % 2 == 0) ? sign : -sign;
      for (int k = 0; k < w.steps; ++k)
        out.push_back(o + across + (m * s + w.half_wave[k].x()) * along +
                      Eigen::Vector3d(0, 0, flip * w.half_wave[k].y()));
    }
    const double flip = ((crossings_along - 1) % 2 == 0) ? sign : -sign;
    out.push_back(o + across + ((crossings_along - 1) * s) * along + Eigen::Vector3d(0, 0, flip * r));
  };
  for (long u = std::max(0L, begin); u < std::min(w.warp + w.weft, end); ++u) {
    const std::size_t before = out.size();
    if (u < w.warp)
      yarn(w.weft, Eigen::Vector3d(0, u * s, 0), Eigen::Vector3d::UnitX(), (u % 2 == 0) ? 1.0 : -1.0);
    else
      yarn(w.warp, Eigen::Vector3d((u - w.warp) * s, 0, 0), Eigen::Vector3d::UnitY(),
           ((u - w.warp) % 2 == 0) ? -1.0 : 1.0);
    if (counts) counts->push_back(static_cast<long>(out.size() - before));
  }
  return out;
}

}  // namespace percussion::geometry
