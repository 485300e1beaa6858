// The Riemannian Newton iterations of one implicit step (notes 2.8-2.9, Algorithm 2/3): the scaled Newton system,
// its CG solve with the forcing term, Armijo backtracking along geodesics (retract; solvers/line_search.hpp), the
// extrapolation of a full step, and the convergence test; also the first-order variant (Algorithm 1).
#include <algorithm>
#include <cmath>
#include <limits>

#include "percussion/geometry/obstacle.hpp"
#include "percussion/methods/bdem/implicit_bdem.hpp"
#include "percussion/physics/manifold_contact.hpp"
#include "percussion/physics/quaternion.hpp"
#include "percussion/solvers/line_search.hpp"

namespace percussion::bdem {
namespace {

// Armijo's sufficient decrease and the halvings the line search tries.
constexpr solvers::BacktrackingLineSearch kLineSearch{1e-4, 40};
// Round-off of an energy change summed term by term, per unit of Σ_k |x|·|∂Φ_k/∂x| (evaluate()).
constexpr double kEnergyRoundoff = 8 * std::numeric_limits<double>::epsilon();
// Loosest CG tolerance of a Newton step, on the system in the units of the convergence test (compute_scale).
// The notes' 0.5 (eq. 31) leaves the contact-dominated first iterations with one-CG-iteration directions; a tight
// cap buys better Newton directions for about the same CG total. The fallback pays more CG iterations per digit,
// so it gets a looser cap.
constexpr double kForcingCap = 0.01;
constexpr double kFallbackForcingCap = 0.03;
// A Newton step's last solve asks CG for this fraction of the tolerance (forcing in minimise): tighter costs CG
// iterations for nothing, looser risks one more Newton iteration.
constexpr double kToleranceMargin = 0.3;
// A contact refresh keeps the bonds' blocks of the step's last full assembly while no particle turned by more than
// this angle (radians) since: a bond's blocks turn with its particles, and pieces that come apart turn far enough
// in one step for their old blocks to mislead Newton.
constexpr double kRefreshTurn = 0.01;
// ... and while no bond's length moved by more than this multiple of m l₀ / (k_n h²): there its blocks' change,
// about k_n |ΔL| / l₀, reaches the inertia m / h², the curvature of a free piece's rigid modes. A bonded cluster
// spinning fast starts each step stretched by the straight-line guess x_n + h v_n, and the blocks of that guess
// mislead Newton. Lengths rather than relative positions: those also turn with a rigidly moving piece, whose
// blocks need no new assembly.
constexpr double kRefreshShift = 1.0;
// Line-search extrapolation (try_extrapolation): tried when the line's curvature is below this fraction of the
// Newton model's, up to this multiple of the Newton step.
constexpr double kExtrapolationRatio = 0.5;
constexpr double kMaxExtrapolation = 8.0;

}  // namespace

// The Newton system is solved in the units of the convergence test, D A D ŷ = −D g with y = D ŷ and
// D = diag(h²/(m r) I3, h²/(1.6 m r²) I3) per particle (residual()), so that CG's relative residual measures
// what the Newton iterations are judged by (unscaled, a torque weighs 1/(1.6 r) times less in CG's norm than in
// the test). Block Jacobi, IC(0) and D-ILU iterates are the same either way; only where CG stops moves (not with
// D-ILU, whose preconditioned norm does not depend on the scaling).
Eigen::Matrix<double, 6, 1> ImplicitBdem::convergence_scale(std::size_t slot) const {
  const double h2 = h_ * h_, m = d_.mass[slot], r = d_.radius[slot];
  Eigen::Matrix<double, 6, 1> d;
  d << Eigen::Vector3d::Constant(h2 / (m * r)), Eigen::Vector3d::Constant(h2 / (1.6 * m * r * r));
  return d;
}

void ImplicitBdem::compute_scale() {
  // Masses and radii do not change: only a new step length or a rebuild's new ghosts make new scales.
  if (scale_step_ == h_ && scale_rebuild_ == d_.rebuilds() && scale_.size() == d_.x.size()) return;
  scale_.resize(d_.x.size());
  for (std::size_t i = 0; i < d_.x.size(); ++i) scale_[i] = convergence_scale(i);
  scale_step_ = h_;
  scale_rebuild_ = d_.rebuilds();
}

double ImplicitBdem::energy_change(Want want) {
  evaluate(want);
  // Element by element: the difference of two large global sums would cancel at tight tolerances.
  double local = 0, total = 0;
  for (std::size_t k = 0; k < pair_energy_.size(); ++k) local += pair_energy_[k] - pair_energy_base_[k];
  for (std::size_t i = 0; i < particle_energy_.size(); ++i) local += particle_energy_[i] - particle_energy_base_[i];
  MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, d_.comm);
  return total;
}

