#pragma once
// The bound-constrained QPs of the impact operators (notes 003 Alg. C, H, J2, J3): over a subset S of an
// ImpactSystem's constraints, min ½ xᵀAx + bᵀx for lower ≤ x ≤ upper with A = N_SᵀM⁻¹N_S and b = N_Sᵀv, i.e. the
// kinetic energy ½‖v + M⁻¹N_S x‖²_M − ½‖v‖²_M. A is sparse (constraints that share no body do not couple),
// assembled as SeqAIJ on PETSC_COMM_SELF and handed to PETSc TAO. The default solver is TRON (gradient projection
// and Newton–CG steps on the free face, without preconditioner: A has a unit diagonal and is singular when contacts
// are redundant); it keeps x inside the bounds exactly and identifies the active set, so the clean-up only clamps.
// On the nearly singular A of settling piles the decrease left near the optimum falls below the round-off of the
// objective, where TRON's line searches and trust-region tests stall: the objective is therefore measured from a
// reference point, and a stalled run restarts from its iterate as the new reference (QpResult::restarts). TAO gets
// a copy of A (the BNK solvers shift their Hessian in place). When TAO still stops above the tolerance, an
// active-set finish (qp_active_set.hpp) takes over, from TAO's iterate and then from the start; a result that misses
// the tolerance after it says not converged. Options under the prefix (default "impact_qp_"), e.g.
// -impact_qp_tao_type bnls, -impact_qp_tao_monitor.
#include <petscmat.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "percussion/physics/impact/impact_system.hpp"

namespace percussion::impact {

struct QpOptions {
  // Accepted when the projected KKT residual ‖r‖∞ is at most residual × ‖v‖_M (r_i = ∂_i f where x_i is free,
  // min(∂_i f, 0) at a lower bound, max(∂_i f, 0) at an upper one) beyond the round-off of computing it, that is
  // |r_i| − γ_{k+1}(|A||x| + |b|)_i with k the row's entries. Far below the operators' eps (notes Alg. H).
  double residual = 1e-13;
  std::int64_t max_iterations = 1000;  // TAO iterations, over all restarts
  std::string prefix = "impact_qp_";
};

struct QpResult {
  std::vector<double> x;        // inside [lower, upper] exactly
  bool converged = false;       // the residual test passed
  std::string reason;           // TAO's reason, and why the result was not accepted
  std::int64_t iterations = 0;  // TAO iterations, over all restarts
  int restarts = 0;             // TAO runs restarted from a stalled iterate with a new reference point
  int finish_iterations = 0;    // face solves of the active-set finish (qp_active_set.hpp) after TAO, 0 if not needed
  double residual = 0.0;        // max_i (|r_i| − round-off floor_i) / ‖v‖_M after the clean-up (complementarity exact)
};

class ImpactQp {
 public:
  // The QP over the constraints `subset` (in that order; distinct indices) at velocity v (system.dofs() values).
  ImpactQp(const ImpactSystem& system, std::span<const int> subset, const double* v);
  ~ImpactQp();
  ImpactQp(const ImpactQp&) = delete;
  ImpactQp& operator=(const ImpactQp&) = delete;

  int size() const { return static_cast<int>(b_.size()); }
  double objective(const double* x) const;         // ½ xᵀAx + bᵀx
  void gradient(const double* x, double* g) const;  // Ax + b
  // Per component, the bound γ_{k+1}(|A||x| + |b|)_i on the round-off of gradient(x) (Higham, Lemma 3.5).
  void roundoff_floor(const double* x, double* bound) const;
  const std::vector<double>& linear_term() const { return b_; }
  Mat matrix() const { return A_; }

  // Solves with TAO; lower/upper have size() entries (±PETSC_INFINITY for none).
  QpResult solve(std::span<const double> lower, std::span<const double> upper, const QpOptions& options = {}) const;
  // The contact QP: x ≥ 0.
  QpResult solve_nonnegative(const QpOptions& options = {}) const;

 private:
  Mat A_ = nullptr;
  std::vector<double> b_;
  double scale_ = 0.0;  // ‖v‖_M
};

}  // namespace percussion::impact
