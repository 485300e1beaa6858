#pragma once
// Frictional penalty contact of spheres with spheres and with planes, for the explicit integrator's force
// loop (notes 001 §2.7). Normal: V = ½ k δ², δ = overlap > 0 (eq. 32), plus a viscous dashpot, with the
// total normal force clamped to be non-attractive. Tangential: regularised Coulomb friction without
// history: no tangential spring to store per pair keeps checkpoints and halo exchanges small, and the
// implicit method replaces it with its own velocity post-process (eqs. 34–35). Rolling: a resistance
// torque up to μ_r F_n r_eff against the relative spin (rolling_torque).
//
// Both bodies' forces act at one common contact point, so the pair conserves linear and angular momentum
// to round-off, and friction power is −|F_t||v_t| <= 0.
#include <Eigen/Core>
#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "percussion/core/scene_parts.hpp"

namespace percussion::physics {

// Restitution of a linear spring–dashpot contact with damping ratio ζ = c / (2 sqrt(k m_eff)) whose normal
// force is clamped at zero: the contact ends when k δ + c δ̇ reaches zero, before δ does (Schwager & Pöschel
// 2007). Solves δ̈ + 2ζω₀δ̇ + ω₀²δ = 0, δ(0) = 0, δ̇(0) = 1 for the time δ̈ = 0 and returns −δ̇ there.
// (The textbook ζ = −ln e / sqrt(π² + ln² e) assumes the contact lasts until δ = 0 with an attractive
// tail; with the clamp it would give e = 0.397 for a requested 0.3.) Decreases from 1 (ζ = 0) to 0 (ζ → ∞).
inline double restitution_of_damping_ratio(double zeta) {
  if (zeta <= 0.0) return 1.0;
  if (zeta < 1.0) {
    const double w = std::sqrt(1.0 - zeta * zeta);
    const double phi = std::atan2(2.0 * zeta * w, 2.0 * zeta * zeta - 1.0);  // ω t at force zero
    return -std::exp(-zeta * phi / w) * (std::cos(phi) - (zeta / w) * std::sin(phi));
  }
  if (zeta == 1.0) return std::exp(-2.0);
  const double w = std::sqrt(zeta * zeta - 1.0);
  const double l2 = -zeta - w, l1 = 1.0 / l2;  // roots, l1 l2 = 1 (l1 without cancellation)
  const double t = 2.0 * std::log(zeta + w) / w;
  return (l2 * std::exp(l2 * t) - l1 * std::exp(l1 * t)) / (2.0 * w);
}

// Inverse of restitution_of_damping_ratio by bisection; e in (0, 1]. Not for the hot loop: ContactLaw
// computes it once.
inline double damping_ratio_for_restitution(double e) {
  if (!(e > 0.0) || e > 1.0) throw std::invalid_argument("contact restitution must lie in (0, 1]");
  if (e == 1.0) return 0.0;
  double lo = 0.0, hi = 1.0;
  while (restitution_of_damping_ratio(hi) > e) {
    lo = hi;
    hi *= 2.0;
  }
  for (int it = 0; it < 200 && hi - lo > 1e-15 * hi; ++it) {
    const double mid = 0.5 * (lo + hi);
    (restitution_of_damping_ratio(mid) > e ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

struct ContactLaw {
  ContactLaw() = default;
  // Validates and derives the damping ratio; change the fields only through this constructor.
  ContactLaw(double k, double e, double mu, double mu_rolling = 0.0)
      : stiffness(k), restitution(e), friction(mu), rolling_friction(mu_rolling) {
    if (!(k >= 0.0) || !(mu >= 0.0) || !(mu_rolling >= 0.0))
      throw std::invalid_argument("contact stiffness and friction must be >= 0");
    damping_ratio = damping_ratio_for_restitution(e);
  }
  double stiffness = 0;      // k, N/m
  double restitution = 1;    // e in (0, 1]
  double friction = 0;       // Coulomb μ
  double rolling_friction = 0;  // μ_r: rolling torque up to μ_r F_n r_eff
  double damping_ratio = 0;  // ζ with restitution_of_damping_ratio(ζ) = e
};

// Forces and world-frame torques on bodies i and j (j unused for planes); energy = ½ k δ².
struct ContactForce {
  Eigen::Vector3d fi = Eigen::Vector3d::Zero(), ti = Eigen::Vector3d::Zero();
  Eigen::Vector3d fj = Eigen::Vector3d::Zero(), tj = Eigen::Vector3d::Zero();
  double energy = 0;
  bool active = false;
};

namespace detail {
// Normal magnitude (>= 0) and friction force on i for slip velocity `slip` of i relative to j at the contact
// point, unit normal n from i towards j, overlap delta, sqrt(k m_eff).
inline void contact_forces(const ContactLaw& law, double delta, double sqrt_km, const Eigen::Vector3d& n,
                           const Eigen::Vector3d& slip, double& fn, Eigen::Vector3d& ft) {
  const double approach = slip.dot(n);  // > 0 while closing
  fn = std::max(0.0, law.stiffness * delta + 2.0 * law.damping_ratio * sqrt_km * approach);
  const Eigen::Vector3d vt = slip - approach * n;
  const double s = vt.norm();
  const double ct = 2.0 * sqrt_km;  // regularisation: viscous below the Coulomb limit, so slip -> 0 is smooth
  const double limit = law.friction * fn;
  const double per_speed = ct * s <= limit ? ct : limit / s;  // s == 0 takes the viscous branch
  ft = -per_speed * vt;
}

// Rolling resistance torque on i for relative spin `spin` = ω_i − ω_j: up to μ_r F_n r_eff against the
// spin, regularised like the sliding friction (viscous, 2 sqrt(k m_eff) r_eff², below the limit), so it
// stops a rolling sphere smoothly and never drives one. The pair's torques cancel: angular momentum holds.
inline Eigen::Vector3d rolling_torque(const ContactLaw& law, double fn, double sqrt_km, double r_eff,
                                      const Eigen::Vector3d& spin) {
  if (law.rolling_friction <= 0.0) return Eigen::Vector3d::Zero();
  const double s = spin.norm();
  const double cr = 2.0 * sqrt_km * r_eff * r_eff;
  const double limit = law.rolling_friction * fn * r_eff;
  return -(cr * s <= limit ? cr : limit / s) * spin;
}
}  // namespace detail

// Sphere i against sphere j. The contact point sits mid-overlap on the line of centres, at distances
// r_i − δ/2 from i and r_j − δ/2 from j, which sum to |p_j − p_i|.
inline ContactForce sphere_sphere(const Eigen::Vector3d& pi, const Eigen::Vector3d& vi, const Eigen::Vector3d& wi,
                                  double ri, double mi, const Eigen::Vector3d& pj, const Eigen::Vector3d& vj,
                                  const Eigen::Vector3d& wj, double rj, double mj, const ContactLaw& law) {
  ContactForce out;
  const Eigen::Vector3d d = pj - pi;
  const double reach = ri + rj;
  const double L2 = d.squaredNorm();
  if (!(L2 < reach * reach)) return out;
  const double L = std::sqrt(L2);
  // Coincident centres have no normal; any fixed direction keeps the pair's forces balanced.
  const Eigen::Vector3d n = L > 0.0 ? Eigen::Vector3d(d / L) : Eigen::Vector3d::UnitX();
  const double delta = reach - L;
  const double li = ri - 0.5 * delta, lj = rj - 0.5 * delta;
  const Eigen::Vector3d slip = (vi + wi.cross(li * n)) - (vj - wj.cross(lj * n));
  double fn;
  Eigen::Vector3d ft;
  const double sqrt_km = std::sqrt(law.stiffness * (mi * mj / (mi + mj)));
  detail::contact_forces(law, delta, sqrt_km, n, slip, fn, ft);
  const Eigen::Vector3d rolling = detail::rolling_torque(law, fn, sqrt_km, ri * rj / reach, wi - wj);
  out.fi = ft - fn * n;
  out.fj = -out.fi;
  out.ti = (li * n).cross(ft) + rolling;
  out.tj = (lj * n).cross(ft) - rolling;  // (−l_j n) × (−F_t)
  out.energy = 0.5 * law.stiffness * delta * delta;
  out.active = true;
  return out;
}

// Sphere against a fixed half-space {x : (x − point)·n >= 0}; n is the unit normal into the free side.
// The contact point is the centre's projection onto the plane.
inline ContactForce sphere_plane(const Eigen::Vector3d& p, const Eigen::Vector3d& v, const Eigen::Vector3d& w,
                                 double r, double m, const Eigen::Vector3d& point,
                                 const Eigen::Vector3d& unit_normal, const ContactLaw& law) {
  ContactForce out;
  const double dist = (p - point).dot(unit_normal);
  const double delta = r - dist;
  if (!(delta > 0.0)) return out;
  const Eigen::Vector3d lever = -dist * unit_normal;  // centre -> contact point
  const Eigen::Vector3d n = -unit_normal;             // from the sphere towards the wall
  double fn;
  Eigen::Vector3d ft;
  const double sqrt_km = std::sqrt(law.stiffness * m);
  detail::contact_forces(law, delta, sqrt_km, n, v + w.cross(lever), fn, ft);
  out.fi = ft - fn * n;
  out.ti = lever.cross(ft) + detail::rolling_torque(law, fn, sqrt_km, r, w);
  out.energy = 0.5 * law.stiffness * delta * delta;
  out.active = true;
  return out;
}

// Pair law from two materials: μ = sqrt(μ_a μ_b) (zero if either is frictionless), likewise μ_r,
// e = min(e_a, e_b).
inline ContactLaw combine(const Material& a, const Material& b, double stiffness) {
  return ContactLaw(stiffness, std::min(a.restitution, b.restitution), std::sqrt(a.friction * b.friction),
                    std::sqrt(a.rolling_friction * b.rolling_friction));
}

// Same rule between a material and an obstacle.
inline ContactLaw combine(const Material& a, const Obstacle& o, double stiffness) {
  return ContactLaw(stiffness, std::min(a.restitution, o.restitution), std::sqrt(a.friction * o.friction),
                    std::sqrt(a.rolling_friction * o.rolling_friction));
}

}  // namespace percussion::physics
