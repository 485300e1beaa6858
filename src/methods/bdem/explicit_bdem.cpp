#include "percussion/methods/bdem/explicit_bdem.hpp"

#include <Eigen/Geometry>
#include <algorithm>

#include "percussion/core/log.hpp"
#include "percussion/geometry/obstacle.hpp"
#include "percussion/methods/bdem/boundary_motion.hpp"
#include "percussion/physics/bond_forces.hpp"
#include "percussion/physics/quaternion.hpp"

namespace percussion::bdem {

ExplicitBdem::ExplicitBdem(const Scene& scene, MPI_Comm comm, const GlobalModel& model)
    : BdemMethod(scene, comm, model) {
  compute_forces();
  // A checkpoint carries the forces the next half-kick needs: contact damping saw the half-step velocity when
  // they were computed, so recomputing them from the stored full-step velocity would not continue bit-identically.
  if (!model.from_checkpoint) return;
  // An implicit run's checkpoint holds ∇V at a midpoint (or zeros) there instead: keep the recomputed forces.
  if (model.written_by_integrator != "explicit") {
    log::info("explicit: the checkpoint (" + model.written_by_integrator + ") holds no forces; recomputing them");
    return;
  }
  for (std::size_t i = 0; i < d_.n_owned; ++i) {
    f_[i] = model.force[d_.gid[i]];
    t_[i] = model.torque[d_.gid[i]];
  }
}

void ExplicitBdem::compute_forces() {
  {
    ScopedPhase timer(timers_, Phase::Pairs);
    interaction_energy_ = 0;
    contacts_ = 0;
    const bool tensile_only = scene_.bonds.tensile_only;
    std::vector<double>& c = d_.pair_contributions();
    auto store = [&c](std::size_t k, const Eigen::Vector3d& fa, const Eigen::Vector3d& ta, const Eigen::Vector3d& fb,
                      const Eigen::Vector3d& tb) {
      double* o = &c[12 * k];
      for (int e = 0; e < 3; ++e) {
        o[e] = fa[e];
        o[3 + e] = ta[e];
        o[6 + e] = fb[e];
        o[9 + e] = tb[e];
      }
    };
    const auto& x = d_.x;
    const auto& q = d_.q;
    for (std::size_t k = 0; k < d_.pairs.size(); ++k) {
      Pair& p = d_.pairs[k];
      if (p.bond >= 0) {
        Bond& bond = d_.bonds[p.bond];
        const physics::BondForces bf = physics::bond_forces(x[p.a], q[p.a], x[p.b], q[p.b], bond.rest, tensile_only);
        if (!physics::bond_breaks(bf.sigma, bf.tau, bond.sigma_c, bond.tau_c)) {
          store(k, bf.fi, bf.ti, bf.fj, bf.tj);
          interaction_energy_ += bf.energy;
          continue;
        }
        // Broken at this state: the pair falls through to contact, here and in every later evaluation, so
        // the forces stored in a checkpoint are those of the bond state stored with them.
        bond.intact = false;
        p.bond = -1;
      }
      const physics::ContactForce cf = physics::sphere_sphere(
          x[p.a], d_.v[p.a], d_.w[p.a], d_.radius[p.a], d_.mass[p.a], x[p.b], d_.v[p.b], d_.w[p.b], d_.radius[p.b],
          d_.mass[p.b], d_.pair_law(d_.material[p.a], d_.material[p.b]));
      if (cf.active) {
        store(k, cf.fi, cf.ti, cf.fj, cf.tj);
        interaction_energy_ += cf.energy;
        ++contacts_;
      } else {
        std::fill_n(&c[12 * k], 12, 0.0);
      }
    }
  }
  d_.sum_pairs(f_, t_);
  // Per-particle terms after the pair sums, always in the same order.
  ScopedPhase timer(timers_, Phase::Pairs);
  for (std::size_t i = 0; i < d_.n_owned; ++i) {
    for (std::size_t o = 0; o < scene_.obstacles.size(); ++o) {
      const physics::ContactLaw& law = d_.obstacle_law(o, d_.material[i]);
      geometry::for_each_plane(scene_.obstacles[o], [&](const Eigen::Vector3d& point, const Eigen::Vector3d& normal) {
        const physics::ContactForce cf =
            physics::sphere_plane(d_.x[i], d_.v[i], d_.w[i], d_.radius[i], d_.mass[i], point, normal, law);
        if (!cf.active) return;
        f_[i] += cf.fi;
        t_[i] += cf.ti;
        interaction_energy_ += cf.energy;
        ++contacts_;
      });
    }
    f_[i] += d_.mass[i] * scene_.gravity;
  }
}

void ExplicitBdem::advance() {
  const double h = dt_;
  auto half_kick = [&](std::size_t i) {
    const double inv_m = 1.0 / d_.mass[i];
    const double inv_i = 1.0 / (0.4 * d_.mass[i] * d_.radius[i] * d_.radius[i]);
    d_.v[i] += (0.5 * h * inv_m) * f_[i];
    d_.w[i] += (0.5 * h * inv_i) * t_[i];
  };
  {
    ScopedPhase timer(timers_, Phase::Integrate);
    for (std::size_t i = 0; i < d_.n_owned; ++i) {
      if (d_.constraint[i] >= 0) {  // driven or clamped: prescribed rigid motion
        prescribed_step(scene_.boundary_conditions[d_.constraint[i]], time(), h, d_.x[i], d_.q[i], d_.v[i], d_.w[i]);
        continue;
      }
      half_kick(i);
      d_.x[i] += h * d_.v[i];
      d_.q[i] = quat::advance_world(d_.q[i], d_.w[i], h);
    }
  }
  if (d_.needs_rebuild(step_ + 1)) d_.rebuild();
  else d_.refresh_ghosts();
  compute_forces();
  {
    ScopedPhase timer(timers_, Phase::Integrate);
    for (std::size_t i = 0; i < d_.n_owned; ++i)
      if (d_.constraint[i] < 0) half_kick(i);
  }
  ++step_;
}

}  // namespace percussion::bdem
