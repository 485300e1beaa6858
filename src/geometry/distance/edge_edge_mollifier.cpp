#include "percussion/geometry/distance/edge_edge_mollifier.hpp"

#include "percussion/geometry/distance/point_plane.hpp"

namespace percussion::geometry {

double edge_edge_mollifier_threshold(const Vec<3>& ea0_rest, const Vec<3>& ea1_rest, const Vec<3>& eb0_rest,
                                     const Vec<3>& eb1_rest) {
  return 1e-3 * (ea1_rest - ea0_rest).squaredNorm() * (eb1_rest - eb0_rest).squaredNorm();
}

double edge_edge_cross_squarednorm(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1) {
  return (ea1 - ea0).cross(eb1 - eb0).squaredNorm();
}

// c = n·n with n = a × b, a = ea1 − ea0, b = eb1 − eb0: ∂c/∂a = 2 b × n, ∂c/∂b = 2 n × a.
Vec<12> edge_edge_cross_squarednorm_gradient(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0,
                                             const Vec<3>& eb1) {
  const Vec<3> a = ea1 - ea0, b = eb1 - eb0, n = a.cross(b);
  const Vec<3> ga = 2.0 * b.cross(n), gb = 2.0 * n.cross(a);
  Vec<12> g;
  g << -ga, ga, -gb, gb;
  return g;
}

Mat<12> edge_edge_cross_squarednorm_hessian(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0,
                                            const Vec<3>& eb1) {
  const Vec<3> a = ea1 - ea0, b = eb1 - eb0, n = a.cross(b);
  Eigen::Matrix<double, 3, 6> J;  // ∂n/∂(a, b)
  J << -cross_matrix(b), cross_matrix(a);
  Mat<6> H = 2.0 * J.transpose() * J;
  const Mat<3> ab = -cross_matrix(2.0 * n);  // second derivative of the bilinear n, weighted by ∂c/∂n = 2n
  H.block<3, 3>(0, 3) += ab;
  H.block<3, 3>(3, 0) += ab.transpose();
  Eigen::Matrix<double, 6, 12> M = Eigen::Matrix<double, 6, 12>::Zero();
  M.block<3, 3>(0, 0) = -Mat<3>::Identity();
  M.block<3, 3>(0, 3) = Mat<3>::Identity();
  M.block<3, 3>(3, 6) = -Mat<3>::Identity();
  M.block<3, 3>(3, 9) = Mat<3>::Identity();
  return M.transpose() * H * M;
}

double edge_edge_mollifier(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1, double eps_x) {
  return mollifier(edge_edge_cross_squarednorm(ea0, ea1, eb0, eb1), eps_x);
}

Vec<12> edge_edge_mollifier_gradient(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1,
                                     double eps_x) {
  const double c = edge_edge_cross_squarednorm(ea0, ea1, eb0, eb1);
  if (c >= eps_x) return Vec<12>::Zero();
  return mollifier_derivative(c, eps_x) * edge_edge_cross_squarednorm_gradient(ea0, ea1, eb0, eb1);
}

Mat<12> edge_edge_mollifier_hessian(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1,
                                    double eps_x) {
  const double c = edge_edge_cross_squarednorm(ea0, ea1, eb0, eb1);
  if (c >= eps_x) return Mat<12>::Zero();
  const Vec<12> gc = edge_edge_cross_squarednorm_gradient(ea0, ea1, eb0, eb1);
  return mollifier_second_derivative(c, eps_x) * gc * gc.transpose() +
         mollifier_derivative(c, eps_x) * edge_edge_cross_squarednorm_hessian(ea0, ea1, eb0, eb1);
}

}  // namespace percussion::geometry
