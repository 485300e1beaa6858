// The implicit bonded DEM (notes 001): set-up, each step's schedule (cuts, BDF2 history, predictor, friction and
// the fracture check), the Newton matrix's pattern and the matrix carried between steps, observables, checkpoints
// and counters. The potential's terms are in implicit_evaluate.cpp, the Newton iterations in implicit_newton.cpp,
// the Newton systems' -bdem_ options in implicit_options.cpp, the active-set rounds, friction and fracture in
// implicit_active_set.cpp, implicit_friction.cpp and implicit_fracture.cpp.
#include "percussion/methods/bdem/implicit_bdem.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "percussion/core/error.hpp"
#include "percussion/core/log.hpp"
#include "percussion/geometry/obstacle.hpp"
#include "percussion/methods/bdem/boundary_motion.hpp"
#include "percussion/physics/manifold_bond.hpp"
#include "percussion/physics/manifold_contact.hpp"
#include "percussion/physics/quaternion.hpp"
#include "percussion/physics/rigid_modes.hpp"
#include "implicit_options.hpp"

namespace percussion::bdem {
namespace {

// Predicted contact normals (implicit.contact_normal) are taken again at the iterate once a particle moved this
// fraction of its radius from where they were taken: the linearised gap is then off by less than ~(0.1 r)²/(4 r).
// Never taking them again costs Newton iterations and leaves spurious energy in a packing squeezed by an impact.
constexpr double kNormalDrift = 0.1;
// BDF2 keeps its history over step changes up to this ratio: a cut's halves are followed by steps twice as long.
// Beyond it (1 + √2 is the stability bound) a step restarts with backward Euler.
constexpr double kMaxBdf2Ratio = 2.0;

// The explicit contact's dashpot realises `restitution`; the implicit contact is the paper's penalty alone
// (notes §2.7), whose bounce the step's own damping sets. Say so rather than ignore the key silently.
void warn_unused_restitution(const BdemScene& scene) {
  double e = 1.0;
  for (const auto& m : scene.materials) e = std::min(e, m.restitution);
  for (const auto& o : scene.obstacles) e = std::min(e, o.restitution);
  if (!(e < 1.0)) return;
  char text[160];
  std::snprintf(text, sizeof text,
                "implicit: contact restitution (lowest %.3g) is the explicit integrator's dashpot; implicit contacts "
                "have none, the step's damping sets the bounce", e);
  log::info(text);
}

}  // namespace

ImplicitBdem::ImplicitBdem(const BdemScene& scene, MPI_Comm comm, Model model)
    : BdemMethod(scene, comm, model), scene_options_(scene), system_(comm, "bdem_", 6), verlet_(scene_, d_, timers_) {
  h_ = dt_;
  contact_k_ = d_.pair_law(0, 0).stiffness;  // one penalty stiffness for all pairs and obstacles (notes 2.7)
  warn_unused_restitution(scene);
  predicted_normals_ = scene_.implicit.contact_normal == "predicted";
  PetscBool monitor = PETSC_FALSE;
  solvers::petsc_check(PetscOptionsHasName(nullptr, "bdem_", "-newton_monitor", &monitor), "PetscOptionsHasName");
  monitor_ = monitor == PETSC_TRUE;
  shifting_blocks_ = configure_newton_system(system_) == solvers::BlockSystem::Blocks::Icc;
  schedule_ = model.schedule;
  // Only IC(0) shifts: with other blocks, steps an IC(0) run's checkpoint scheduled on point-block Jacobi are dropped.
  if (!shifting_blocks_) schedule_.block_jacobi_steps = schedule_.block_jacobi_backoff = 0;
  vgrad_p_.assign(d_.n_owned, Eigen::Vector3d::Zero());  // backward Euler keeps (and checkpoints) zeros
  vgrad_y_.assign(d_.n_owned, Eigen::Vector3d::Zero());
  // BDF2's x_{n−1}: a BDF2 checkpoint's (another form's run starts over with a backward-Euler step).
  if (scene_.implicit.form == "bdf2" && model.written_by_form == "bdf2" && model.bdf2_history_step > 0) {
    bdf2_history_ = std::move(model.bdf2_history);  // the owned particles' rows, in order
    bdf2_history_step_ = model.bdf2_history_step;
  }
  h_ = inertia_step(first_try_step());  // what a carried matrix was assembled with (restore_matrix)
  // (A checkpoint of an earlier version holds fewer numbers per particle: its matrix is assembled afresh.)
  const bool has_matrix = model.newton_width == kMatrixState;
  if (has_matrix && model.written_by_integrator == "implicit" && model.written_by_form == scene_.implicit.form &&
      model.time_step == dt_ && scene_.implicit.optimizer == "newton" && scene_.implicit.hessian_lag_contraction > 0)
    restore_matrix(model);  // what the interrupted run's next step keeps
  else
    prepare_matrix();  // the pair lists' matrix and solver objects: built at set-up with the lists, not in step 1
  if (scene_.implicit.form != "midpoint") return;
  // The midpoint predictor needs ∇V at the previous step's midpoint; a checkpoint carries it. A fresh start has
  // none and uses zero, ẑ = x̂: then x_1 = x_0 + h v_0 − ½h² M⁻¹∇V((x_0 + x_1)/2) is second-order consistent
  // with v_0 = v(0). (∇V(x_0) instead would apply the first step's force twice: a free fall would keep an
  // error ½ g h t, and a released stiff mode with ωh ≫ 1 would triple its amplitude.)
  if (!model.from_checkpoint) return;
  // Only a midpoint run's checkpoint holds that ∇V: an explicit one holds forces (minus a gradient, gravity
  // included), backward Euler zeros, and a file without "form" may be either.
  if (model.written_by_integrator != "implicit" || model.written_by_form != "midpoint") {
    const std::string writer = model.written_by_form.empty() ? "an unrecorded form"
                                                             : model.written_by_integrator + " " + model.written_by_form;
    log::info("implicit midpoint: the checkpoint (" + writer + ") holds no midpoint gradient; starting as a fresh "
              "start does");
    return;
  }
  if (!model.force.empty()) {
    std::copy(model.force.begin(), model.force.end(), vgrad_p_.begin());
    std::copy(model.torque.begin(), model.torque.end(), vgrad_y_.begin());
  }
  vgrad_step_ = model.gradient_step > 0 ? model.gradient_step : model.time_step;
}

void ImplicitBdem::prepare_matrix() {
  if (pattern_of_rebuild_ == d_.rebuilds() && system_.ready()) return;
  const std::size_t n = d_.n_owned;
  std::vector<PetscInt> diag(n), off(n);
  for (std::size_t i = 0; i < n; ++i) {
    diag[i] = 1 + d_.partners_owned()[i];
    off[i] = d_.partners_other()[i];
  }
  const PetscInt first = system_.preallocate(static_cast<PetscInt>(n), diag, off, rank_sides(), true);
  pair_position_.clear();
  petsc_row_.assign(d_.x.size(), -1.0);
  for (std::size_t i = 0; i < n; ++i) petsc_row_[i] = static_cast<double>(first + system_.local_row(i));
  d_.forward(petsc_row_);
  set_matrix_pattern();
  pattern_of_rebuild_ = d_.rebuilds();
}

void ImplicitBdem::set_matrix_pattern() {
  // The blocks evaluate() inserts: those of every pair whose ends are both free (a contact candidate's too, zero while
  // it does not touch), a ghost's from its owner's side (its partner's row sent there, as the Hessian's ghost rows;
  // a free ghost's row takes its partner's column even when the partner is prescribed, with a zero block).
  const std::size_t n = d_.n_owned;
  auto free = [&](std::int32_t slot) { return d_.constraint[slot] < 0; };
  std::vector<double> outgoing(d_.outgoing_entries(), -1.0), incoming;
  std::vector<PetscInt> start(n + 1, 0);
  std::size_t next = 0;
  for (const Pair& p : d_.pairs) {
    const bool ghost = static_cast<std::size_t>(p.b) >= n, both = free(p.a) && free(p.b);
    if (ghost && free(p.b)) outgoing[next] = petsc_row_[p.a];
    next += ghost ? 1 : 0;
    if (!both) continue;
    ++start[p.a + 1];
    if (!ghost) ++start[p.b + 1];
  }
  d_.send_to_owners(outgoing, 1, incoming);
  for (std::size_t e = 0; e < incoming.size(); ++e)
    if (incoming[e] >= 0 && free(d_.incoming_slot(e))) ++start[d_.incoming_slot(e) + 1];
  for (std::size_t i = 0; i < n; ++i) start[i + 1] += start[i];
  std::vector<PetscInt> columns(static_cast<std::size_t>(start[n])), fill(start.begin(), start.end() - 1);
  auto add = [&](std::size_t row, double column) { columns[static_cast<std::size_t>(fill[row]++)] = static_cast<PetscInt>(column); };
  for (const Pair& p : d_.pairs) {
    if (!free(p.a) || !free(p.b)) continue;
    add(static_cast<std::size_t>(p.a), petsc_row_[p.b]);
    if (static_cast<std::size_t>(p.b) < n) add(static_cast<std::size_t>(p.b), petsc_row_[p.a]);
  }
  for (std::size_t e = 0; e < incoming.size(); ++e)
    if (incoming[e] >= 0 && free(d_.incoming_slot(e))) add(static_cast<std::size_t>(d_.incoming_slot(e)), incoming[e]);
  system_.set_pattern(start, columns);
}

std::vector<char> ImplicitBdem::rank_sides() {
  // Whether each owned particle has a pair partner on a lower or a higher rank (BlockSystem::preallocate): its own
  // pairs' ghosts, and the pairs other ranks own with it as their ghost.
  std::vector<char> sides(d_.n_owned, 0);
  if (d_.size == 1) return sides;
  std::vector<double> owner(d_.x.size(), static_cast<double>(d_.rank));
  d_.forward(owner);
  std::vector<double> mine(d_.outgoing_entries(), static_cast<double>(d_.rank)), received;
  d_.send_to_owners(mine, 1, received);
  auto mark = [&](std::size_t i, double rank) {
    if (rank != d_.rank) sides[i] |= rank < d_.rank ? solvers::BlockSystem::kLowerRank : solvers::BlockSystem::kHigherRank;
  };
  for (const Pair& p : d_.pairs)
    if (static_cast<std::size_t>(p.b) >= d_.n_owned) mark(static_cast<std::size_t>(p.a), owner[p.b]);
  for (std::size_t e = 0; e < received.size(); ++e) mark(static_cast<std::size_t>(d_.incoming_slot(e)), received[e]);
  return sides;
}

void ImplicitBdem::set_rigid_modes_if_multigrid() {
  if (!system_.multigrid()) return;
  // About the centroid, so the rotation modes are not dominated by a translation.
  const std::size_t n = d_.n_owned;
  double local[4] = {0, 0, 0, static_cast<double>(n)}, global[4];
  for (std::size_t i = 0; i < n; ++i)
    for (int a = 0; a < 3; ++a) local[a] += d_.x[i][a];
  MPI_Allreduce(local, global, 4, MPI_DOUBLE, MPI_SUM, d_.comm);
  const Eigen::Vector3d centre = Eigen::Vector3d(global[0], global[1], global[2]) / std::max(1.0, global[3]);
  rigid_modes_.resize(6 * 6 * n);
  for (std::size_t i = 0; i < n; ++i) {
    const Eigen::Matrix<double, 6, 6> m = physics::rigid_modes(d_.x[i], d_.q[i], centre);
    for (std::size_t k = 0; k < 6; ++k)
      for (int c = 0; c < 6; ++c)  // in the scaled system's unknowns ŷ = D⁻¹ y
        rigid_modes_[(k * n + static_cast<std::size_t>(system_.local_row(i))) * 6 + c] =
            m(c, static_cast<Eigen::Index>(k)) / scale_[i][c];
  }
  system_.set_near_nullspace(rigid_modes_, 6);
}

ImplicitBdem::Bdf2Weights ImplicitBdem::bdf2_weights(double h) const {
  const double omega = h / bdf2_history_step_;
  return {(1.0 + omega) * (1.0 + omega), omega * omega, 1.0 + 2.0 * omega};
}

double ImplicitBdem::inertia_step(double h) const {
  // Backward Euler without a history (the first step, a restart from another form) or after a step more than
  // kMaxBdf2Ratio times the last (variable-step BDF2 is zero-stable only for ratios below 1 + √2).
  if (scene_.implicit.form != "bdf2" || !(bdf2_history_step_ > 0) || h > kMaxBdf2Ratio * bdf2_history_step_) return h;
  const Bdf2Weights w = bdf2_weights(h);
  return h * (1.0 + h / bdf2_history_step_) / w.over;
}

void ImplicitBdem::predict(double t, double h) {
  const std::size_t n = d_.n_owned;
  const bool midpoint = scene_.implicit.form == "midpoint";
  const bool two_step = h_ != h;  // BDF2 with a history (inertia_step)
  const double beta = h_;
  const Bdf2Weights c = two_step ? bdf2_weights(h) : Bdf2Weights{};
  p_n_.assign(d_.x.begin(), d_.x.begin() + static_cast<std::ptrdiff_t>(n));
  q_n_.assign(d_.q.begin(), d_.q.begin() + static_cast<std::ptrdiff_t>(n));
  p_hat_.resize(n);
  q_hat_.resize(n);
  {
    ScopedPhase timer(timers_, Phase::Integrate);
    for (std::size_t i = 0; i < n; ++i) {
      if (d_.constraint[i] >= 0) {  // prescribed: its end-of-step state is known; the solve keeps it there
        prescribed_step(scene_.boundary_conditions[d_.constraint[i]], t, h, d_.x[i], d_.q[i], d_.v[i], d_.w[i]);
        p_hat_[i] = d_.x[i];
        q_hat_[i] = d_.q[i];
        continue;
      }
      // x̂ = x_n + h v_n. Backward Euler keeps the paper's chord q_n + h q̇_n (notes 2.2), which turns a free spin
      // by 2 atan(ωh/2) a step and loses (ωh)²/8 of ω; the midpoint form drifts along the geodesic exp(ωh) ⊗ q_n,
      // the inertia term's minimiser on S³, so a free spin turns by exactly ωh.
      if (two_step) {
        // BDF2: x̂ = x̄ + β v̄ (with ω = 1, (4x_n − x_{n−1})/3 + β (4v_n − v_{n−1})/3), and the same with q and
        // q̇ = ½ (ω, 0) ⊗ q.
        const Bdf2Past past = bdf2_past(i);
        p_hat_[i] = c.bar(d_.x[i], past.x) + beta * (c.now * d_.v[i] - c.past * past.v) / c.over;
        q_hat_[i] = c.bar(d_.q[i], past.q) +
                    beta * (c.now * quat::qdot_from_omega(d_.q[i], d_.w[i]) -
                            c.past * quat::qdot_from_omega(past.q, past.w)) / c.over;
      } else {
        p_hat_[i] = d_.x[i] + h * d_.v[i];
        q_hat_[i] = midpoint ? quat::mul(quat::from_rotation_vector(h * d_.w[i]), d_.q[i])
                             : d_.q[i] + h * quat::qdot_from_omega(d_.q[i], d_.w[i]);
      }
      d_.x[i] = p_hat_[i];
      d_.q[i] = q_hat_[i].normalized();
      if (midpoint) {
        // ẑ = x̂ − ½h² M_s⁻¹ ∇V(x_{n−½}) = x_n + h v⁺, a half kick v⁺ = v_n − ½h M⁻¹∇V then a drift; x̂ stays the
        // initial guess. The rotation takes the same kick in the world frame, ω⁺ = ω_n + ½h I⁻¹ τ with
        // τ = −½ R(q_n) y (y = G_l(q_n)∇_qV, the reduced 3-vector a checkpoint holds; I = 2/5 m r²), and drifts
        // along the geodesic: ẑ_q = exp(h ω⁺) ⊗ q_n. To first order in the kick this shifts q̂ by the chord
        // form's −½h² (8/5 m r²)⁻¹ G_l(q_n)ᵀ y.
        // After a step of another length h_prev the kick is ½h_prev M⁻¹∇V (the variational integrator with steps
        // h_prev, h): ẑ = x_n + h v⁺ with ½h h_prev; ½h² would overshoot the kick by the ratio of the steps.
        const double m = d_.mass[i], r = d_.radius[i], kick = vgrad_step_ > 0 ? vgrad_step_ : h;
        p_hat_[i] -= (0.5 * h * kick / m) * vgrad_p_[i];
        const Eigen::Vector3d w_kicked = d_.w[i] - (kick / (1.6 * m * r * r)) * quat::rotate(q_n_[i], vgrad_y_[i]);
        q_hat_[i] = quat::mul(quat::from_rotation_vector(h * w_kicked), q_n_[i]);
      }
    }
  }
  if (d_.needs_rebuild(step_ + 1)) d_.rebuild();
  else d_.refresh_ghosts();
  prepare_matrix();
  if (midpoint) d_.forward(p_n_, q_n_);  // the pair terms read x_n of ghosts too
  if (predicted_normals_) {  // at the initial guess x̂
    normal_positions_.assign(d_.x.begin(), d_.x.begin() + static_cast<std::ptrdiff_t>(n));
    take_contact_normals();
  }
}

bool ImplicitBdem::refresh_contact_normals() {
  if (!predicted_normals_) return false;
  const std::size_t n = d_.n_owned;
  long drifted = 0;
  for (std::size_t i = 0; i < n && !drifted; ++i)
    if ((d_.x[i] - normal_positions_[i]).squaredNorm() > std::pow(kNormalDrift * d_.radius[i], 2))
      drifted = 1;
  MPI_Allreduce(MPI_IN_PLACE, &drifted, 1, MPI_LONG, MPI_MAX, d_.comm);
  if (!drifted) return false;
  normal_positions_.assign(d_.x.begin(), d_.x.begin() + static_cast<std::ptrdiff_t>(n));
  take_contact_normals();
  ++contact_normal_updates_;
  return true;
}

void ImplicitBdem::take_contact_normals() {
  // Why a fixed normal: a penalty ½k(r_a + r_b − |p_b − p_a|)² softens sideways by kδ/L, which in a squeezed packing
  // cancels the inertia m/h² at large steps (the incremental potential turns flat or non-convex there) and which the
  // PSD projection drops, so Newton's model is far too stiff and its full steps remove little of the residual.
  // Along a fixed normal the gap is linear, the energy convex and k n nᵀ its exact Hessian. Taken at x̂, not x_n:
  // the predictor is nearer the step's end.
  if (!predicted_normals_) return;
  d_.forward(normal_positions_);
  const std::size_t np = d_.pairs.size();
  pair_normal_.resize(np);
  for (std::size_t k = 0; k < np; ++k) {
    const Eigen::Vector3d delta = normal_positions_[d_.pairs[k].b] - normal_positions_[d_.pairs[k].a];
    const double L = delta.norm();
    // Coincident centres have no normal; any fixed direction keeps the pair's forces balanced.
    pair_normal_[k] = L > 0.0 ? Eigen::Vector3d(delta / L) : Eigen::Vector3d::UnitX();
  }
}

void ImplicitBdem::advance() {
  // A fracture goes on for several steps once it starts (an impact): a step starts at the depth the last one's
  // fracture cuts reached instead of trying the whole step and failing down to it again, and backs off one
  // halving a step while no cut goes deeper.
  const int start = std::min(schedule_.fracture_depth, scene_.implicit.step_cuts);
  deepest_fracture_cut_ = 0;
  start_on_block_jacobi_ = schedule_.block_jacobi_steps > 0;
  if (start_on_block_jacobi_) {
    --schedule_.block_jacobi_steps;
    ++block_jacobi_steps_;
  }
  factor_tried_ = factor_shifted_ = false;
  const long newton_before = newton_.counters().iterations, minimisations_before = newton_.counters().minimisations;
  if (scene_.implicit.fracture_integrator == "explicit" && schedule_.explicit_intervals > 0) {
    --schedule_.explicit_intervals;  // (explicit_interval opens the window again if bonds break)
    keep_interval_start();
    explicit_interval(time(), dt_);
  } else {
    solve_interval(time(), dt_, scene_.implicit.step_cuts, start);
  }
  // The next step's depth: a fracture cut's, else by this step's Newton effort (implicit.split_above_iterations).
  int next = start - 1;
  const double split = scene_.implicit.split_above_iterations;
  const solvers::NewtonCounters& effort = newton_.counters();
  if (split > 0 && effort.minimisations > minimisations_before) {
    const double per = static_cast<double>(effort.iterations - newton_before) /
                       static_cast<double>(effort.minimisations - minimisations_before);
    if (per > split && start < scene_.implicit.step_cuts) {
      next = start + 1;
      ++iteration_splits_;
    } else if (per >= scene_.implicit.merge_below_iterations) {
      next = start;
    }
  }
  schedule_.fracture_depth = std::max({deepest_fracture_cut_, next, 0});
  // A shifted IC(0) is dropped for the fallback at once (minimise), and where it shifts at one step it
  // mostly shifts at the next (a contact-dominated powder), where each step would factor it, shift, solve once
  // with it and go on with the fallback. So those factorisations are skipped; IC(0) is tried again after 1, 2, 4,
  // then 8 steps.
  if (factor_tried_ && shifting_blocks_) {
    auto& backoff = schedule_.block_jacobi_backoff;
    backoff = factor_shifted_ ? std::clamp(2 * backoff, 1, kMaxBlockJacobiBackoff) : 0;
    schedule_.block_jacobi_steps = backoff;
  }
  ++step_;
  ++steps_run_;
}

void ImplicitBdem::solve_interval(double t, double h, int cuts_left, int presplit) {
  if (presplit > 0 && cuts_left > 0) {
    solve_interval(t, 0.5 * h, cuts_left - 1, presplit - 1);
    solve_interval(t + 0.5 * h, 0.5 * h, cuts_left - 1, presplit - 1);
    return;
  }
  const std::size_t n = d_.n_owned;
  const bool midpoint = scene_.implicit.form == "midpoint";
  // A failed try is undone from x_n, q_n (predict() keeps the interval's start there; the predictor and the
  // minimisation leave velocities alone, and owned slots survive a try's rebuilds), and, in the midpoint form,
  // from the last midpoint's ∇V, which the try's evaluations overwrite.
  std::vector<Eigen::Vector3d> vgrad_p, vgrad_y;
  if (cuts_left > 0 && midpoint) {
    vgrad_p = vgrad_p_;
    vgrad_y = vgrad_y_;
  }
  h_ = inertia_step(h);
  // The step's start velocities: BDF2's next v_{n−1}, and what an explicit interval starts from.
  const bool explicit_fracture = scene_.implicit.fracture_integrator == "explicit";
  if (scene_.implicit.form == "bdf2" || explicit_fracture) {
    v_n_.assign(d_.v.begin(), d_.v.begin() + static_cast<std::ptrdiff_t>(n));
    w_n_.assign(d_.w.begin(), d_.w.begin() + static_cast<std::ptrdiff_t>(n));
  }
  predict(t, h);
  auto cut = [&](long& counter) {  // every rank sees the same (collective) decision
    std::copy_n(p_n_.begin(), n, d_.x.begin());
    std::copy_n(q_n_.begin(), n, d_.q.begin());
    if (midpoint) {
      vgrad_p_ = std::move(vgrad_p);
      vgrad_y_ = std::move(vgrad_y);
    }
    ++counter;
    solve_interval(t, 0.5 * h, cuts_left - 1);
    solve_interval(t + 0.5 * h, 0.5 * h, cuts_left - 1);
  };
  if (!minimise()) {
    if (cuts_left > 0) return cut(step_cuts_);
    // Explicit steps take what the halvings could not (fragments rattling in contact after a break) instead of
    // keeping an unconverged state.
    if (explicit_fracture) return explicit_interval(t, h);
    ++unconverged_steps_;
  }
  // A bond far over its strength at the end of the step crossed it well inside the step: in an impact the
  // step then breaks too many bonds, too late. Halving brings each break closer to its time.
  const double cut_ratio = scene_.implicit.fracture_cut_ratio;
  const bool may_cut = cut_ratio > 0 && cuts_left > 0;
  const double worst = may_cut || explicit_fracture ? largest_stress_ratio() : 0;  // one pass over the bonds for both
  if (may_cut && worst > cut_ratio) {
    deepest_fracture_cut_ = std::max(deepest_fracture_cut_, scene_.implicit.step_cuts - cuts_left + 1);
    return cut(fracture_cuts_);
  }
  if (explicit_fracture && worst > 1) return explicit_interval(t, h);
  break_in_rounds();

  {
    ScopedPhase timer(timers_, Phase::Integrate);
    const bool two_step = h_ != h;
    const Bdf2Weights c = two_step ? bdf2_weights(h) : Bdf2Weights{};
    for (std::size_t i = 0; i < n; ++i) {
      if (d_.constraint[i] >= 0) continue;
      if (two_step) {  // BDF2: v_{n+1} = (x_{n+1} − x̄)/β, ω from the same chord rate of q
        const Bdf2Past past = bdf2_past(i);
        d_.v[i] = (d_.x[i] - c.bar(p_n_[i], past.x)) / h_;
        d_.w[i] = quat::omega_from_qdot(d_.q[i], (d_.q[i] - c.bar(q_n_[i], past.q)) / h_);
        continue;
      }
      d_.v[i] = (d_.x[i] - p_n_[i]) / h;
      // Midpoint: the exact inverse of its geodesic drift (world frame), so the next predictor repeats this
      // step's turn; backward Euler: the chord (q_{n+1} − q_n)/h, consistent with its chord predictor.
      d_.w[i] = midpoint ? quat::rotation_vector(quat::mul(d_.q[i], quat::conj(q_n_[i]))) / h
                         : quat::omega_from_qdot(d_.q[i], (d_.q[i] - q_n_[i]) / h);
    }
  }
  if (scene_.implicit.form == "bdf2") keep_bdf2_history(h);
  if (midpoint) vgrad_step_ = h;
  d_.refresh_ghosts();
  apply_friction();
  const long before = breaks_;
  std::vector<std::int32_t> seeds;
  break_bonds(1.0, &seeds);
  if (scene_.implicit.fracture_transient > 0) {
    long broke = breaks_ - before;
    MPI_Allreduce(MPI_IN_PLACE, &broke, 1, MPI_LONG, MPI_SUM, d_.comm);
    if (broke > 0) fracture_transient(t + h, h, seeds);
  }
}

ImplicitBdem::Bdf2Past ImplicitBdem::bdf2_past(std::size_t i) const {
  const double* past = &bdf2_history_[Model::kBdf2HistoryWidth * i];
  Bdf2Past p{Eigen::Map<const Eigen::Vector3d>(past), Eigen::Map<const Eigen::Vector3d>(past + 7),
             Eigen::Map<const Eigen::Vector3d>(past + 10), Eigen::Map<const Eigen::Vector4d>(past + 3)};
  if (p.q.dot(q_n_[i]) < 0) p.q = -p.q;  // the same rotation
  return p;
}

void ImplicitBdem::keep_bdf2_history(double h) {
  constexpr std::size_t w = Model::kBdf2HistoryWidth;
  bdf2_history_.resize(w * d_.n_owned);
  for (std::size_t i = 0; i < d_.n_owned; ++i) {
    double* past = &bdf2_history_[w * i];
    Eigen::Map<Eigen::Vector3d>(past + 0) = p_n_[i];
    Eigen::Map<Eigen::Vector4d>(past + 3) = q_n_[i];
    Eigen::Map<Eigen::Vector3d>(past + 7) = v_n_[i];
    Eigen::Map<Eigen::Vector3d>(past + 10) = w_n_[i];
  }
  bdf2_history_step_ = h;
}

Totals ImplicitBdem::totals() {
  double energy = 0;
  long contacts = 0;
  for (const Pair& p : d_.pairs) {
    if (p.bond >= 0) {
      energy += physics::bond_energy(d_.x[p.a], d_.q[p.a], d_.x[p.b], d_.q[p.b], d_.bonds[p.bond].rest);
      continue;
    }
    const auto cp = physics::contact_penalty(d_.x[p.a], d_.radius[p.a], d_.x[p.b], d_.radius[p.b], contact_k_);
    energy += cp.energy;
    contacts += cp.active ? 1 : 0;
  }
  for (std::size_t i = 0; i < d_.n_owned; ++i)
    for (const auto& o : scene_.obstacles)
      geometry::for_each_plane(o, [&](const Eigen::Vector3d& point, const Eigen::Vector3d& normal) {
        const auto pl = physics::plane_penalty(d_.x[i], d_.radius[i], point, normal, contact_k_);
        energy += pl.active ? pl.energy : 0.0;
        contacts += pl.active ? 1 : 0;
      });
  return d_.totals(energy, contacts);
}

bool ImplicitBdem::matrix_carries(double h) const {
  // (A lag contraction of 0 assembles at every iteration: nothing carries either.)
  // A refreshed matrix carries where the next step brings its contacts up to date (minimise): it is then the matrix
  // of the kept part's state and that step's start, which a restart assembles again; elsewhere it would not be.
  const bool mixed_ok = refreshes_carried_contacts();
  long local = scene_.implicit.hessian_lag_contraction > 0 && matrix_assembled_ && (!matrix_mixed_ || mixed_ok) &&
               matrix_h_ == h &&
               matrix_rebuild_ == d_.rebuilds() && matrix_breaks_ == breaks_,
       global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_LONG, MPI_MIN, d_.comm);
  return global != 0;
}

