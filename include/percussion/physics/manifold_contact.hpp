#pragma once
// Contact repulsion potentials of the implicit BDEM solver (notes 001 §2.7, eqs. 32–33), positions only.
// One-sided: a term exists only while the spheres overlap (or the sphere penetrates the plane), so V is C¹
// with a Hessian jump at first touch, which Newton with a line search tolerates. Friction is a velocity
// post-process (eqs. 34–35) and does not enter the potential.
#include <Eigen/Core>
#include <cmath>

namespace percussion::physics {

struct PairReduced6 {
  double energy;
  Eigen::Matrix<double, 6, 1> gradient;    // (∇_{p_i}V, ∇_{p_j}V)
  Eigen::Matrix<double, 6, 6> hessian;     // PSD
  bool active;
};

namespace detail {
// ½ k gap² of a touching pair (gap < 0) whose gap grows along d (from p_i to p_j) at unit rate per unit of p_j.
inline PairReduced6 pair_penalty(double gap, const Eigen::Vector3d& d, double k) {
  PairReduced6 out;
  const Eigen::Vector3d gj = (k * gap) * d;
  const Eigen::Matrix3d H = k * (d * d.transpose());
  out.energy = 0.5 * k * gap * gap;
  out.gradient.head<3>() = -gj;
  out.gradient.tail<3>() = gj;
  out.hessian.topLeftCorner<3, 3>() = H;
  out.hessian.bottomRightCorner<3, 3>() = H;
  out.hessian.topRightCorner<3, 3>() = -H;
  out.hessian.bottomLeftCorner<3, 3>() = -H;
  out.active = true;
  return out;
}

inline PairReduced6 pair_apart() {
  PairReduced6 out;
  out.energy = 0.0;
  out.gradient.setZero();
  out.hessian.setZero();
  out.active = false;
  return out;
}
}  // namespace detail

// V = ½ k (L − r_i − r_j)², L = |p_j − p_i|, while L < r_i + r_j. The exact Hessian block is
// k [d dᵀ + ((L − reach)/L)(I − d dᵀ)]; in contact (L − reach)/L < 0 makes it indefinite, and the analytic
// PSD projection (as for stretch, notes §2.7/§2.9) clamps that factor to 0, leaving k d dᵀ.
inline PairReduced6 contact_penalty(const Eigen::Vector3d& pi, double ri, const Eigen::Vector3d& pj, double rj,
                                    double k) {
  const Eigen::Vector3d delta = pj - pi;
  const double reach = ri + rj;
  const double L2 = delta.squaredNorm();
  if (!(L2 < reach * reach)) return detail::pair_apart();
  const double L = std::sqrt(L2);
  // Coincident centres have no normal; any fixed direction keeps the pair's forces balanced.
  const Eigen::Vector3d d = L > 0.0 ? Eigen::Vector3d(delta / L) : Eigen::Vector3d::UnitX();
  return detail::pair_penalty(L - reach, d, k);
}

// The same penalty on the gap along a fixed unit normal d (from p_i to p_j): g = d·(p_j − p_i) − r_i − r_j.
// Linear in the positions, so V is convex and k d dᵀ is its exact Hessian.
inline PairReduced6 contact_penalty_along(const Eigen::Vector3d& pi, double ri, const Eigen::Vector3d& pj, double rj,
                                          double k, const Eigen::Vector3d& d) {
  const double gap = d.dot(pj - pi) - (ri + rj);
  return gap < 0.0 ? detail::pair_penalty(gap, d, k) : detail::pair_apart();
}

struct PlaneReduced3 {
  double energy;
  Eigen::Vector3d gradient;
  Eigen::Matrix3d hessian;
  bool active;
};

// The gap g = (p − point)·n − r of a sphere to the half-space {x : (x − point)·n >= 0}.
inline double plane_gap(const Eigen::Vector3d& p, double r, const Eigen::Vector3d& point,
                        const Eigen::Vector3d& unit_normal) {
  return (p - point).dot(unit_normal) - r;
}

// Half-space {x : (x − point)·n >= 0}: V = ½ k g², g = plane_gap, while g < 0. Exact SDF, so the Hessian k n nᵀ is
// already PSD.
inline PlaneReduced3 plane_penalty(const Eigen::Vector3d& p, double r, const Eigen::Vector3d& point,
                                   const Eigen::Vector3d& unit_normal, double k) {
  PlaneReduced3 out;
  const double g = plane_gap(p, r, point, unit_normal);
  out.active = g < 0.0;
  if (!out.active) {
    out.energy = 0.0;
    out.gradient.setZero();
    out.hessian.setZero();
    return out;
  }
  out.energy = 0.5 * k * g * g;
  out.gradient = (k * g) * unit_normal;
  out.hessian = k * (unit_normal * unit_normal.transpose());
  return out;
}

}  // namespace percussion::physics
