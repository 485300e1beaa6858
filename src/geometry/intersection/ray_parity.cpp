#include "percussion/geometry/intersection/ray_parity.hpp"

#include "percussion/geometry/intersection/orientation.hpp"

namespace percussion::geometry {
namespace {

// Sign of orient2d(u, v, q + (ε, ε²)) for an infinitesimal ε, with u ≠ v: the exact sign if non-zero, else the
// sign of the perturbation's leading term (v − u) × (ε, ε²) = −(v₂ − u₂) ε + (v₁ − u₁) ε².
int perturbed_orient2d(const Eigen::Vector2d& u, const Eigen::Vector2d& v, const Eigen::Vector2d& q) {
  if (const int s = orient2d(u, v, q); s != 0) return s;
  if (v.y() != u.y()) return -sign_of(v.y() - u.y());
  return sign_of(v.x() - u.x());
}

}  // namespace

bool ray_crosses_segment(const Eigen::Vector2d& p, const Eigen::Vector2d& a, const Eigen::Vector2d& b) {
  // With p raised by ε, a vertex at p's height counts as below: the segment straddles the ray's line iff exactly
  // one endpoint is strictly above p.
  const bool a_above = a.y() > p.y(), b_above = b.y() > p.y();
  if (a_above == b_above) return false;
  // The crossing is right of p iff p is left of the segment directed upwards.
  const int s = a_above ? orient2d(b, a, p) : orient2d(a, b, p);
  return s >= 0;
}

bool ray_crosses_triangle(const Eigen::Vector3d& p, const Eigen::Vector3d& a, const Eigen::Vector3d& b,
                          const Eigen::Vector3d& c) {
  // Project along x: the ray's line meets the triangle iff (p_y, p_z), perturbed, is inside the projection.
  const Eigen::Vector2d q(p.y(), p.z()), u(a.y(), a.z()), v(b.y(), b.z()), w(c.y(), c.z());
  const int sense = orient2d(u, v, w);  // the sign of the normal's x component
  if (sense == 0) return false;         // the ray's line is parallel to the triangle (or it is degenerate)
  if (perturbed_orient2d(u, v, q) != sense || perturbed_orient2d(v, w, q) != sense ||
      perturbed_orient2d(w, u, q) != sense)
    return false;
  // The hit is at t = n·(a − p) / n_x: forward iff orient3d(a, b, c, p) = n·(a − p) has the sign of n_x.
  return orient3d(a, b, c, p) == sense;
}

}  // namespace percussion::geometry
