// Friction of the implicit bonded DEM as a velocity post-process after each step's solve (notes 2.7,
// eqs. 34-35, Algorithm 3 line 15), applied as equal and opposite impulses at the contact point.
//
// Why not the notes' form: it removes each particle's share of the centres' relative tangential velocity and
// caps the summed change against the particle's own velocity. Friction between two particles falling together
// (a small slip against a fast fall) then brakes their fall, and the brake grows with the number of steps, so a
// falling body lands far slower than the explicit one. Centre velocities also brake a sphere that rolls without
// slipping and never set a sliding
// one rolling. Here each contact acts on the slip of its contact point, as the explicit contact does, with an
// impulse that changes both particles' velocities and spins: momentum and angular momentum hold, and a uniform
// motion of the whole scene changes nothing.
#include <Eigen/Geometry>
#include <algorithm>

#include "percussion/geometry/obstacle.hpp"
#include "percussion/methods/bdem/implicit_bdem.hpp"

namespace percussion::bdem {

namespace {

// Impulse magnitude a contact spends against a slip or relative spin `rel`: the Coulomb budget, but no more
// than stops `rel` (whose change per unit impulse is `compliance`), shared among the `contacts` contacts of its
// busier particle, so the summed changes of a particle stop its slips but do not reverse them.
double impulse(const Eigen::Vector3d& rel, double budget, double compliance, double contacts) {
  return compliance > 0 ? std::min(budget, rel.norm() / (compliance * contacts)) : 0.0;
}

Eigen::Vector3d direction(const Eigen::Vector3d& rel) {
  const double n = rel.norm();
  return n > 0 ? Eigen::Vector3d(rel / n) : Eigen::Vector3d::Zero();
}

}  // namespace

void ImplicitBdem::apply_friction() {
  // Coulomb and rolling friction as a velocity post-process (notes 2.7, eqs. 34–35). A contact with normal n
  // (from a to b) and levers l_a, l_b from the centres to its point (as the explicit contact) slips at
  // s = v_a + ω_a × l_a n − v_b + ω_b × l_b n. An impulse −P (P along the tangential slip) on a and +P on b, at
  // that point, changes the slip by −P (1/m_a + l_a²/I_a + 1/m_b + l_b²/I_b); |P| <= μ|F_n|h. Rolling: up to
  // μ_r|F_n| r_eff h against the relative spin ([ERRATUM] eq. 35 prints r³; a torque is F·r; r_eff =
  // r_a r_b/(r_a + r_b) as the explicit contact, r against a plane). A prescribed particle is infinitely heavy.
  ScopedPhase timer(timers_, Phase::Integrate);
  const double h = h_;
  auto inertia = [&](std::size_t i) { return 0.4 * d_.mass[i] * d_.radius[i] * d_.radius[i]; };
  auto free = [&](std::size_t i) { return d_.constraint[i] < 0; };
  auto overlap_of = [&](const Pair& p) {
    if (p.bond >= 0) return 0.0;
    return d_.radius[p.a] + d_.radius[p.b] - (d_.x[p.b] - d_.x[p.a]).norm();
  };
  auto plane_distance = [&](std::size_t i, const Eigen::Vector3d& point, const Eigen::Vector3d& normal) {
    return (d_.x[i] - point).dot(normal);
  };

  // Contacts per particle, ghosts included (their other contacts are on other ranks); nothing to do, and no
  // exchange, while no rank has a contact.
  std::vector<double>& c = d_.pair_contributions();
  std::fill(c.begin(), c.end(), 0.0);
  long any = 0;
  for (std::size_t k = 0; k < d_.pairs.size(); ++k)
    if (overlap_of(d_.pairs[k]) > 0) {
      c[12 * k] = c[12 * k + 6] = 1.0;
      any = 1;
    }
  contacts_of_.assign(d_.x.size(), 0.0);
  for (std::size_t i = 0; i < d_.n_owned; ++i)
    for (const auto& o : scene_.obstacles)
      geometry::for_each_plane(o, [&](const Eigen::Vector3d& point, const Eigen::Vector3d& normal) {
        if (plane_distance(i, point, normal) < d_.radius[i]) {
          contacts_of_[i] += 1.0;
          any = 1;
        }
      });
  MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_LONG, MPI_MAX, d_.comm);
  if (!any) return;
  d_.sum_pairs(gp_, gy_);
  for (std::size_t i = 0; i < d_.n_owned; ++i) contacts_of_[i] += gp_[i].x();
  d_.forward(contacts_of_);

