#include "percussion/methods/bdem/verlet_step.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "percussion/geometry/obstacle.hpp"
#include "percussion/methods/bdem/boundary_motion.hpp"
#include "percussion/physics/bond_forces.hpp"
#include "percussion/physics/quaternion.hpp"

namespace percussion::bdem {

void VerletStep::evaluate_pair(std::size_t k, bool all_move) {
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
  Pair& p = d_.pairs[k];
  if (p.bond >= 0) {
    Bond& bond = d_.bonds[p.bond];
    const physics::BondForces bf =
        physics::bond_forces(x[p.a], q[p.a], x[p.b], q[p.b], bond.rest, scene_.bonds.tensile_only);
    // A bond to a coasting particle holds: the coasting side's strain is not followed.
    if (!physics::bond_breaks(bf.sigma, bf.tau, bond.sigma_c, bond.tau_c) ||
        (!all_move && (moving_[p.a] == 0 || moving_[p.b] == 0))) {
      store(k, bf.fi, bf.ti, bf.fj, bf.tj);
      interaction_energy += bf.energy;
      return;
    }
    // Broken at this state: the pair falls through to contact, here and in every later evaluation, so
    // the forces stored in a checkpoint are those of the bond state stored with them.
    bond.intact = false;
    if (break_log) break_log->push_back(bond.la);
    p.bond = -1;
    ++breaks;
  }
  const physics::ContactForce cf = physics::sphere_sphere(
      x[p.a], d_.v[p.a], d_.w[p.a], d_.radius[p.a], d_.mass[p.a], x[p.b], d_.v[p.b], d_.w[p.b], d_.radius[p.b],
      d_.mass[p.b], d_.pair_law(d_.material[p.a], d_.material[p.b]));
  if (cf.active) {
    store(k, cf.fi, cf.ti, cf.fj, cf.tj);
    interaction_energy += cf.energy;
    ++contacts;
  } else {
    std::fill_n(&c[12 * k], 12, 0.0);
  }
}

void VerletStep::compute_forces() {
  {
    ScopedPhase timer(timers_, Phase::Pairs);
    interaction_energy = 0;
    contacts = 0;
    const bool all_move = !coasting();
    const std::size_t n_eval = all_move ? d_.pairs.size() : moving_pairs_.size();
    for (std::size_t e = 0; e < n_eval; ++e) evaluate_pair(all_move ? e : moving_pairs_[e], all_move);
    joined_.clear();
  }
  sum_forces();
}

void VerletStep::compute_forces_of_joined() {
  if (!coasting()) {
    compute_forces();
    return;
  }
  {
    ScopedPhase timer(timers_, Phase::Pairs);
    interaction_energy = 0;
    contacts = 0;
    // Each pair of a joined slot once (a pair of two joined slots is met twice), in no particular order: a pair's
    // terms do not depend on when it is evaluated, and the sums below run in slot order.
    pair_seen_.resize(d_.pairs.size(), 0);
    if (++evaluation_ == 0) {  // (wrapped: no stamp may match)
      std::fill(pair_seen_.begin(), pair_seen_.end(), 0);
      evaluation_ = 1;
    }
    for (const std::int32_t slot : joined_)
      for (std::uint32_t e = pair_start_[slot]; e < pair_start_[slot + 1]; ++e) {
        const std::uint32_t k = pair_index_[e];
        if (pair_seen_[k] == evaluation_) continue;
        pair_seen_[k] = evaluation_;
        evaluate_pair(k, false);
      }
    joined_.clear();
  }
  sum_forces();
}

void VerletStep::sum_forces() {
  // Coasting: only the moving particles take forces (a coasting one's neighbours' pull would tear it from its own).
  const std::vector<std::int32_t>* only = coasting() ? &moving_owned_list_ : nullptr;
  d_.sum_pairs(force, torque, only);
  // Per-particle terms after the pair sums, always in the same order.
  ScopedPhase timer(timers_, Phase::Pairs);
  const std::size_t n_terms = only ? only->size() : d_.n_owned;
  for (std::size_t e = 0; e < n_terms; ++e) {
    const std::size_t i = only ? static_cast<std::size_t>((*only)[e]) : e;
    for (std::size_t o = 0; o < scene_.obstacles.size(); ++o) {
      const physics::ContactLaw& law = d_.obstacle_law(o, d_.material[i]);
      geometry::for_each_plane(scene_.obstacles[o], [&](const Eigen::Vector3d& point, const Eigen::Vector3d& normal) {
        const physics::ContactForce cf =
            physics::sphere_plane(d_.x[i], d_.v[i], d_.w[i], d_.radius[i], d_.mass[i], point, normal, law);
        if (!cf.active) return;
        force[i] += cf.fi;
        torque[i] += cf.ti;
        interaction_energy += cf.energy;
        ++contacts;
      });
    }
    force[i] += d_.mass[i] * scene_.gravity;
  }
}

void VerletStep::advance(double t, double h, long step) {
  auto half_kick = [&](std::size_t i) {
    const double inv_m = 1.0 / d_.mass[i];
    const double inv_i = 1.0 / (0.4 * d_.mass[i] * d_.radius[i] * d_.radius[i]);
    d_.v[i] += (0.5 * h * inv_m) * force[i];
    d_.w[i] += (0.5 * h * inv_i) * torque[i];
  };
  auto drift = [&](std::size_t i) {
    half_kick(i);
    d_.x[i] += h * d_.v[i];
    d_.q[i] = quat::advance_world(d_.q[i], d_.w[i], h);
  };
  auto prescribed = [&](std::size_t i) {  // driven or clamped: prescribed rigid motion
    prescribed_step(scene_.boundary_conditions[d_.constraint[i]], t, h, d_.x[i], d_.q[i], d_.v[i], d_.w[i]);
  };
  const bool lazy = coasting();
  {
    ScopedPhase timer(timers_, Phase::Integrate);
    if (lazy) {  // the moving and prescribed particles, then the coasting ones something reads
      for (const std::int32_t i : moving_owned_list_)
        if (d_.constraint[i] < 0) drift(static_cast<std::size_t>(i));
      for (const std::int32_t i : prescribed_) prescribed(static_cast<std::size_t>(i));
      coast_time_ += h;
      for (const std::int32_t i : readers_) bring_up_to_date(static_cast<std::size_t>(i));
    } else {
      for (std::size_t i = 0; i < d_.n_owned; ++i) d_.constraint[i] >= 0 ? prescribed(i) : drift(i);
    }
  }
  if (lazy ? pairs_may_be_missed(step) : d_.needs_rebuild(step)) {  // (every particle is then up to date)
    d_.rebuild();
    ++rebuilds;
    if (lazy) {  // new ghosts and pairs
      d_.forward(moving_);
      set_coast_origin();
      index_pairs();
    }
  } else {
    d_.refresh_ghosts();
  }
  compute_forces();
  ScopedPhase timer(timers_, Phase::Integrate);
  if (lazy) {
    for (const std::int32_t i : moving_owned_list_)
      if (d_.constraint[i] < 0) half_kick(static_cast<std::size_t>(i));
  } else {
    for (std::size_t i = 0; i < d_.n_owned; ++i)
      if (d_.constraint[i] < 0) half_kick(i);
  }
}

void VerletStep::coast() {
  coasting_ = true;
  joined_.clear();
  moving_.assign(d_.x.size(), 0.0);
  moving_owned_list_.clear();
  prescribed_.clear();
  for (std::size_t i = 0; i < d_.n_owned; ++i)
    if (d_.constraint[i] >= 0) prescribed_.push_back(static_cast<std::int32_t>(i));
  coast_q_.assign(d_.q.begin(), d_.q.begin() + static_cast<std::ptrdiff_t>(d_.n_owned));
  coast_time_ = 0;
  set_coast_origin();
  index_pairs();
}

void VerletStep::uncoast() {
  if (!coasting_) return;
  bring_all_up_to_date();
  coasting_ = false;
  moving_.clear();
  moving_owned_list_.clear();
  moving_pairs_.clear();
  readers_.clear();
  read_.clear();
  joined_.clear();
}

bool VerletStep::behind(std::size_t i) const { return moving_[i] == 0 && d_.constraint[i] < 0; }

void VerletStep::bring_up_to_date(std::size_t i) {
  // A coasting particle flies at its velocity under gravity and turns at its constant ω: its state follows from
  // the origin in closed form however many steps have passed (velocity Verlet under a constant force is exact).
  if (!behind(i)) return;
  const double s = coast_time_ - origin_time_;
  d_.x[i] = origin_x_[i] + s * origin_v_[i] + (0.5 * s * s) * scene_.gravity;
  d_.v[i] = origin_v_[i] + s * scene_.gravity;
  if (coast_time_ != 0) d_.q[i] = quat::advance_world(coast_q_[i], d_.w[i], coast_time_);
}

void VerletStep::bring_all_up_to_date() {
  for (std::size_t i = 0; i < d_.n_owned; ++i) bring_up_to_date(i);
}

void VerletStep::set_coast_origin() {
  // Every owned particle is up to date. For the rebuild test: the coasting particles' displacements since the last
  // rebuild, a_i, and velocities, b_i, about the centres α, β of their boxes over all ranks, and their largest
  // distances R_a, R_b from them.
  const std::size_t n = d_.n_owned;
  origin_x_.assign(d_.x.begin(), d_.x.begin() + static_cast<std::ptrdiff_t>(n));
  origin_v_.assign(d_.v.begin(), d_.v.begin() + static_cast<std::ptrdiff_t>(n));
  origin_time_ = coast_time_;
  double box[12];  // −min and max of a, then of b
  std::fill_n(box, 12, -std::numeric_limits<double>::infinity());
  for (std::size_t i = 0; i < n; ++i) {
    if (!behind(i)) continue;
    const Eigen::Vector3d a = d_.displacement(i), &b = d_.v[i];
    for (int k = 0; k < 3; ++k) {
      box[k] = std::max(box[k], -a[k]);
      box[3 + k] = std::max(box[3 + k], a[k]);
      box[6 + k] = std::max(box[6 + k], -b[k]);
      box[9 + k] = std::max(box[9 + k], b[k]);
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, box, 12, MPI_DOUBLE, MPI_MAX, d_.comm);
  any_behind_ = std::isfinite(box[0]);
  if (!any_behind_) return;
  for (int k = 0; k < 3; ++k) {
    centre_a_[k] = 0.5 * (box[3 + k] - box[k]);
    centre_b_[k] = 0.5 * (box[9 + k] - box[6 + k]);
  }
  double radii[2] = {0, 0};
  for (std::size_t i = 0; i < n; ++i) {
    if (!behind(i)) continue;
    radii[0] = std::max(radii[0], (d_.displacement(i) - centre_a_).norm());
    radii[1] = std::max(radii[1], (d_.v[i] - centre_b_).norm());
  }
  MPI_Allreduce(MPI_IN_PLACE, radii, 2, MPI_DOUBLE, MPI_MAX, d_.comm);
  radius_a_ = radii[0];
  radius_b_ = radii[1];
}

bool VerletStep::pairs_may_be_missed(long step) {
  // Domain::needs_rebuild's test holds for any common displacement t. With t = α + s β + ½ s² g (s the time since the
  // origin), a coasting particle's displacement a_i + s b_i + ½ s² g lies within R_a + s R_b of it, so only the
  // stepped particles are visited while that bound clears the skin; past it, the particles are brought up to date
  // and tested as Domain does.
  if (any_behind_) {
    const double s = coast_time_ - origin_time_;
    const Eigen::Vector3d t = centre_a_ + s * centre_b_ + (0.5 * s * s) * scene_.gravity;
    double bound = radius_a_ + s * radius_b_;
    auto visit = [&](std::int32_t i) { bound = std::max(bound, (d_.displacement(i) - t).norm()); };
    for (const std::int32_t i : moving_owned_list_) visit(i);
    for (const std::int32_t i : prescribed_) visit(i);
    MPI_Allreduce(MPI_IN_PLACE, &bound, 1, MPI_DOUBLE, MPI_MAX, d_.comm);
    if (d_.within_skin(bound)) return false;  // (a non-finite state fails it and is reported below)
  }
  ++full_rebuild_tests;
  bring_all_up_to_date();
  if (d_.needs_rebuild(step)) return true;
  set_coast_origin();
  return false;
}

void VerletStep::reads_state(std::size_t i) {
  if (read_[i] != 0) return;
  read_[i] = 1;
  readers_.push_back(static_cast<std::int32_t>(i));
  bring_up_to_date(i);
}

void VerletStep::move(const std::vector<std::int32_t>& owned) {
  for (const std::int32_t i : owned)
    if (moving_[i] == 0) {
      bring_up_to_date(static_cast<std::size_t>(i));  // from now on stepped
      moving_[i] = 1;
      moving_owned_list_.push_back(i);
      joined_.push_back(i);
      list_pairs_of(static_cast<std::size_t>(i));
    }
  std::sort(moving_owned_list_.begin(), moving_owned_list_.end());  // their per-particle terms in slot order
  const std::vector<double> before(moving_.begin() + static_cast<std::ptrdiff_t>(d_.n_owned), moving_.end());
  d_.forward(moving_);
  for (std::size_t g = 0; g < before.size(); ++g)
    if (before[g] == 0 && moving_[d_.n_owned + g] != 0) {
      list_pairs_of(d_.n_owned + g);
      joined_.push_back(static_cast<std::int32_t>(d_.n_owned + g));
    }
}

void VerletStep::list_pairs_of(std::size_t slot) {
  for (std::uint32_t e = pair_start_[slot]; e < pair_start_[slot + 1]; ++e) {
    const std::uint32_t k = pair_index_[e];
    if (pair_listed_[k]) continue;
    pair_listed_[k] = 1;
    moving_pairs_.push_back(k);
    const Pair& p = d_.pairs[k];  // its force reads both states
    reads_state(static_cast<std::size_t>(p.a));
    if (static_cast<std::size_t>(p.b) < d_.n_owned) reads_state(static_cast<std::size_t>(p.b));
  }
}

void VerletStep::index_pairs() {
  // Each local slot's pairs, in pair order; the list of pairs to evaluate starts again from the moving slots.
  const std::size_t n = d_.x.size(), np = d_.pairs.size();
  pair_start_.assign(n + 1, 0);
  for (const Pair& p : d_.pairs) {
    ++pair_start_[p.a + 1];
    ++pair_start_[p.b + 1];
  }
  for (std::size_t i = 0; i < n; ++i) pair_start_[i + 1] += pair_start_[i];
  pair_index_.resize(2 * np);
  std::vector<std::uint32_t> next(pair_start_.begin(), pair_start_.end() - 1);
  for (std::size_t k = 0; k < np; ++k) {
    pair_index_[next[d_.pairs[k].a]++] = static_cast<std::uint32_t>(k);
    pair_index_[next[d_.pairs[k].b]++] = static_cast<std::uint32_t>(k);
  }
  // (The pairs left out keep stale contributions: both their particles coast, and compute_forces gives a coasting
  // particle gravity alone, on its owner too.)
  pair_listed_.assign(np, 0);
  moving_pairs_.clear();
  read_.assign(d_.n_owned, 0);
  readers_.clear();
  for (const std::int32_t s : d_.sent_slots()) reads_state(static_cast<std::size_t>(s));  // the ghosts' owners
  for (std::size_t i = 0; i < n; ++i)
    if (moving_[i] != 0) list_pairs_of(i);
}

}  // namespace percussion::bdem
