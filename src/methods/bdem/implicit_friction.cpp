// Friction of the implicit bonded DEM as a velocity post-process after each step's solve (notes 2.7,
// eqs. 34-35, Algorithm 3 line 15).
#include <Eigen/Geometry>
#include <algorithm>

#include "percussion/geometry/obstacle.hpp"
#include "percussion/methods/bdem/implicit_bdem.hpp"

namespace percussion::bdem {

void ImplicitBdem::apply_friction() {
  // Coulomb friction as a velocity post-process (notes 2.7, eqs. 34–35): each contact removes up to
  // μ|F_n|h/m of the relative tangential velocity; the change per particle is projected on its velocity
  // and capped so friction can stop a particle but never reverse it. Rolling friction is not modelled.
  ScopedPhase timer(timers_, Phase::Integrate);
  const double h = dt_;
  std::vector<double>& c = d_.pair_contributions();
  std::fill(c.begin(), c.end(), 0.0);
  for (std::size_t k = 0; k < d_.pairs.size(); ++k) {
    const Pair& p = d_.pairs[k];
    if (p.bond >= 0 && d_.bonds[p.bond].intact) continue;
    const Eigen::Vector3d delta = d_.x[p.b] - d_.x[p.a];
    const double L = delta.norm(), overlap = d_.radius[p.a] + d_.radius[p.b] - L;
    if (overlap <= 0 || L <= 0) continue;
    const Eigen::Vector3d nrm = delta / L;
    const Eigen::Vector3d vrel = d_.v[p.a] - d_.v[p.b];
    const Eigen::Vector3d vt = vrel - vrel.dot(nrm) * nrm;
    const double vt_norm = vt.norm();
    if (vt_norm <= 0) continue;
    const double impulse = d_.pair_law(d_.material[p.a], d_.material[p.b]).friction * contact_k_ * overlap * h;
    const Eigen::Vector3d dva = -std::min(1.0, impulse / (d_.mass[p.a] * vt_norm)) * vt;
    const Eigen::Vector3d dvb = std::min(1.0, impulse / (d_.mass[p.b] * vt_norm)) * vt;
    std::copy_n(dva.data(), 3, &c[12 * k]);
    std::copy_n(dvb.data(), 3, &c[12 * k + 6]);
  }
  d_.sum_pairs(gp_, gy_);
  for (std::size_t i = 0; i < d_.n_owned; ++i) {
    if (d_.constraint[i] >= 0) continue;
    Eigen::Vector3d dv = gp_[i];
    for (std::size_t o = 0; o < scene_.obstacles.size(); ++o)
      geometry::for_each_plane(scene_.obstacles[o], [&](const Eigen::Vector3d& point, const Eigen::Vector3d& normal) {
        const double gap = (d_.x[i] - point).dot(normal) - d_.radius[i];
        if (gap >= 0) return;
        const Eigen::Vector3d vt = d_.v[i] - d_.v[i].dot(normal) * normal;
        const double vt_norm = vt.norm();
        if (vt_norm <= 0) return;
        const double impulse = d_.obstacle_law(o, d_.material[i]).friction * contact_k_ * (-gap) * h;
        dv -= std::min(1.0, impulse / (d_.mass[i] * vt_norm)) * vt;
      });
    const double speed = d_.v[i].norm();
    if (speed <= 0) continue;
    const Eigen::Vector3d dir = d_.v[i] / speed;
    d_.v[i] += std::clamp(dv.dot(dir), -speed, 0.0) * dir;
  }
  // Ghost velocities stay stale until the next step refreshes them: nothing reads them before that.
}

}  // namespace percussion::bdem
