// Fracture of the implicit bonded DEM (notes 2.6): a bond breaks when the forces and moments rebuilt from its
// potentials at a step's end put it over its strength, max(σ/σ_c, τ/τ_c) > 1, checked once per step as the paper
// does (solve_interval). implicit.fracture_rounds breaks a step's bonds in rounds instead, and
// implicit.fracture_cut_ratio halves a step that leaves a bond far over its strength (solve_interval);
// implicit.fracture_integrator "explicit" takes the intervals in which bonds break with explicit steps, and
// implicit.fracture_transient follows a step's breaks with explicit steps and keeps only what they break
// (docs/bdem.md).
#include <algorithm>
#include <cmath>

#include "percussion/methods/bdem/implicit_bdem.hpp"
#include "percussion/methods/bdem/model.hpp"
#include "percussion/physics/bond_forces.hpp"

namespace percussion::bdem {
namespace {
// A fracture round breaks the bonds within this fraction of the largest stress ratio.
constexpr double kFractureBand = 0.9;
}  // namespace

double ImplicitBdem::stress_ratio(const Bond& b) const {
  // Forces and moments rebuilt from the potentials at the current state (notes 2.6): max(σ/σ_c, τ/τ_c).
  const physics::BondStresses st =
      physics::bond_stresses(d_.x[b.la], d_.q[b.la], d_.x[b.lb], d_.q[b.lb], b.rest, scene_.bonds.tensile_only);
  return physics::stress_ratio(st.sigma, st.tau, b.sigma_c, b.tau_c);
}

double ImplicitBdem::largest_stress_ratio() {
  ScopedPhase timer(timers_, Phase::Pairs);
  double local = 0, global = 0;
  for (const auto& b : d_.bonds)
    if (b.intact) local = std::max(local, stress_ratio(b));
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, d_.comm);
  return global;
}

void ImplicitBdem::break_bonds(double above, std::vector<std::int32_t>* log) {
  // Every rank holding a bond sees the same state (ghosts are exact copies), so all decide alike.
  ScopedPhase timer(timers_, Phase::Pairs);
  const long before = breaks_;
  for (auto& b : d_.bonds)
    if (b.intact && stress_ratio(b) > above) {
      b.intact = false;
      if (log) log->push_back(b.la);
      ++breaks_;
    }
  if (breaks_ != before) d_.unlink_broken_bonds();
}

void ImplicitBdem::break_in_rounds() {
  // Progressive fracture inside the step (notes 7, "fracture bursts"): break only the most over-stressed
  // bonds, let the load redistribute by minimising again, and repeat; the step's last check (solve_interval)
  // breaks every bond still over its strength, as the paper does once per step.
  for (int round = 1; round < scene_.implicit.fracture_rounds; ++round) {
    const double worst = largest_stress_ratio();
    if (worst <= 1) break;
    ++fracture_rounds_;
    break_bonds(std::max(1.0, kFractureBand * worst));
    if (!minimise()) ++unconverged_steps_;  // not cut: the bonds already broken would have to be mended
  }
}

void ImplicitBdem::keep_interval_start() {
  const auto n = static_cast<std::ptrdiff_t>(d_.n_owned);
  p_n_.assign(d_.x.begin(), d_.x.begin() + n);
  q_n_.assign(d_.q.begin(), d_.q.begin() + n);
  v_n_.assign(d_.v.begin(), d_.v.begin() + n);
  w_n_.assign(d_.w.begin(), d_.w.begin() + n);
}

double ImplicitBdem::explicit_step() const { return scene_.time.step_factor * critical_step(scene_); }

void ImplicitBdem::restore_owned(const std::vector<Eigen::Vector3d>& x, const std::vector<Eigen::Vector4d>& q,
                                 const std::vector<Eigen::Vector3d>& v, const std::vector<Eigen::Vector3d>& w) {
  const std::size_t n = d_.n_owned;
  std::copy_n(x.begin(), n, d_.x.begin());
  std::copy_n(q.begin(), n, d_.q.begin());
  std::copy_n(v.begin(), n, d_.v.begin());
  std::copy_n(w.begin(), n, d_.w.begin());
  if (d_.needs_rebuild(step_ + 1)) d_.rebuild();  // (the explicit steps may have rebuilt the pairs where they went)
  else d_.refresh_ghosts();
}

void ImplicitBdem::explicit_interval(double t, double h) {
  // Why: a break releases its bond's energy as a stress wave of the critical step's period, which a step of 20-100
  // of them damps away (backward Euler, BDF2) before it can break the next bonds, so the implicit pieces differ
  // from the explicit ones where waves break the bonds. An undone try leaves the
  // predictor's positions and pairs: back to the interval's start, rebuilt if the try moved far.
  restore_owned(p_n_, q_n_, v_n_, w_n_);
  // The explicit run's step, or the nearest one that divides the interval.
  const long steps = std::max(1L, static_cast<long>(std::ceil(h / explicit_step() * (1 - 1e-12))));
  const double dt = h / static_cast<double>(steps);
  const long breaks_before = verlet_.breaks;
  verlet_.compute_forces();
  for (long s = 0; s < steps; ++s) verlet_.advance(t + static_cast<double>(s) * dt, dt, step_ + 1);
  d_.refresh_ghosts();  // the last half kick's velocities
  long broke = verlet_.breaks - breaks_before;
  breaks_ += broke;
  MPI_Allreduce(MPI_IN_PLACE, &broke, 1, MPI_LONG, MPI_SUM, d_.comm);
  if (broke > 0) schedule_.explicit_intervals = scene_.implicit.explicit_window;
  if (scene_.implicit.form == "bdf2") keep_bdf2_history(h);  // x_{n-1} = the interval's start, as after a minimisation
  ++explicit_intervals_;
  explicit_steps_ += steps;
}

