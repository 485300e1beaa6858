// Semismooth active-set rounds of the implicit BDEM's Newton iteration (implicit.active_set_rounds).
//
// A contact's penalty ½k·min(0, g)² switches its stiffness on or off where the pair touches, and Newton's model
// at an iterate knows only the contacts touching there. A step that closes a contact the model did not hold
// runs the pair into each other; the next iteration pushes it back out. Where contacts abound (a torn cloth)
// that kink sets the Newton count: the residual left after a Newton step sits on the touching particles.
// A round reads, from the step's linearised gaps (exact along predicted normals, where the gap is linear in the
// positions), which contacts it would close or open, switches those pairs to that branch of their penalty in
// the model (closing: ½k g², with its gradient k g n and Hessian k n nᵀ at the iterate; opening: nothing) and
// solves again from the same iterate, for the correction the switches ask of the last solution. The line search
// still tests the true energy and gradient, so the minimiser is the same.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "percussion/methods/bdem/implicit_bdem.hpp"

namespace percussion::bdem {

Eigen::Vector3d ImplicitBdem::branch_normal(std::size_t k, const Eigen::Vector3d& pa,
                                            const Eigen::Vector3d& pb) const {
  if (predicted_normals_) return pair_normal_[k];
  const Eigen::Vector3d delta = pb - pa;
  const double length = delta.norm();
  return length > 0.0 ? Eigen::Vector3d(delta / length) : Eigen::Vector3d::UnitX();
}

void ImplicitBdem::take_direction_step() {
  direction_step_.resize(d_.x.size());
  for (std::size_t i = 0; i < d_.n_owned; ++i) direction_step_[i] = direction_[i].head<3>();
  d_.forward(direction_step_);
}

physics::LineContact ImplicitBdem::contact_along_direction(std::size_t k, Eigen::Vector3d& normal) const {
  const Pair& p = d_.pairs[k];
  const Eigen::Vector3d& pa = d_.x[p.a];  // (contacts are seen at the iterate in every form)
  const Eigen::Vector3d& pb = d_.x[p.b];
  normal = branch_normal(k, pa, pb);
  const double reach = d_.radius[p.a] + d_.radius[p.b];
  const double gap = predicted_normals_ ? normal.dot(pb - pa) - reach : (pb - pa).norm() - reach;
  return {gap, normal.dot(direction_step_[p.b] - direction_step_[p.a])};
}

long ImplicitBdem::switch_contact_branches() {
  const std::size_t n = d_.n_owned, np = d_.pairs.size();
  // No contact candidate on any rank (a bonded body alone): nothing to switch, and no exchange.
  const bool known = contact_active_.size() == np;
  long candidates = known ? static_cast<long>(std::count_if(d_.pairs.begin(), d_.pairs.end(),
                                                            [](const Pair& p) { return p.bond < 0; }))
                          : 0;
  MPI_Allreduce(MPI_IN_PLACE, &candidates, 1, MPI_LONG, MPI_SUM, d_.comm);
  if (candidates == 0) return 0;
  take_direction_step();
  contact_branch_.assign(np, 0);
  branch_gradient_.assign(n, Eigen::Vector3d::Zero());
  std::vector<double> to_owners(3 * d_.outgoing_entries(), 0.0);
  std::size_t entry = 0;
  long flips = 0;
  for (std::size_t k = 0; k < np; ++k) {
    const Pair& p = d_.pairs[k];
    const bool ghost_b = static_cast<std::size_t>(p.b) >= n;
    double* ghost_out = ghost_b ? &to_owners[3 * entry++] : nullptr;
    if (p.bond >= 0 || !known) continue;
    Eigen::Vector3d normal;
    const physics::LineContact line = contact_along_direction(k, normal);
    const double gap_after = line.gap + line.rate;
    const bool on = contact_active_[k] != 0, on_after = gap_after < 0.0;
    if (on == on_after) continue;
    ++flips;
    contact_branch_[k] = on_after ? 1 : 2;
    // The term's gradient on a at the step's end: −k g₁ n in the closed branch (g₁ the linearised gap there), 0 in
    // the open one; on b the opposite.
    const Eigen::Vector3d change = (on_after ? -contact_k_ : contact_k_) * gap_after * normal;
    if (d_.constraint[p.a] < 0) branch_gradient_[p.a] += change;
    if (d_.constraint[p.b] >= 0) continue;
    if (ghost_b) Eigen::Map<Eigen::Vector3d>{ghost_out} = -change;
    else branch_gradient_[p.b] -= change;
  }
  MPI_Allreduce(MPI_IN_PLACE, &flips, 1, MPI_LONG, MPI_SUM, d_.comm);
  if (flips == 0) {
    contact_branch_.clear();
    return 0;
  }
  std::vector<double> received;
  d_.send_to_owners(to_owners, 3, received);
  for (std::size_t e = 0; 3 * e < received.size(); ++e) {
    const std::int32_t row = d_.incoming_slot(e);
    if (d_.constraint[row] < 0) branch_gradient_[row] += Eigen::Map<const Eigen::Vector3d>(&received[3 * e]);
  }
  return flips;
}

bool ImplicitBdem::active_set_round(std::span<const double> rhs, std::vector<double>& y, double rtol, double res,
                                    bool& block_jacobi_this_step, bool& likely_converged) {
  const long switched = switch_contact_branches();
  if (switched == 0) return false;
  ++active_set_rounds_;
  branch_switches_ += switched;
  contacts_only_ = gradient_at_state_ = true;
  evaluate(Want::Hessian);
  contacts_only_ = gradient_at_state_ = false;
  contact_branch_.clear();
  // From the last solution y, which the switched pairs' rows alone no longer satisfy: A′y − b′ is S times the
  // switched terms' gradient change at the step's end (branch_gradient_), so the correction z solves
  // A′z = −S·branch_gradient_, to what leaves rtol of |b|: fewer CG iterations than the whole system from zero.
  round_rhs_.assign(rhs.size(), 0.0);
  round_correction_.resize(rhs.size());
  double norms[2] = {0, 0};  // |b|², |A′y − b′|²
  for (std::size_t i = 0; i < d_.n_owned; ++i) {
    const std::size_t row = static_cast<std::size_t>(system_.local_row(i));
    for (int k = 0; k < 3; ++k) round_rhs_[6 * row + k] = -scale_[i][k] * branch_gradient_[i][k];
  }
  for (std::size_t j = 0; j < rhs.size(); ++j) {
    norms[0] += rhs[j] * rhs[j];
    norms[1] += round_rhs_[j] * round_rhs_[j];
  }
  MPI_Allreduce(MPI_IN_PLACE, norms, 2, MPI_DOUBLE, MPI_SUM, d_.comm);
  const double relative = std::sqrt(norms[1] / norms[0]);
  solvers::BlockSystem::Result result{0, KSP_CONVERGED_RTOL, relative};
  if (relative > rtol) {
    const double rtol_z = std::min(0.5, rtol / relative);
    if (!block_jacobi_this_step) {
      result = system_.solve(round_rhs_, round_correction_, rtol_z, true);
      krylov_iterations_ += result.iterations;
    }
    if (block_jacobi_this_step || (result.reason < 0 && result.reason != KSP_DIVERGED_ITS)) {
      result = system_.solve_fallback(round_rhs_, round_correction_, rtol_z);
      krylov_iterations_ += result.iterations;
      ++fallback_solves_;
      block_jacobi_this_step = true;
    }
    for (std::size_t j = 0; j < y.size(); ++j) y[j] += round_correction_[j];
  }
  likely_converged = result.reason > 0 && 2.0 * rtol * res < scene_.implicit.tolerance;
  fresh_krylov_ = last_krylov_ = result.iterations;
  preconditioner_of_matrix_ = true;
  preconditioner_contact_changes_ = contact_set_changes_;
  if (monitor_ && d_.rank == 0)
    std::fprintf(stderr, "  active-set round: %ld contacts switch, krylov %d\n", switched,
                 static_cast<int>(result.iterations));
  set_direction(y);
  return true;
}

}  // namespace percussion::bdem
