#include "percussion/geometry/distance/point_plane.hpp"

namespace percussion::geometry {

PlaneKernel plane_kernel(const Vec<3>& r, const Vec<3>& a, const Vec<3>& b, bool with_hessian) {
  const Vec<3> n = a.cross(b);
  const double s = r.dot(n), N = n.squaredNorm();
  PlaneKernel k;
  k.value = s * s / N;
  // First derivatives in z = (r, n), then through n = a × b: ∂n/∂a = −[b]×, ∂n/∂b = [a]×.
  const Vec<3> gr = (2.0 * s / N) * n;
  const Vec<3> gn = (2.0 * s / N) * r - (2.0 * s * s / (N * N)) * n;
  const Mat<3> dn_da = -cross_matrix(b), dn_db = cross_matrix(a);
  k.gradient << gr, dn_da.transpose() * gn, dn_db.transpose() * gn;
  if (!with_hessian) return k;
  const Mat<3> I = Mat<3>::Identity();
  const Mat<3> nn = n * n.transpose();
  const Mat<3> Hrr = (2.0 / N) * nn;
  const Mat<3> Hrn = (2.0 / N) * (n * r.transpose() + s * I) - (4.0 * s / (N * N)) * nn;
  const Mat<3> Hnn = (2.0 / N) * r * r.transpose() - (4.0 * s / (N * N)) * (r * n.transpose() + n * r.transpose()) -
                     (2.0 * s * s / (N * N)) * I + (8.0 * s * s / (N * N * N)) * nn;
  Eigen::Matrix<double, 6, 9> J = Eigen::Matrix<double, 6, 9>::Zero();
  J.block<3, 3>(0, 0) = I;
  J.block<3, 3>(3, 3) = dn_da;
  J.block<3, 3>(3, 6) = dn_db;
  Mat<6> Hz;
  Hz << Hrr, Hrn, Hrn.transpose(), Hnn;
  k.hessian = J.transpose() * Hz * J;
  // n is bilinear in (a, b): gn·(a × b) has ∂²/∂a∂b = −[gn]×.
  const Mat<3> ab = -cross_matrix(gn);
  k.hessian.block<3, 3>(3, 6) += ab;
  k.hessian.block<3, 3>(6, 3) += ab.transpose();
  return k;
}

namespace {

Eigen::Matrix<double, 9, 12> difference_map(const StencilDifferences& d) {
  Eigen::Matrix<double, 9, 12> M = Eigen::Matrix<double, 9, 12>::Zero();
  for (int k = 0; k < 3; ++k) {
    M.block<3, 3>(3 * k, 3 * d[k][0]) += Mat<3>::Identity();
    M.block<3, 3>(3 * k, 3 * d[k][1]) -= Mat<3>::Identity();
  }
  return M;
}

PlaneKernel kernel_of(const Vec<3>* const x[4], const StencilDifferences& d, bool with_hessian) {
  return plane_kernel(*x[d[0][0]] - *x[d[0][1]], *x[d[1][0]] - *x[d[1][1]], *x[d[2][0]] - *x[d[2][1]], with_hessian);
}

constexpr StencilDifferences kPointPlane = {{0, 1}, {2, 1}, {3, 1}};  // (p − t0, t1 − t0, t2 − t0)

}  // namespace

Vec<12> plane_kernel_gradient(const Vec<3>* const x[4], const StencilDifferences& d) {
  return difference_map(d).transpose() * kernel_of(x, d, false).gradient;
}

Mat<12> plane_kernel_hessian(const Vec<3>* const x[4], const StencilDifferences& d) {
  const auto M = difference_map(d);
  return M.transpose() * kernel_of(x, d, true).hessian * M;
}

double point_plane_distance(const Vec<3>& p, const Vec<3>& t0, const Vec<3>& t1, const Vec<3>& t2) {
  const Vec<3> n = (t1 - t0).cross(t2 - t0);
  const double s = (p - t0).dot(n);
  return s * s / n.squaredNorm();
}

Vec<12> point_plane_distance_gradient(const Vec<3>& p, const Vec<3>& t0, const Vec<3>& t1, const Vec<3>& t2) {
  const Vec<3>* const x[4] = {&p, &t0, &t1, &t2};
  return plane_kernel_gradient(x, kPointPlane);
}

Mat<12> point_plane_distance_hessian(const Vec<3>& p, const Vec<3>& t0, const Vec<3>& t1, const Vec<3>& t2) {
  const Vec<3>* const x[4] = {&p, &t0, &t1, &t2};
  return plane_kernel_hessian(x, kPointPlane);
}

}  // namespace percussion::geometry