void ImplicitBdem::retract(double alpha) {
  for (std::size_t i = 0; i < d_.n_owned; ++i) {
    if (d_.constraint[i] >= 0) continue;
    d_.x[i] = p_base_[i] + alpha * direction_[i].head<3>();
    d_.q[i] = quat::exp_body(q_base_[i], alpha * direction_[i].tail<3>());
  }
  d_.refresh_ghosts();
}

// The line search's first trial (implicit.line_search_contacts): the minimiser on (0, 1] of the Newton model along
// the direction with its contacts, pairs and planes, taken exactly (physics/contact_line.hpp). The model's curvature
// along a direction of CG from a zero guess is −slope.
double ImplicitBdem::contact_line_step(double slope) {
  const std::size_t n = d_.n_owned;
  // No contact candidate and no obstacle on any rank (a bonded body alone): the full step, and no exchange.
  int contacts = !scene_.obstacles.empty() ||
                 std::any_of(d_.pairs.begin(), d_.pairs.end(), [](const Pair& p) { return p.bond < 0; });
  MPI_Allreduce(MPI_IN_PLACE, &contacts, 1, MPI_INT, MPI_MAX, d_.comm);
  if (!contacts) return 1.0;
  line_contacts_.clear();
  auto add = [&](double gap, double rate) {
    if (gap < 0 || gap + rate < 0) line_contacts_.push_back({gap, rate});
  };
  take_direction_step();
  Eigen::Vector3d normal;
  for (std::size_t k = 0; k < d_.pairs.size(); ++k) {
    if (d_.pairs[k].bond >= 0) continue;
    const physics::LineContact line = contact_along_direction(k, normal);
    add(line.gap, line.rate);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (d_.constraint[i] >= 0) continue;
    for (const auto& obstacle : scene_.obstacles)
      geometry::for_each_plane(obstacle, [&](const Eigen::Vector3d& point, const Eigen::Vector3d& unit_normal) {
        add(physics::plane_gap(d_.x[i], d_.radius[i], point, unit_normal), unit_normal.dot(direction_step_[i]));
      });
  }
  return physics::contact_line_minimiser(slope, -slope, line_contacts_, contact_k_, [&](double* values, int count) {
    MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, MPI_SUM, d_.comm);
  });
}

double ImplicitBdem::residual() {
  // The step each particle's gradient asks for, relative to its radius: h² M⁻¹ g / r (rotations: half-angles).
  // (Squared norms, and one square root at the end: this runs after every evaluation.)
  compute_scale();
  double local = 0, global = 0;
  for (std::size_t i = 0; i < d_.n_owned; ++i) {
    if (d_.constraint[i] >= 0) continue;
    const Eigen::Matrix<double, 6, 1> step = scale_[i].cwiseProduct(gradient_[i]);
    local = std::max({local, step.head<3>().squaredNorm(), step.tail<3>().squaredNorm()});
  }
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, d_.comm);
  return std::sqrt(global);
}

void ImplicitBdem::set_direction(std::span<const double> y) {
  for (std::size_t i = 0; i < d_.n_owned; ++i) {
    const std::size_t row = static_cast<std::size_t>(system_.local_row(i));
    for (int k = 0; k < 6; ++k) direction_[i][k] = scale_[i][k] * y[6 * row + k];
  }
}