void ImplicitBdem::fracture_transient(double t, double h, const std::vector<std::int32_t>& seeds) {
  // Why: a bond that breaks drops its load at once, and its neighbours swing past their new equilibrium by about
  // the load they took over; the minimiser finds only the equilibrium, so on a slow pull the implicit beam breaks
  // the axial bonds of every section and stays whole, where the explicit one loses its end sections
  // The release is followed with the explicit integrator's steps from the step's end
  // state until no bond has broken for implicit.fracture_transient critical steps (at most one interval h); the
  // bonds it breaks stay broken and the state goes back to the step's end.
  const std::size_t n = d_.n_owned;
  const std::vector<Eigen::Vector3d> x(d_.x.begin(), d_.x.begin() + n), v(d_.v.begin(), d_.v.begin() + n),
      w(d_.w.begin(), d_.w.begin() + n);
  const std::vector<Eigen::Vector4d> q(d_.q.begin(), d_.q.begin() + n);
  const double dt = explicit_step();
  const auto window = static_cast<long>(std::ceil(scene_.implicit.fracture_transient / scene_.time.step_factor));
  const auto cap = std::max(1L, static_cast<long>(std::ceil(h / dt * (1 - 1e-12))));
  const long breaks_before = verlet_.breaks;
  const bool local = scene_.implicit.fracture_transient_reach > 0;
  std::vector<std::int32_t> fresh;  // the bonds broken since the region last widened (their first particles)
  auto widen = [&]() {
    widen_transient_region(x, fresh);
    fresh.clear();
    d_.refresh_ghosts();  // the ghosts' velocities after the last half kick, as the owners' (contact damping)
  };
  // Forces at the current state. With a reach, the bonds they break widen the region, whose new particles need their
  // forces for the next half kick, and their bonds, first evaluated then, may break in turn. After a widening only
  // the new particles' pairs are evaluated again: the others keep those of the step's own evaluation, with the
  // velocities it read, as in a step without breaks (evaluating them again cost the twist a fifth of its run).
  auto forces = [&](bool all) {
    for (long broke = 1; broke > 0; all = false) {
      broke = verlet_.breaks;
      if (all) verlet_.compute_forces();
      else verlet_.compute_forces_of_joined();
      broke = verlet_.breaks - broke;
      MPI_Allreduce(MPI_IN_PLACE, &broke, 1, MPI_LONG, MPI_SUM, d_.comm);
      if (!local || broke == 0) return;
      widen();
    }
  };
  if (local) {
    verlet_.coast();
    verlet_.break_log = &fresh;
    transient_cells_.build(x, scene_.implicit.fracture_transient_reach * d_.r_max);
    widen_transient_region(x, seeds);
  }
  forces(true);
  long last_break = 0;
  for (long s = 1; s <= cap && s - last_break <= window; ++s) {
    long broke = verlet_.breaks;
    verlet_.advance(t + static_cast<double>(s - 1) * dt, dt, step_ + 1);
    broke = verlet_.breaks - broke;
    MPI_Allreduce(MPI_IN_PLACE, &broke, 1, MPI_LONG, MPI_SUM, d_.comm);
    if (broke > 0) last_break = s;
    ++transient_steps_;
    transient_particle_steps_ += static_cast<double>(local ? transient_moving_ : d_.n_global);
    if (local && broke > 0) {
      widen();
      forces(false);
    }
  }
  if (local) {
    verlet_.uncoast();
    verlet_.break_log = nullptr;
  }
  restore_owned(x, q, v, w);
  breaks_ += verlet_.breaks - breaks_before;
}

void ImplicitBdem::widen_transient_region(const std::vector<Eigen::Vector3d>& x0,
                                          const std::vector<std::int32_t>& seeds) {
  // The seeds of every rank, at the transient's start positions (a cell list then finds the particles near them).
  std::vector<double> mine;
  mine.reserve(3 * seeds.size());
  for (const std::int32_t s : seeds) mine.insert(mine.end(), x0[s].data(), x0[s].data() + 3);
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(d_.size)), offsets(static_cast<std::size_t>(d_.size) + 1, 0);
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, d_.comm);
  for (int r = 0; r < d_.size; ++r) offsets[r + 1] = offsets[r] + counts[r];
  std::vector<Eigen::Vector3d> all(static_cast<std::size_t>(offsets.back() / 3));
  MPI_Allgatherv(mine.data(), count, MPI_DOUBLE, flat(all), counts.data(), offsets.data(), MPI_DOUBLE, d_.comm);
  // transient_cells_ holds the owned start positions: the cost follows the seeds, not the particles.
  const double reach = scene_.implicit.fracture_transient_reach * d_.r_max;
  std::vector<std::int32_t> joining;
  for (const Eigen::Vector3d& s : all)
    transient_cells_.for_each_near(s, reach, [&](std::size_t i, double) {
      if (!verlet_.moves(i)) joining.push_back(static_cast<std::int32_t>(i));
    });
  std::sort(joining.begin(), joining.end());
  joining.erase(std::unique(joining.begin(), joining.end()), joining.end());
  verlet_.move(joining);
  long moving = verlet_.moving_owned();
  MPI_Allreduce(&moving, &transient_moving_, 1, MPI_LONG, MPI_SUM, d_.comm);
}

}  // namespace percussion::bdem
