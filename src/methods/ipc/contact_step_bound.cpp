#include "percussion/methods/ipc/contact_step_bound.hpp"

#include <algorithm>
#include <cmath>

namespace percussion::ipc {

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