bool ImplicitBdem::bonds_moved() const {
  // The angle between unit quaternions q and p is 2 acos |q·p|; compared through its cosine.
  const double cos_half = std::cos(0.5 * kRefreshTurn);
  int moved = 0;
  for (std::size_t i = 0; i < d_.n_owned && !moved; ++i)
    moved = std::abs(d_.q[i].dot(Eigen::Map<const Eigen::Vector4d>(&matrix_state_[kMatrixState * i + 3]))) < cos_half;
  const double h2 = h_ * h_;
  for (std::size_t k = 0; k < d_.pairs.size() && !moved && k < bond_lengths_.size(); ++k) {
    const Pair& p = d_.pairs[k];
    if (p.bond < 0) continue;
    const physics::BondRest& rest = d_.bonds[p.bond].rest;
    const double shift = std::abs((d_.x[p.b] - d_.x[p.a]).norm() - bond_lengths_[k]);
    moved = rest.kn * h2 * shift > kRefreshShift * std::min(d_.mass[p.a], d_.mass[p.b]) * rest.l0;
  }
  MPI_Allreduce(MPI_IN_PLACE, &moved, 1, MPI_INT, MPI_MAX, d_.comm);
  return moved != 0;
}

bool ImplicitBdem::minimise() {
  const std::size_t n = d_.n_owned;
  direction_.resize(n);
  min_ = Minimisation{};
  min_.rhs.assign(6 * n, 0.0);
  min_.y.assign(6 * n, 0.0);
  min_.block_jacobi = start_on_block_jacobi_;
  hessian_current_ = false;  // bonds may have broken since the last assembly
  min_.carry = matrix_carries(h_);
  solvers::NewtonSettings settings;
  settings.max_iterations = scene_.implicit.max_iterations;
  settings.tolerance = scene_.implicit.tolerance;
  settings.line_search = kLineSearch;
  settings.roundoff = kEnergyRoundoff;
  settings.extrapolate = scene_.implicit.line_search_extrapolation;
  settings.extrapolation_ratio = kExtrapolationRatio;
  settings.max_extrapolation = kMaxExtrapolation;
  const solvers::NewtonResult result = newton_.minimise(*this, settings);
  // The next midpoint predictor takes ∇V from the last evaluation: at the final state, unless the iterations
  // ran out after a step.
  if (scene_.implicit.form == "midpoint" && result.iterations == settings.max_iterations) evaluate(Want::Gradient);
  return result.converged();
}

ImplicitBdem::Evaluation ImplicitBdem::evaluate(int iteration) {
  const bool newton = scene_.implicit.optimizer == "newton";
  min_.switched = false;
  // A lagged Hessian: the matrix of an earlier iteration is kept while Newton still contracts fast with it and
  // no contact opened or closed (that changes the matrix outright). Within a step the bonded iterates move
  // little, so on the bonded scenes it costs no Newton iterations and saves most of the assemblies.
  const double lag = scene_.implicit.hessian_lag_contraction, tolerance = scene_.implicit.tolerance;
  // The first iteration may keep the matrix of the last step (matrix_carries): a bonded step's Hessian hardly
  // differs from the last one's, so most assemblies and factorisations are skipped for a few more Krylov
  // iterations. Its contacts are brought up to date (a contact refresh) where the
  // preconditioner follows the matrix alone; otherwise it is kept only if no contact opened or closed.
  min_.carried = min_.carry && iteration == 0;
  const bool refresh_carried = min_.carried && refreshes_carried_contacts();
  const bool lag_candidate =
      newton && lag > 0 && ((hessian_current_ && min_.full_step && min_.same_contacts) || min_.carried);
  // A state the last step predicts to be converged, or one that may keep the lagged Hessian, is evaluated
  // on its gradient first: the Hessian, the costly part of an evaluation, is assembled only if needed.
  const bool gradient_first = min_.likely_converged || lag_candidate;
  double res = 0;
  bool lagged = false;
  if (gradient_first) {
    if (!min_.gradient_at_state) evaluate(Want::Gradient);
    min_.gradient_at_state = true;  // an assembly here needs only the Hessian
    res = residual();
    if (min_.carried) {
      long changed = contacts_changed_;
      MPI_Allreduce(MPI_IN_PLACE, &changed, 1, MPI_LONG, MPI_MAX, d_.comm);
      lagged = res >= tolerance && (changed == 0 || refresh_carried);
      hessian_current_ = lagged;  // from here on judged as a lagged Hessian of this step
      if (lagged) ++carried_hessians_;
      if (lagged && refresh_carried) {
        contacts_only_ = gradient_at_state_ = true;
        evaluate(Want::Hessian);
        contacts_only_ = gradient_at_state_ = false;
      }
    } else {
      lagged = lag_candidate && res >= tolerance && res < lag * min_.previous_res;
    }
  }
  if (!gradient_first || (res >= tolerance && !lagged)) {
    // After this step's first assembly, later ones may update only the contacts (implicit.contact_refresh).
    const bool refresh = newton && scene_.implicit.contact_refresh && min_.assembled_in_step;
    const bool bonds_stale = refresh && bonds_moved();
    contacts_only_ = refresh && !bonds_stale;
    stale_bond_assemblies_ += bonds_stale;
    gradient_at_state_ = min_.gradient_at_state;
    evaluate(newton ? Want::Hessian : Want::Gradient);
    contacts_only_ = gradient_at_state_ = false;
    min_.assembled_in_step = newton;
    res = residual();
    hessian_current_ = newton;
    matrix_assembled_ = newton;
    matrix_h_ = h_;
    matrix_rebuild_ = d_.rebuilds();
    matrix_breaks_ = breaks_;
    preconditioner_of_matrix_ = false;
  }
  if (lagged) ++lagged_hessians_;
  min_.lagged = lagged;
  min_.previous_res = res;
  const char* note = min_.likely_converged ? (lagged ? " (predicted) (lagged Hessian)" : " (predicted)")
                                           : (lagged ? " (lagged Hessian)" : "");
  min_.likely_converged = false;
  return {res, note};
}