bool ImplicitBdem::refreshes_carried_contacts() const {
  return scene_.implicit.contact_refresh && system_.preconditioner_follows_matrix();
}

double ImplicitBdem::first_try_step() const {
  return std::ldexp(dt_, -std::min(schedule_.fracture_depth, scene_.implicit.step_cuts));
}

void ImplicitBdem::restore_matrix(const Model& model) {
  // The interrupted run's next step would keep this matrix: assemble it at the state it was assembled at, on the
  // pairs the restart rebuilt where that run last built them.
  const std::size_t n = d_.n_owned;
  const bool midpoint = scene_.implicit.form == "midpoint";
  const std::vector<Eigen::Vector3d> x(d_.x.begin(), d_.x.begin() + static_cast<std::ptrdiff_t>(n));
  const std::vector<Eigen::Vector4d> q(d_.q.begin(), d_.q.begin() + static_cast<std::ptrdiff_t>(n));
  const std::vector<Eigen::Vector3d> vgrad_p = vgrad_p_, vgrad_y = vgrad_y_;  // a midpoint evaluation writes them
  p_hat_.assign(n, Eigen::Vector3d::Zero());  // (the inertia Hessian reads q̂ only)
  q_hat_.resize(n);
  normal_positions_.resize(n);
  p_n_.resize(n);
  q_n_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double* m = &model.newton_state[kMatrixState * i];
    d_.x[i] = Eigen::Map<const Eigen::Vector3d>(m);
    d_.q[i] = Eigen::Map<const Eigen::Vector4d>(m + 3);
    q_hat_[i] = Eigen::Map<const Eigen::Vector4d>(m + 7);
    p_n_[i] = Eigen::Map<const Eigen::Vector3d>(m + 11);
    q_n_[i] = Eigen::Map<const Eigen::Vector4d>(m + 14);
    if (predicted_normals_) normal_positions_[i] = Eigen::Map<const Eigen::Vector3d>(m + 18);
  }
  d_.refresh_ghosts();
  if (midpoint) d_.forward(p_n_, q_n_);
  prepare_matrix();
  take_contact_normals();
  evaluate(Want::Hessian);
  matrix_assembled_ = true;
  matrix_h_ = h_;
  matrix_rebuild_ = d_.rebuilds();
  matrix_breaks_ = breaks_;
  std::copy(x.begin(), x.end(), d_.x.begin());
  std::copy(q.begin(), q.end(), d_.q.begin());
  d_.refresh_ghosts();
  vgrad_p_ = vgrad_p;
  vgrad_y_ = vgrad_y;
}

