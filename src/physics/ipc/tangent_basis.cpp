#include "percussion/physics/ipc/tangent_basis.hpp"

#include <Eigen/Cholesky>

namespace percussion::ipc {

using geometry::Vec;

template <>
TangentBasis<2> point_point_tangent_basis<2>(const Vec<2>& p0, const Vec<2>& p1) {
  const Vec<2> n = (p1 - p0).normalized();
  return Vec<2>(-n.y(), n.x());
}

template <>
TangentBasis<3> point_point_tangent_basis<3>(const Vec<3>& p0, const Vec<3>& p1) {
  const Vec<3> n = (p1 - p0).normalized();
  // Cross with the coordinate axis least aligned with n, so the first tangent is never near zero.
  int axis;
  n.cwiseAbs().minCoeff(&axis);
  const Vec<3> t0 = n.cross(Vec<3>::Unit(axis)).normalized();
  TangentBasis<3> P;
  P << t0, n.cross(t0);
  return P;
}

template <>
TangentBasis<2> point_edge_tangent_basis<2>(const Vec<2>&, const Vec<2>& e0, const Vec<2>& e1) {
  return (e1 - e0).normalized();
}

template <>
TangentBasis<3> point_edge_tangent_basis<3>(const Vec<3>& p, const Vec<3>& e0, const Vec<3>& e1) {
  const Vec<3> e = (e1 - e0).normalized();
  TangentBasis<3> P;
  P << e, e.cross(p - e0).normalized();
  return P;
}

TangentBasis<3> point_triangle_tangent_basis(const Vec<3>&, const Vec<3>& t0, const Vec<3>& t1, const Vec<3>& t2) {
  const Vec<3> a = (t1 - t0).normalized();
  const Vec<3> n = (t1 - t0).cross(t2 - t0).normalized();
  TangentBasis<3> P;
  P << a, n.cross(a);
  return P;
}

TangentBasis<3> edge_edge_tangent_basis(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1) {
  const Vec<3> a = (ea1 - ea0).normalized();
  const Vec<3> n = (ea1 - ea0).cross(eb1 - eb0).normalized();
  TangentBasis<3> P;
  P << a, n.cross(a);
  return P;
}

Eigen::Vector2d point_triangle_closest_point(const Vec<3>& p, const Vec<3>& t0, const Vec<3>& t1, const Vec<3>& t2) {
  Eigen::Matrix<double, 3, 2> B;
  B << t1 - t0, t2 - t0;
  return (B.transpose() * B).ldlt().solve(B.transpose() * (p - t0));
}

Eigen::Vector2d edge_edge_closest_point(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1) {
  Eigen::Matrix<double, 3, 2> B;
  B << ea1 - ea0, -(eb1 - eb0);
  return (B.transpose() * B).ldlt().solve(-B.transpose() * (ea0 - eb0));
}

}  // namespace percussion::ipc
