#include "percussion/physics/ipc/contact_pair.hpp"

#include <limits>

#include "percussion/geometry/distance/edge_edge.hpp"
#include "percussion/geometry/distance/edge_edge_mollifier.hpp"
#include "percussion/geometry/distance/point_triangle.hpp"
#include "percussion/physics/ipc/friction_pair.hpp"

namespace percussion::ipc {
namespace {

template <int D>
Vec<D> point(std::span<const double> x, std::int32_t i) {
  return Eigen::Map<const Vec<D>>(x.data() + static_cast<std::size_t>(i) * D);
}

// Signed distance n·(x − p) of a vertex to its plane.
double plane_offset(const ContactPair& pair, int dim, std::span<const double> x, std::span<const HalfPlane> planes) {
  const HalfPlane& h = planes[static_cast<std::size_t>(pair.vertex[1])];
  double s = 0.0;
  for (int c = 0; c < dim; ++c) s += h.normal[c] * (x[static_cast<std::size_t>(pair.vertex[0]) * dim + c] - h.point[c]);
  return s;
}

template <int N>
PairEnergy<12> widen(const PairEnergy<N>& e) {
  PairEnergy<12> out;
  out.value = e.value;
  out.gradient.template head<N>() = e.gradient;
  out.hessian.template topLeftCorner<N, N>() = e.hessian;
  return out;
}

template <int N, int K>
LaggedFriction<12, 2> widen(const LaggedFriction<N, K>& f) {
  LaggedFriction<12, 2> out;
  out.normal_force = f.normal_force;
  out.tangent.template topLeftCorner<N, K>() = f.tangent;
  return out;
}

}  // namespace

double pair_distance2(const ContactPair& pair, int dim, std::span<const double> x, std::span<const HalfPlane> planes) {
  const auto& v = pair.vertex;
  switch (pair.type) {
    case PairType::PointEdge2D: {
      const Vec<2> p = point<2>(x, v[0]), e0 = point<2>(x, v[1]), e1 = point<2>(x, v[2]);
      return geometry::point_edge_distance<2>(p, e0, e1, geometry::point_edge_case<2>(p, e0, e1));
    }
    case PairType::PointTriangle: {
      const Vec<3> p = point<3>(x, v[0]), t0 = point<3>(x, v[1]), t1 = point<3>(x, v[2]), t2 = point<3>(x, v[3]);
      return geometry::point_triangle_distance(p, t0, t1, t2, geometry::point_triangle_case(p, t0, t1, t2));
    }
    case PairType::EdgeEdge: {
      const Vec<3> a0 = point<3>(x, v[0]), a1 = point<3>(x, v[1]), b0 = point<3>(x, v[2]), b1 = point<3>(x, v[3]);
      return geometry::edge_edge_distance(a0, a1, b0, b1, geometry::edge_edge_case(a0, a1, b0, b1));
    }
    case PairType::PointPlane: {
      const double s = plane_offset(pair, dim, x, planes);
      return s > 0.0 ? s * s : -s * s;
    }
  }
  return std::numeric_limits<double>::quiet_NaN();
}

PairEnergy<12> pair_barrier(const ContactPair& pair, int dim, std::span<const double> x,
                            std::span<const HalfPlane> planes, double dhat2, double kappa) {
  const auto& v = pair.vertex;
  const double w = kappa * pair.area;
  switch (pair.type) {
    case PairType::PointEdge2D:
      return widen(point_edge_barrier<2>(point<2>(x, v[0]), point<2>(x, v[1]), point<2>(x, v[2]), dhat2, w));
    case PairType::PointTriangle:
      return point_triangle_barrier(point<3>(x, v[0]), point<3>(x, v[1]), point<3>(x, v[2]), point<3>(x, v[3]), dhat2,
                                    w);
    case PairType::EdgeEdge:
      return edge_edge_barrier(point<3>(x, v[0]), point<3>(x, v[1]), point<3>(x, v[2]), point<3>(x, v[3]), pair.eps_x,
                               dhat2, w);
    case PairType::PointPlane: {
      // d² = s², ∇d² = 2 s n, ∇²d² = 2 n nᵀ; only the positive side is admissible.
      const double s = plane_offset(pair, dim, x, planes);
      if (s * s >= dhat2 && s > 0.0) return {};
      if (s <= 0.0) return barrier_of_distance<12>(0.0, Vec<12>::Zero(), Mat<12>::Zero(), dhat2, w);
      const Eigen::Vector3d& n = planes[static_cast<std::size_t>(v[1])].normal;
      Vec<12> g = Vec<12>::Zero();
      Mat<12> h = Mat<12>::Zero();
      for (int a = 0; a < dim; ++a) {
        g[a] = 2.0 * s * n[a];
        for (int b = 0; b < dim; ++b) h(a, b) = 2.0 * n[a] * n[b];
      }
      return barrier_of_distance<12>(s * s, g, h, dhat2, w);
    }
  }
  return {};
}

double pair_barrier_value(const ContactPair& pair, int dim, std::span<const double> x,
                          std::span<const HalfPlane> planes, double dhat2, double kappa) {
  const double d2 = pair_distance2(pair, dim, x, planes);
  if (d2 >= dhat2) return 0.0;
  double w = kappa * pair.area;
  if (pair.type == PairType::EdgeEdge) {
    const auto& v = pair.vertex;
    w *= geometry::edge_edge_mollifier(point<3>(x, v[0]), point<3>(x, v[1]), point<3>(x, v[2]), point<3>(x, v[3]),
                                       pair.eps_x);
  }
  return w * barrier(d2, dhat2);
}

LaggedFriction<12, 2> pair_lagged_friction(const ContactPair& pair, int dim, std::span<const double> x_prev,
                                           std::span<const HalfPlane> planes, double dhat2, double kappa) {
  const auto& v = pair.vertex;
  const double w = kappa * pair.area;
  const double d2 = pair_distance2(pair, dim, x_prev, planes);
  if (d2 >= dhat2 || d2 <= 0.0) return {};
  switch (pair.type) {
    case PairType::PointEdge2D:
      return widen(lagged_friction(
          point_edge_friction_geometry_2d(point<2>(x_prev, v[0]), point<2>(x_prev, v[1]), point<2>(x_prev, v[2])),
          lagged_normal_force(d2, dhat2, w)));
    case PairType::PointTriangle:
      return widen(lagged_friction(point_triangle_friction_geometry(point<3>(x_prev, v[0]), point<3>(x_prev, v[1]),
                                                                    point<3>(x_prev, v[2]), point<3>(x_prev, v[3])),
                                   lagged_normal_force(d2, dhat2, w)));
    case PairType::EdgeEdge: {
      const Vec<3> a0 = point<3>(x_prev, v[0]), a1 = point<3>(x_prev, v[1]), b0 = point<3>(x_prev, v[2]),
                   b1 = point<3>(x_prev, v[3]);
      const double m = geometry::edge_edge_mollifier(a0, a1, b0, b1, pair.eps_x);
      return widen(lagged_friction(edge_edge_friction_geometry(a0, a1, b0, b1), lagged_normal_force(d2, dhat2, w, m)));
    }
    case PairType::PointPlane: {
      const Eigen::Vector3d& n = planes[static_cast<std::size_t>(v[1])].normal;
      LaggedFriction<12, 2> f;
      f.normal_force = lagged_normal_force(d2, dhat2, w);
      if (dim == 2) {
        f.tangent(0, 0) = -n[1];
        f.tangent(1, 0) = n[0];
      } else {
        // Any orthonormal pair orthogonal to n: the axis least aligned with n, crossed with it, then n × that.
        Eigen::Vector3d axis = Eigen::Vector3d::Zero();
        int k = 0;
        n.cwiseAbs().minCoeff(&k);
        axis[k] = 1.0;
        const Eigen::Vector3d t0 = n.cross(axis).normalized(), t1 = n.cross(t0);
        f.tangent.block<3, 1>(0, 0) = t0;
        f.tangent.block<3, 1>(0, 1) = t1;
      }
      return f;
    }
  }
  return {};
}

}  // namespace percussion::ipc
