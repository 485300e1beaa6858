#pragma once
// The inclusion-based root finder behind every CCD query type (private to src/geometry/ccd).
//
// A query is a function F(t, u, v) (or F(t, u) in 2D point-edge) from the parameter box to space, multilinear in
// the parameters, whose zeros are the contacts. Over a parameter box, each coordinate of F ranges exactly between
// its smallest and largest corner value (multilinear), so a box whose corner values of some coordinate all exceed
// min_distance + (rounding bound), or all lie below its negative, holds no contact and is dropped. The boxes left
// are split, earliest t first, until one is smaller than the tolerance: its lower t bounds the time of impact.
//
// The rounding bound: each corner value is evaluated by a fixed sequence of at most 8 operations per path with the
// box corners exact (dyadic), so |computed - exact| <= gamma_8 * 18 * M, with M the largest magnitude of that
// coordinate over the query's points (Higham, Accuracy and Stability, ch. 3); see error_bound().
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "percussion/geometry/ccd/ccd.hpp"

namespace percussion::geometry::ccd_detail {

struct Box {
  double lo[3];
  double hi[3];
  int depth;
};

// gamma_8 * 18 * M plus an absolute term for products that underflow; per coordinate.
inline double error_bound(double max_abs) {
  constexpr double u = std::numeric_limits<double>::epsilon() / 2;
  constexpr double gamma8 = 8 * u / (1 - 8 * u);
  return gamma8 * 18.0 * max_abs * (1 + 4 * u) + 1e-300;
}

// The threshold a corner value must exceed (in magnitude, with one sign for all corners) for the box to be
// dropped: rounded up so that it is at least min_distance + error.
inline double threshold(double min_distance, double error) {
  return (min_distance + 2 * error) * (1 + 4 * std::numeric_limits<double>::epsilon());
}

// Parameter widths below which a box is accepted: tolerance over the largest rate of change of F along that
// parameter, clamped so that box bounds stay dyadic with few bits (sums like u + v stay exact).
inline double parameter_tolerance(double tolerance, double rate) {
  constexpr double finest = 0x1p-40;
  if (!(rate > 0)) return 1.0;
  return std::clamp(tolerance / rate, finest, 1.0);
}

// Problem: kParams (2 or 3), kDims, and
//   bool outside(const Box&)                  (the box lies outside the parameter domain, e.g. u + v > 1)
//   void corners(const Box&, double f[][kDims]) (F at the 2^kParams corners, in the order error_bound() counts)
//   int directions(const Box&, double n[4][kDims]) (up to 4 directions along which near misses are likely
//                                              separated, e.g. the face normal and the in-plane edge normals, as
//                                              in the separating axis theorem; any direction is valid)
//   double min_distance, error[kDims] (error_bound()), limit[kDims] (threshold()), tolerance[kParams]

// Along a fixed direction n, n . F is multilinear too, so its corner values bound it; a contact within
// min_distance in every coordinate has |n . F| <= min_distance |n|_1. The bound below adds the corner values'
// errors (sum |n_i| error_i) and the dot product's rounding, and is rounded up; n is scaled to |n|_inf = 1 so
// nothing overflows.
template <int D, int C>
bool separated_along(double n[D], const double f[C][D], double min_distance, const double error[D]) {
  double scale = 0;
  for (int i = 0; i < D; ++i) scale = std::fmax(scale, std::fabs(n[i]));
  if (!(scale > 0) || !std::isfinite(scale)) return false;
  double norm1 = 0, err = 0;
  for (int i = 0; i < D; ++i) {
    n[i] /= scale;
    norm1 += std::fabs(n[i]);
    err += std::fabs(n[i]) * error[i];
  }
  double lo = INFINITY, hi = -INFINITY, magnitude = 0;
  for (int c = 0; c < C; ++c) {
    double g = 0, m = 0;
    for (int i = 0; i < D; ++i) g += n[i] * f[c][i], m += std::fabs(n[i] * f[c][i]);
    if (!std::isfinite(g)) return false;
    lo = std::fmin(lo, g);
    hi = std::fmax(hi, g);
    magnitude = std::fmax(magnitude, m);
  }
  constexpr double u = std::numeric_limits<double>::epsilon() / 2;
  const double bound = (min_distance * norm1 + err + 4 * u / (1 - 4 * u) * magnitude) * (1 + 0x1p-48) + 1e-300;
  return lo > bound || hi < -bound;
}

template <class Problem>
CcdResult solve(const Problem& q, const CcdOptions& options) {
  constexpr int P = Problem::kParams;
  constexpr int D = Problem::kDims;
  constexpr int kCapacity = 512;
  // Earliest lower t first; among equal ones the deeper box, so a contact region is refined depth first.
  auto later = [](const Box& a, const Box& b) {
    return a.lo[0] > b.lo[0] || (a.lo[0] == b.lo[0] && a.depth < b.depth);
  };
  std::array<Box, kCapacity> heap;
  int size = 0;
  Box root{};
  for (int k = 0; k < 3; ++k) root.lo[k] = 0.0, root.hi[k] = 1.0;
  heap[size++] = root;
  CcdResult result;
  while (size > 0) {
    std::pop_heap(heap.begin(), heap.begin() + size, later);
    const Box b = heap[--size];
    ++result.boxes;
    // Every box still queued starts no earlier than b, and every dropped box holds no contact: b.lo[0] is a
    // valid lower bound on the time of impact wherever the search stops.
    if (result.boxes > options.max_boxes) return {true, b.lo[0], result.boxes};
    if (q.outside(b)) continue;
    constexpr int C = 1 << P;
    double f[C][D];
    q.corners(b, f);
    bool excluded = false;
    double lo[D], hi[D];
    for (int i = 0; i < D; ++i) {
      lo[i] = hi[i] = f[0][i];
      for (int c = 1; c < C; ++c) lo[i] = std::fmin(lo[i], f[c][i]), hi[i] = std::fmax(hi[i], f[c][i]);
      excluded = excluded || lo[i] > q.limit[i] || hi[i] < -q.limit[i];
    }
    if (excluded) continue;
    double n[4][D];
    const int directions = q.directions(b, n);
    bool separated = false;
    for (int k = 0; k < directions && !separated; ++k) separated = separated_along<D, C>(n[k], f, q.min_distance, q.error);
    if (separated) continue;
    // F at the box's centre (the mean of the corners, F being multilinear) points from one primitive to the
    // other: along it, near misses of parallel or degenerate primitives separate once the box is small.
    for (int i = 0; i < D; ++i) {
      n[0][i] = 0;
      for (int c = 0; c < C; ++c) n[0][i] += f[c][i];
    }
    if (separated_along<D, C>(n[0], f, q.min_distance, q.error)) continue;
    int split = -1;
    double worst = 1.0;
    for (int k = 0; k < P; ++k) {
      const double ratio = (b.hi[k] - b.lo[k]) / q.tolerance[k];
      if (ratio > worst) worst = ratio, split = k;
    }
    if (split < 0) return {true, b.lo[0], result.boxes};
    if (size + 2 > kCapacity) return {true, b.lo[0], result.boxes};
    const double mid = 0.5 * (b.lo[split] + b.hi[split]);
    Box first = b, second = b;
    first.hi[split] = mid;
    second.lo[split] = mid;
    first.depth = second.depth = b.depth + 1;
    heap[size++] = first;
    std::push_heap(heap.begin(), heap.begin() + size, later);
    heap[size++] = second;
    std::push_heap(heap.begin(), heap.begin() + size, later);
  }
  result.hit = false;
  result.toi = 1.0;
  return result;
}

inline void cross(const double a[3], const double b[3], double n[3]) {
  n[0] = a[1] * b[2] - a[2] * b[1];
  n[1] = a[2] * b[0] - a[0] * b[2];
  n[2] = a[0] * b[1] - a[1] * b[0];
}

// What every query type holds: start and displacement (t1 - t0) of its N points, and the search's bounds.
template <int N, int P, int D>
struct QueryData {
  static constexpr int kParams = P;
  static constexpr int kDims = D;
  double x0[N][D], dx[N][D];
  double min_distance, error[D], limit[D], tolerance[P];
};

// Loads the points and the bounds; `rate_t` gets the sum of the displacements (a bound on |dF/dt| per coordinate).
// False for inputs that are not finite or so large that the rounding bound could overflow: the caller answers
// with a conservative hit at 0.
template <int N, int P, int D>
bool load(QueryData<N, P, D>& q, const Eigen::Matrix<double, D, 1>* const start[N],
          const Eigen::Matrix<double, D, 1>* const end[N], const CcdOptions& options, double& rate_t) {
  // A negative or NaN separation would shrink the thresholds below the rounding bound: treat it as 0.
  q.min_distance = std::fmax(options.min_distance, 0.0);
  rate_t = 0;
  for (int i = 0; i < D; ++i) {
    double max_abs = 0, moving = 0;
    for (int k = 0; k < N; ++k) {
      q.x0[k][i] = (*start[k])[i];
      q.dx[k][i] = (*end[k])[i] - (*start[k])[i];
      max_abs = std::fmax(max_abs, std::fmax(std::fabs((*start[k])[i]), std::fabs((*end[k])[i])));
      moving += std::fabs(q.dx[k][i]);
    }
    if (!(max_abs <= 1e150) || !std::isfinite(moving)) return false;
    q.error[i] = error_bound(max_abs);
    q.limit[i] = threshold(q.min_distance, q.error[i]);
    rate_t = std::fmax(rate_t, moving);
  }
  return true;
}

// The largest coordinate of the edge (a, b) at t = 0 and t = 1: a bound on |dF/du| for its parameter u.
template <int D>
double edge_rate(const Eigen::Matrix<double, D, 1>& a0, const Eigen::Matrix<double, D, 1>& b0,
                 const Eigen::Matrix<double, D, 1>& a1, const Eigen::Matrix<double, D, 1>& b1) {
  return std::fmax((b0 - a0).cwiseAbs().maxCoeff(), (b1 - a1).cwiseAbs().maxCoeff());
}

}  // namespace percussion::geometry::ccd_detail