void ImplicitBdem::descent() {
  // Inertia-scaled steepest descent (notes Algorithm 1).
  const double h2 = h_ * h_;
  for (std::size_t i = 0; i < d_.n_owned; ++i) {
    const double m = d_.mass[i], r = d_.radius[i];
    direction_[i].head<3>() = -gradient_[i].head<3>() * (h2 / m);
    direction_[i].tail<3>() = -gradient_[i].tail<3>() * (h2 / (1.6 * m * r * r));
    if (d_.constraint[i] >= 0) direction_[i].setZero();
  }
}

// Search direction: Newton on the reduced system (notes eq. 28–31), or inertia-scaled steepest descent.
bool ImplicitBdem::search_direction(int iteration, double res) {
  const std::size_t n = d_.n_owned;
  const double tolerance = scene_.implicit.tolerance;
  if (scene_.implicit.optimizer != "newton") {
    descent();
    return false;
  }
  std::vector<double>&rhs = min_.rhs, &y = min_.y;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t row = static_cast<std::size_t>(system_.local_row(i));  // (the system's row order)
    // [ERRATUM] Alg. 2 line 7 prints +grad
    for (int k = 0; k < 6; ++k) rhs[6 * row + k] = -scale_[i][k] * gradient_[i][k];
  }
  {
    ScopedPhase timer(timers_, Phase::Solve);
    // The preconditioner is built at the step's first iteration and kept while the lagged one still
    // works (CG needing at most twice its fresh count, plus a margin): the matrix changes little
    // between Newton iterations, and the set-up (a factorisation, a multigrid hierarchy) is the costly part.
    // (A neighbour rebuild mid-step made a new matrix, which has none yet.)
    // A carried matrix keeps the preconditioner built from it; not a multigrid's, whose near-nullspace was taken
    // at the state of its set-up, which a restart does not have.
    const bool carried_pc = min_.carried && min_.lagged && preconditioner_of_matrix_ && !system_.multigrid();
    // A contact that opened or closed since the preconditioner was built (counted from this step's first
    // evaluation on, so that a restart takes the same path) changes the matrix outright, and a lagged
    // factorisation then takes many times its usual CG iterations. Not a multigrid, whose set-up costs more
    // than the iterations it saves.
    if (iteration == 0) preconditioner_contact_changes_ = contact_set_changes_;
    int contacts_moved =
        !system_.multigrid() && iteration > 0 && contact_set_changes_ != preconditioner_contact_changes_ ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &contacts_moved, 1, MPI_INT, MPI_MAX, d_.comm);
    bool refresh = !scene_.implicit.reuse_preconditioner || (iteration == 0 && !carried_pc) ||
                   !system_.has_preconditioner() || contacts_moved ||
                   (iteration > 0 && last_krylov_ > 2 * fresh_krylov_ + 10);
    if (refresh) set_rigid_modes_if_multigrid();
    // Forcing term (notes eq. 31, on the scaled residual), capped; but never tighter than what reaches the
    // tolerance: a full step leaves about rtol·res, so the last solve of a step needs only
    // rtol = kToleranceMargin·tolerance/res, however far that is above the cap.
    auto forcing = [&](double cap) {
      return std::max(std::min(cap, std::sqrt(res)), kToleranceMargin * tolerance / res);
    };
    double rtol = forcing(kForcingCap);
    // On a contact-dominated matrix IC(0) meets pivots that are not positive definite. The default
    // preconditioner then shifts its diagonal to stay SPD, which works for that solve; but shifted and lagged
    // it needs more CG iterations than the fallback, block symmetric Gauss–Seidel (solve_fallback), which is
    // SPD whatever the matrix. So after a shifted factorisation or a CG breakdown with another preconditioner,
    // the step's later iterations, whose matrices differ little, go to the fallback at once, as does a solve
    // whose factorisation no shift could make SPD on some rank (a zero or non-finite diagonal entry), every
    // rank alike. (D-ILU never shifts; sending its slow solves there as well costs more than it saves, since
    // its preconditioner is rebuilt on contact changes.)
    solvers::BlockSystem::Result result{};
    const long fallbacks_before = fallback_solves_;
    auto solve_fallback = [&]() {
      rtol = forcing(kFallbackForcingCap);
      result = system_.solve_fallback(rhs, y, rtol);
      krylov_iterations_ += result.iterations;
      ++fallback_solves_;
      min_.block_jacobi = true;
    };
    if (min_.block_jacobi) {
      solve_fallback();
    } else {
      result = system_.solve(rhs, y, rtol, refresh);
      krylov_iterations_ += result.iterations;
      // A lagged preconditioner that failed (e.g. a multigrid smoother's stale eigenvalue bounds after
      // contacts changed) is rebuilt and the system solved again.
      if (!refresh && result.reason < 0) {
        set_rigid_modes_if_multigrid();
        refresh = true;
        result = system_.solve(rhs, y, rtol, refresh);
        krylov_iterations_ += result.iterations;
      }
      if (refresh) factor_tried_ = true;
      if (result.preconditioner_shifted || result.reason == KSP_DIVERGED_PC_FAILED) factor_shifted_ = true;
      if (result.reason < 0 && result.reason != KSP_DIVERGED_ITS) solve_fallback();
      else if (result.preconditioner_shifted) min_.block_jacobi = true;
    }
    // Inexact Newton: a full step leaves about rtol of the residual (2x margin for the nonlinearity).
    min_.likely_converged = result.reason > 0 && 2.0 * rtol * res < tolerance;
    last_krylov_ = result.iterations;
    if (refresh || iteration == 0) fresh_krylov_ = result.iterations;  // (a carried one: this step's reference)
    if (refresh) preconditioner_of_matrix_ = true;
    if (refresh) preconditioner_contact_changes_ = contact_set_changes_;
    if (monitor_ && d_.rank == 0) {
      const char* how = fallback_solves_ > fallbacks_before ? " (fallback)"
                        : refresh                           ? " (fresh preconditioner)"
                                                            : "";
      std::fprintf(stderr, "  krylov %d%s\n", static_cast<int>(result.iterations), how);
    }
    set_direction(y);
    // Semismooth active-set rounds (implicit_active_set.cpp): the contacts this step closes or opens switch
    // branch in the model, which is solved again from the same iterate.
    for (int round = 0; round < scene_.implicit.active_set_rounds && min_.rounds_help; ++round) {
      if (!active_set_round(rhs, y, rtol, res, min_.block_jacobi, min_.likely_converged)) break;
      min_.switched = true;
    }
  }
  for (std::size_t i = 0; i < n; ++i)
    if (d_.constraint[i] >= 0) direction_[i].setZero();
  return true;  // CG from a zero guess: its curvature along the direction is −slope
}

