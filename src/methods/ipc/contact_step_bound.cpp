#include "percussion/methods/ipc/contact_step_bound.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace percussion::ipc {
namespace {

// Additive CCD (Li, Kaufman and Jiang 2021): the pair's distance cannot fall faster than l_p, the largest relative
// speed of its two primitives along the step, so advancing t by 0.9 (d(t) − keep·d(0)) / l_p never crosses the
// kept gap. Exact distances make it reliable however small the gap already is, where a parameter-space search
// must resolve the gap itself.
double additive_toi(const ContactPair& pair, int dim, std::span<const double> x, std::span<const double> s,
                    std::span<const HalfPlane> planes, double keep) {
  const int n = stencil_size(pair.type);
  ContactPair local = pair;
  std::array<Eigen::Vector3d, 4> x0, p;
  Eigen::Vector3d mean = Eigen::Vector3d::Zero();
  for (int k = 0; k < n; ++k) {
    x0[k].setZero();
    p[k].setZero();
    for (int c = 0; c < dim; ++c) {
      x0[k][c] = x[std::size_t(pair.vertex[k]) * dim + c];
      p[k][c] = s[std::size_t(pair.vertex[k]) * dim + c];
    }
    mean += p[k] / n;
    local.vertex[std::size_t(k)] = k;
  }
  for (int k = 0; k < n; ++k) p[k] -= mean;
  auto norm = [&](int k) { return p[k].norm(); };
  const double lp = pair.type == PairType::EdgeEdge ? std::max(norm(0), norm(1)) + std::max(norm(2), norm(3))
                    : pair.type == PairType::PointEdge2D ? norm(0) + std::max(norm(1), norm(2))
                                                         : norm(0) + std::max({norm(1), norm(2), norm(3)});
  if (lp == 0.0) return 1.0;
  double at[12];
  auto distance = [&](double t) {
    for (int k = 0; k < n; ++k)
      for (int c = 0; c < dim; ++c) at[k * dim + c] = x0[k][c] + t * (p[k][c] + mean[c]);
    return std::sqrt(std::max(0.0, pair_distance2(local, dim, std::span<const double>(at, std::size_t(n * dim)),
                                                  planes)));
  };
  const double d0 = distance(0.0), target = keep * d0;
  double t = 0.0, d = d0;
  for (long iteration = 0; iteration < 10000000; ++iteration) {
    const double advance = 0.9 * (d - target) / lp;
    if (t + advance >= 1.0) return 1.0;
    t += advance;
    d = distance(t);
    if (d - target < 0.1 * (d0 - target)) break;  // within a tenth of the closable gap: close enough
  }
  return t;
}

}  // namespace

double max_step(const ContactSet& set, std::span<const double> step, const geometry::CcdOptions& base,
                double keep) {
  std::vector<double> s;
  set.vertices().read(step, s);
  const std::span<const double> x = set.vertices().positions();
  const int dim = set.dim();
  auto p3 = [&](std::span<const double> v, std::int32_t i, double t) {
    Eigen::Vector3d p = Eigen::Vector3d::Zero();
    for (int c = 0; c < dim; ++c) p[c] = v[std::size_t(i) * dim + c] + t * s[std::size_t(i) * dim + c];
    return p;
  };
  auto p2 = [&](std::int32_t i, double t) { return Eigen::Vector2d(p3(x, i, t).head<2>()); };
  double alpha = 1.0;
  for (const ContactPair& pair : set.pairs()) {
    const auto& v = pair.vertex;
    if (keep > 0.0 && pair.type != PairType::PointPlane) {
      alpha = std::min(alpha, additive_toi(pair, dim, x, s, set.options().planes, keep));
      continue;
    }
    geometry::CcdOptions options = base;
    if (keep > 0.0) {
      const double d0 = std::sqrt(std::max(0.0, pair_distance2(pair, dim, x, set.options().planes)));
      options.min_distance = keep * d0;
      options.tolerance = std::min(base.tolerance, 0.5 * (1.0 - keep) * d0);
    }
    geometry::CcdResult r;
    switch (pair.type) {
      case PairType::PointEdge2D:
        r = geometry::point_edge_ccd(p2(v[0], 0), p2(v[1], 0), p2(v[2], 0), p2(v[0], 1), p2(v[1], 1), p2(v[2], 1),
                                     options);
        break;
      case PairType::PointTriangle:
        r = geometry::vertex_face_ccd(p3(x, v[0], 0), p3(x, v[1], 0), p3(x, v[2], 0), p3(x, v[3], 0), p3(x, v[0], 1),
                                      p3(x, v[1], 1), p3(x, v[2], 1), p3(x, v[3], 1), options);
        break;
      case PairType::EdgeEdge:
        r = geometry::edge_edge_ccd(p3(x, v[0], 0), p3(x, v[1], 0), p3(x, v[2], 0), p3(x, v[3], 0), p3(x, v[0], 1),
                                    p3(x, v[1], 1), p3(x, v[2], 1), p3(x, v[3], 1), options);
        break;
      case PairType::PointPlane: {
        // The offset is linear in α: it reaches min_distance at (s0 − min_distance) / (−n·step).
        const HalfPlane& h = set.options().planes[std::size_t(v[1])];
        const double s0 = h.normal.dot(p3(x, v[0], 0) - h.point), ds = h.normal.dot(p3(x, v[0], 1) - p3(x, v[0], 0));
        if (ds < 0.0) r.toi = std::clamp((s0 - options.min_distance) / -ds, 0.0, 1.0);
        break;
      }
    }
    alpha = std::min(alpha, r.toi);
  }
  MPI_Allreduce(MPI_IN_PLACE, &alpha, 1, MPI_DOUBLE, MPI_MIN, set.comm());
  return alpha;
}

}  // namespace percussion::ipc
