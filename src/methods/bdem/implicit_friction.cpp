// Friction of the implicit bonded DEM as a velocity post-process after each step's solve (notes 2.7,
// eqs. 34-35, Algorithm 3 line 15).
#include <Eigen/Geometry>
#include <algorithm>

#include "percussion/geometry/obstacle.hpp"
#include "percussion/methods/bdem/implicit_bdem.hpp"

namespace percussion::bdem {

namespace {

// Share of a relative velocity `rel` that a contact removes from a particle: min(1, budget / |rel|) rel,
// where budget = what the contact's impulse can change in the particle's velocity (eqs. 34–35).
Eigen::Vector3d removed(const Eigen::Vector3d& rel, double budget) {
  const double n = rel.norm();
  return n > 0 ? Eigen::Vector3d(std::min(1.0, budget / n) * rel) : Eigen::Vector3d::Zero();
}

// Adds the projection of `change` on the direction of `velocity`, capped so the velocity can stop but
// never reverse (notes 2.7); applied after the contributions of all contacts are summed.
void apply_capped(Eigen::Vector3d& velocity, const Eigen::Vector3d& change) {
  const double speed = velocity.norm();
  if (speed <= 0) return;
  const Eigen::Vector3d dir = velocity / speed;
  velocity += std::clamp(change.dot(dir), -speed, 0.0) * dir;
}

}  // namespace

void ImplicitBdem::apply_friction() {
  // Coulomb and rolling friction as a velocity post-process (notes 2.7, eqs. 34–35): each contact removes up
  // to μ|F_n|h/m of the relative tangential velocity and up to μ_r|F_n| r h/I of the relative spin
  // ([ERRATUM] eq. 35 prints r³; a torque is F·r). The summed change per particle is projected on its
  // velocity (spin) and capped so friction can stop a particle but never reverse it.
  ScopedPhase timer(timers_, Phase::Integrate);
  const double h = h_;
  auto inertia = [&](std::size_t i) { return 0.4 * d_.mass[i] * d_.radius[i] * d_.radius[i]; };
  std::vector<double>& c = d_.pair_contributions();
  std::fill(c.begin(), c.end(), 0.0);
  for (std::size_t k = 0; k < d_.pairs.size(); ++k) {
    const Pair& p = d_.pairs[k];
    if (p.bond >= 0) continue;
    const Eigen::Vector3d delta = d_.x[p.b] - d_.x[p.a];
    const double L = delta.norm(), overlap = d_.radius[p.a] + d_.radius[p.b] - L;
    if (overlap <= 0 || L <= 0) continue;
    const Eigen::Vector3d nrm = delta / L;
    const Eigen::Vector3d vrel = d_.v[p.a] - d_.v[p.b];
    const Eigen::Vector3d vt = vrel - vrel.dot(nrm) * nrm;
    const Eigen::Vector3d wrel = d_.w[p.a] - d_.w[p.b];
    const physics::ContactLaw& law = d_.pair_law(d_.material[p.a], d_.material[p.b]);
    const double impulse = contact_k_ * overlap * h;  // |F_n| h
    const Eigen::Vector3d dva = -removed(vt, law.friction * impulse / d_.mass[p.a]);
    const Eigen::Vector3d dvb = removed(vt, law.friction * impulse / d_.mass[p.b]);
    const Eigen::Vector3d dwa = -removed(wrel, law.rolling_friction * impulse * d_.radius[p.a] / inertia(p.a));
    const Eigen::Vector3d dwb = removed(wrel, law.rolling_friction * impulse * d_.radius[p.b] / inertia(p.b));
    std::copy_n(dva.data(), 3, &c[12 * k]);
    std::copy_n(dwa.data(), 3, &c[12 * k + 3]);
    std::copy_n(dvb.data(), 3, &c[12 * k + 6]);
    std::copy_n(dwb.data(), 3, &c[12 * k + 9]);
  }
  d_.sum_pairs(gp_, gy_);
  for (std::size_t i = 0; i < d_.n_owned; ++i) {
    if (d_.constraint[i] >= 0) continue;
    Eigen::Vector3d dv = gp_[i], dw = gy_[i];
    for (std::size_t o = 0; o < scene_.obstacles.size(); ++o)
      geometry::for_each_plane(scene_.obstacles[o], [&](const Eigen::Vector3d& point, const Eigen::Vector3d& normal) {
        const double gap = (d_.x[i] - point).dot(normal) - d_.radius[i];
        if (gap >= 0) return;
        const physics::ContactLaw& law = d_.obstacle_law(o, d_.material[i]);
        const double impulse = contact_k_ * (-gap) * h;
        dv -= removed(d_.v[i] - d_.v[i].dot(normal) * normal, law.friction * impulse / d_.mass[i]);
        dw -= removed(d_.w[i], law.rolling_friction * impulse * d_.radius[i] / inertia(i));
      });
    apply_capped(d_.v[i], dv);
    apply_capped(d_.w[i], dw);
  }
  // Ghost velocities stay stale until the next step refreshes them: nothing reads them before that.
}

}  // namespace percussion::bdem