solvers::NewtonProblem::SlopeTerms ImplicitBdem::slope_terms() const {
  double slope = 0;
  for (std::size_t i = 0; i < d_.n_owned; ++i) slope += gradient_[i].dot(direction_[i]);
  return {slope, energy_noise_};
}

double ImplicitBdem::step_bound() const {
  // A step moves no particle more than one radius (notes §3 step-length cap); contacts it reaches beyond the
  // Verlet lists enter at the rebuild that follows the accepted step, before the next Newton iteration.
  double largest = 0;
  for (std::size_t i = 0; i < d_.n_owned; ++i) largest = std::max(largest, direction_[i].head<3>().norm());
  return largest > 0 ? d_.r_max / largest : std::numeric_limits<double>::infinity();
}

double ImplicitBdem::first_trial(double alpha, double slope, bool newton) {
  // (Not after an active-set round, whose direction is not CG's on this iterate's model.)
  if (!scene_.implicit.line_search_contacts || !newton || min_.switched) return alpha;
  const double contact_alpha = contact_line_step(slope);
  contact_line_steps_ += contact_alpha < alpha;
  return std::min(alpha, contact_alpha);
}

void ImplicitBdem::begin_line_search(double alpha) {
  // Armijo backtracking along geodesics from here (retract).
  const std::size_t n = d_.n_owned;
  p_base_.assign(d_.x.begin(), d_.x.begin() + static_cast<std::ptrdiff_t>(n));
  q_base_.assign(d_.q.begin(), d_.q.begin() + static_cast<std::ptrdiff_t>(n));
  pair_energy_base_ = pair_energy_;
  particle_energy_base_ = particle_energy_;
  // A full step the next iteration will take only the gradient of (a predicted convergence, or a lagged
  // Hessian) is evaluated with it at once: on the bonded scenes nearly every full step is accepted, and one
  // pass over the pairs replaces two. (A refused one wasted the gradient's extra over the energy.)
  const bool newton = scene_.implicit.optimizer == "newton";
  min_.gradient_next = alpha == 1.0 && (min_.likely_converged ||
                                        (newton && scene_.implicit.hessian_lag_contraction > 0 && hessian_current_));
}