  std::fill(c.begin(), c.end(), 0.0);
  for (std::size_t k = 0; k < d_.pairs.size(); ++k) {
    const Pair& p = d_.pairs[k];
    const double overlap = overlap_of(p);
    if (overlap <= 0) continue;
    const bool fa = free(p.a), fb = free(p.b);
    if (!fa && !fb) continue;
    const Eigen::Vector3d n = direction(d_.x[p.b] - d_.x[p.a]);
    const double la = d_.radius[p.a] - 0.5 * overlap, lb = d_.radius[p.b] - 0.5 * overlap;
    const double ma = d_.mass[p.a], mb = d_.mass[p.b], ia = inertia(p.a), ib = inertia(p.b);
    const Eigen::Vector3d slip = d_.v[p.a] + d_.w[p.a].cross(la * n) - d_.v[p.b] + d_.w[p.b].cross(lb * n);
    const Eigen::Vector3d st = slip - slip.dot(n) * n;
    const Eigen::Vector3d spin = d_.w[p.a] - d_.w[p.b];
    const physics::ContactLaw& law = d_.pair_law(d_.material[p.a], d_.material[p.b]);
    const double fn_h = contact_k_ * overlap * h;  // |F_n| h
    const double contacts = std::max(contacts_of_[p.a], contacts_of_[p.b]);
    const double slip_compliance = (fa ? 1 / ma + la * la / ia : 0.0) + (fb ? 1 / mb + lb * lb / ib : 0.0);
    const double spin_compliance = (fa ? 1 / ia : 0.0) + (fb ? 1 / ib : 0.0);
    const double r_eff = d_.radius[p.a] * d_.radius[p.b] / (d_.radius[p.a] + d_.radius[p.b]);
    const Eigen::Vector3d P = impulse(st, law.friction * fn_h, slip_compliance, contacts) * direction(st);
    const Eigen::Vector3d Q = impulse(spin, law.rolling_friction * fn_h * r_eff, spin_compliance, contacts) *
                              direction(spin);
    const Eigen::Vector3d dva = -P / ma, dvb = P / mb;
    const Eigen::Vector3d dwa = (n.cross(P) * -la - Q) / ia, dwb = (n.cross(P) * -lb + Q) / ib;
    std::copy_n(dva.data(), 3, &c[12 * k]);
    std::copy_n(dwa.data(), 3, &c[12 * k + 3]);
    std::copy_n(dvb.data(), 3, &c[12 * k + 6]);
    std::copy_n(dwb.data(), 3, &c[12 * k + 9]);
  }
  d_.sum_pairs(gp_, gy_);
  for (std::size_t i = 0; i < d_.n_owned; ++i) {
    if (!free(i)) continue;
    Eigen::Vector3d dv = gp_[i], dw = gy_[i];
    const double m = d_.mass[i], in = inertia(i);
    for (std::size_t o = 0; o < scene_.obstacles.size(); ++o)
      geometry::for_each_plane(scene_.obstacles[o], [&](const Eigen::Vector3d& point, const Eigen::Vector3d& normal) {
        const double dist = plane_distance(i, point, normal), depth = d_.radius[i] - dist;
        if (depth <= 0) return;
        const Eigen::Vector3d lever = -dist * normal;  // centre -> contact point
        const Eigen::Vector3d slip = d_.v[i] + d_.w[i].cross(lever);
        const Eigen::Vector3d st = slip - slip.dot(normal) * normal;
        const physics::ContactLaw& law = d_.obstacle_law(o, d_.material[i]);
        const double fn_h = contact_k_ * depth * h;
        const Eigen::Vector3d P =
            impulse(st, law.friction * fn_h, 1 / m + dist * dist / in, contacts_of_[i]) * direction(st);
        const Eigen::Vector3d Q =
            impulse(d_.w[i], law.rolling_friction * fn_h * d_.radius[i], 1 / in, contacts_of_[i]) * direction(d_.w[i]);
        dv -= P / m;
        dw -= (lever.cross(P) + Q) / in;
      });
    d_.v[i] += dv;
    d_.w[i] += dw;
  }
  // Ghost velocities stay stale until the next step refreshes them: nothing reads them before that.
}

}  // namespace percussion::bdem
