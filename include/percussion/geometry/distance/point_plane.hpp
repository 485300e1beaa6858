#pragma once
// Squared distance from a point to the plane of a triangle, 3D (stencil [p, t0, t1, t2]):
// d² = (r·n)²/(n·n), r = p − t0, n = (t1 − t0) × (t2 − t0). Line–line is the same function of
// (r, a, b) = (ea0 − eb0, ea1 − ea0, eb1 − eb0), so both share the kernel on (r, a, b) below.
#include "percussion/geometry/distance/distance_type.hpp"

namespace percussion::geometry {

// (r·(a×b))²/‖a×b‖², with its gradient and Hessian on y = (r, a, b) ∈ R⁹ (exact, a×b ≠ 0).
struct PlaneKernel {
  double value;
  Vec<9> gradient;
  Mat<9> hessian;
};
PlaneKernel plane_kernel(const Vec<3>& r, const Vec<3>& a, const Vec<3>& b, bool with_hessian);

// The kernel on a 4-point stencil x with r = x[d[0][0]] − x[d[0][1]], a = x[d[1][0]] − x[d[1][1]],
// b = x[d[2][0]] − x[d[2][1]]: gradient Mᵀ g and Hessian Mᵀ H M for the 9×12 difference matrix M.
using StencilDifferences = int[3][2];
Vec<12> plane_kernel_gradient(const Vec<3>* const x[4], const StencilDifferences& d);
Mat<12> plane_kernel_hessian(const Vec<3>* const x[4], const StencilDifferences& d);

double point_plane_distance(const Vec<3>& p, const Vec<3>& t0, const Vec<3>& t1, const Vec<3>& t2);
Vec<12> point_plane_distance_gradient(const Vec<3>& p, const Vec<3>& t0, const Vec<3>& t1, const Vec<3>& t2);
Mat<12> point_plane_distance_hessian(const Vec<3>& p, const Vec<3>& t0, const Vec<3>& t1, const Vec<3>& t2);

// [v]×, the matrix of w ↦ v × w.
inline Mat<3> cross_matrix(const Vec<3>& v) {
  Mat<3> m;
  m << 0.0, -v.z(), v.y(), v.z(), 0.0, -v.x(), -v.y(), v.x(), 0.0;
  return m;
}

}  // namespace percussion::geometry