double ImplicitBdem::trial(double alpha, int k) {
  ScopedPhase timer(timers_, Phase::LineSearch);
  retract(alpha);
  min_.trial_with_gradient = k == 0 && min_.gradient_next;
  return energy_change(min_.trial_with_gradient ? Want::Gradient : Want::Energy);
}

void ImplicitBdem::end_iteration(bool accepted, double alpha) {
  const bool full_step = accepted && alpha == 1.0;
  min_.gradient_at_state = accepted && min_.trial_with_gradient;  // (not after an extrapolation's trials)
  min_.likely_converged = min_.likely_converged && full_step;
  min_.full_step = full_step;
  // A direction whose switched contacts the line search cut short: where pairs at touching distance switch back
  // and forth between iterations (pieces parting) the rounds' model misleads, and the step's further iterations
  // take the plain Newton direction.
  if (min_.switched && !full_step && min_.rounds_help) {
    min_.rounds_help = false;
    ++active_set_stops_;
  }
  if (full_step && hessian_current_) {  // the accepted state's energy evaluation compared the contact sets
    long changed = contacts_changed_;
    MPI_Allreduce(MPI_IN_PLACE, &changed, 1, MPI_LONG, MPI_MAX, d_.comm);
    min_.same_contacts = changed == 0;
  }
  if (!accepted) {
    retract(0.0);
    // Its refused full step wrote the midpoint's ∇V.
    if (scene_.implicit.form == "midpoint" && min_.gradient_next) evaluate(Want::Gradient);
    return;
  }
  if (refresh_contact_normals()) min_.gradient_at_state = false;  // a new contact energy
  if (d_.needs_rebuild(step_ + 1)) {
    d_.rebuild();
    prepare_matrix();
    hessian_current_ = false;
    min_.gradient_at_state = false;  // new pairs
    min_.assembled_in_step = false;  // and a new matrix
    if (scene_.implicit.form == "midpoint") d_.forward(p_n_, q_n_);  // x_n of the new ghosts
    take_contact_normals();  // of the new pairs, at the same positions: a kept pair's contact energy is unchanged
  }
}

}  // namespace percussion::bdem