Model ImplicitBdem::snapshot() const {
  // The midpoint form carries ∇V at the last midpoint; backward Euler needs nothing and writes zeros. A Newton
  // matrix the next step may keep goes with the state it was assembled at.
  // (The next step's first try is a whole step, or the halving its fracture cuts start at: first_try_step.)
  // BDF2 adds its x_{n−1}; the midpoint form the length of the step its ∇V is from; fracture cuts their depth.
  const bool carries = matrix_carries(inertia_step(first_try_step()));
  return d_.snapshot(step_, clock(), vgrad_p_, vgrad_y_, "implicit", scene_.implicit.form,
                     carries ? std::span<const double>(matrix_state_) : std::span<const double>(),
                     carries ? kMatrixState : 0, bdf2_history_, bdf2_history_step_, vgrad_step_, schedule_);
}

std::map<std::string, double> ImplicitBdem::counters() const {
  const solvers::NewtonCounters& solver = newton_.counters();
  std::map<std::string, double> counts{{"newton_iterations", static_cast<double>(solver.iterations)},
          {"krylov_iterations", static_cast<double>(krylov_iterations_)},
          {"implicit_steps", static_cast<double>(steps_run_)},
          {"transient_particle_steps", transient_particle_steps_},
          {"line_search_failures", static_cast<double>(solver.line_search_failures)},
          {"descent_fallbacks", static_cast<double>(solver.descent_fallbacks)},
          {"bounded_steps", static_cast<double>(solver.bounded_steps)},
          {"fallback_solves", static_cast<double>(fallback_solves_)},
          {"fallback_steps", static_cast<double>(block_jacobi_steps_)},
          {"gauss_seidel_partial_set_ups", static_cast<double>(system_.gauss_seidel_updates())},
          {"set_ups_across_ranks", static_cast<double>(system_.set_ups_across_ranks())},
          {"hessian_assemblies", static_cast<double>(hessian_assemblies_)},
          {"block_factorisations", static_cast<double>(system_.block_factorisations())},
          {"lagged_hessians", static_cast<double>(lagged_hessians_)},
          {"contact_refreshes", static_cast<double>(contact_refreshes_)},
          {"stale_bond_assemblies", static_cast<double>(stale_bond_assemblies_)},
          {"active_set_rounds", static_cast<double>(active_set_rounds_)},
          {"branch_switches", static_cast<double>(branch_switches_)},
          {"active_set_stops", static_cast<double>(active_set_stops_)},
          {"contact_normal_updates", static_cast<double>(contact_normal_updates_)},
          {"carried_hessians", static_cast<double>(carried_hessians_)},
          {"line_search_extrapolations", static_cast<double>(solver.extrapolations)},
          {"line_search_extrapolations_tried", static_cast<double>(solver.extrapolations_tried)},
          {"line_search_trials", static_cast<double>(solver.line_search_trials)},
          {"contact_line_steps", static_cast<double>(contact_line_steps_)},
          {"block_shifted_factorisations", static_cast<double>(system_.block_shifted())},
          {"failed_factorisations", static_cast<double>(system_.failed_set_ups())},
          {"step_cuts", static_cast<double>(step_cuts_)},
          {"fracture_cuts", static_cast<double>(fracture_cuts_)},
          {"iteration_splits", static_cast<double>(iteration_splits_)},
          {"fracture_rounds", static_cast<double>(fracture_rounds_)},
          {"explicit_intervals", static_cast<double>(explicit_intervals_)},
          {"explicit_steps", static_cast<double>(explicit_steps_)},
          {"transient_steps", static_cast<double>(transient_steps_)},
          {"transient_full_rebuild_tests", static_cast<double>(verlet_.full_rebuild_tests)},
          {"explicit_step_rebuilds", static_cast<double>(verlet_.rebuilds)},
          {"unconverged_steps", static_cast<double>(unconverged_steps_)}};
  for (const auto& [name, value] : BdemMethod::counters()) counts[name] += value;  // pair_rebuilds, carried counts
  // Ratios of the totals, carried ones included.
  counts["newton_per_step"] = counts["newton_iterations"] / std::max(1.0, counts["implicit_steps"]);
  counts["krylov_per_newton"] = counts["krylov_iterations"] / std::max(1.0, counts["newton_iterations"]);
  counts["transient_moving_share"] =
      counts["transient_steps"] > 0
          ? counts["transient_particle_steps"] / (counts["transient_steps"] * static_cast<double>(d_.n_global))
          : 0.0;
  return counts;
}

}  // namespace percussion::bdem
