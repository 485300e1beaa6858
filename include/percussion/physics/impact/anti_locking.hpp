#pragma once
// Anti-locking (notes 003 Alg. F, paper Alg. 2) for a general block mass matrix: project the velocity M-orthogonally
// onto {Eᵀv = 0}, restrict every other constraint to that subspace and renormalise it (the covector formulas of the
// notes, Appendix A item 1), drop the implicit equalities, and resolve the reduced problem, whose cone is pointed,
// with any operator. The projection is dissipative (it removes the jammed directions' energy perfectly
// inelastically); the energy it removes is reported. Without implicit equalities it is the identity, bit for bit.
#include <functional>
#include <span>
#include <vector>

#include "percussion/physics/impact/approximate_lineality.hpp"
#include "percussion/physics/impact/impact_system.hpp"
#include "percussion/physics/impact/lineality.hpp"
#include "percussion/physics/impact/resolution.hpp"

namespace percussion::impact {

// The reduced problem. A restricted gradient n_i − E(M⁻¹E)ᵀn_i spreads over the jammed cluster its bodies touch,
// so each cluster becomes one merged body of the reduced ImpactSystem (its members' degrees of freedom in body
// order, a block-diagonal mass block); every other body keeps its block. Bodies stay in the order of their lowest
// member, constraints in their original order, so "lowest index" means the same in both.
class AntiLocking {
 public:
  // `span_tolerance`: a constraint off I whose restriction has ‖x‖_{M⁻¹} ≤ span_tolerance (it lies, to round-off,
  // in the lineality space) is dropped too, as line 7 of the algorithm does.
  AntiLocking(const ImpactSystem& system, ImplicitEqualities found, double span_tolerance = 1e-8);

  bool identity() const { return basis_.clusters.empty(); }
  // The reduced system; the original itself when there is nothing to remove.
  const ImpactSystem& system() const { return identity() ? *original_ : reduced_; }
  int dimension() const { return basis_.dimension(); }
  const LinealityBasis& basis() const { return basis_; }
  const ImplicitEqualities& implicit() const { return found_; }
  // Original constraints left out of the reduced system (I, and any dropped by the span tolerance), ascending.
  std::span<const int> removed() const { return removed_; }
  // Reduced constraint → original constraint.
  std::span<const int> original_constraint() const { return original_of_; }

  // The projected velocity P(v) in the reduced system's layout; returns the kinetic energy the projection removes,
  // ½‖v‖²_M − ½‖P(v)‖²_M = ½ Σ_k (e_kᵀv)².
  double project(std::span<const double> v, std::vector<double>& reduced) const;
  // A reduced velocity back in the original layout.
  void restore(std::span<const double> reduced, std::vector<double>& v) const;
  // Multipliers λ ≥ 0 on the original normalised gradients with v_final = v0 + M⁻¹Nλ (to round-off), from the
  // reduced operator's multipliers: λ_i = λ'_i / ‖x_i‖ off I; on I the lineality-space part of the change, written
  // on N_I and shifted along the program's combination (N_I λ* = 0, λ* ≥ 1) until non-negative.
  std::vector<double> original_impulses(std::span<const double> v0, std::span<const double> reduced_impulses) const;

 private:
  const ImpactSystem* original_;
  ImplicitEqualities found_;
  LinealityBasis basis_;
  ImpactSystem reduced_;
  std::vector<int> dof_map_;      // reduced degree of freedom → original one
  std::vector<int> local_;        // original body → its first degree of freedom in its cluster's block
  std::vector<int> cluster_body_;  // cluster → its merged body in the reduced system
  std::vector<int> removed_, original_of_;
  std::vector<double> restricted_norm_;  // ‖x_i‖_{M⁻¹} per reduced constraint
  // Cluster basis coefficients (e_kᵀM⁻¹n_i) per reduced constraint touching a cluster, to account the lineality
  // part of its impulses: (cluster, k, value) triples, in constraint order.
  struct Coupling {
    int constraint, cluster, k;
    double value;
  };
  std::vector<Coupling> couplings_;
};

struct AntiLockingReport {
  std::vector<int> implicit;     // the constraints removed: I, and the approximate ones (Alg. I) when asked for
  std::vector<int> approximate;  // those of them only approximately jammed (δ ≤ eps)
  int dimension = 0;             // dim E
  double energy_removed = 0;     // by the projection: ½‖v0‖²_M − ½‖P(v0)‖²_M
  bool solved_lp = false;
  // With Alg. I: δ of the reduced problem the operator ran on, and its certified lower bound (+inf: nothing left).
  double delta = 0.0, delta_lower = 0.0;
};

// Any impact operator on a system (Gauss–Seidel, Generalized Reflections): resolves v in place.
using ImpactOperator = std::function<Resolution(const ImpactSystem&, std::vector<double>&)>;

// Algorithm F around `resolve`: finds I (with `approximate`, also the approximately jammed constraints of Alg. I),
// projects, runs the operator on the reduced system and reports impulses against the original constraints. When
// nothing is removed it calls the operator on `system` and `v` themselves.
Resolution resolve_anti_locked(const ImpactSystem& system, std::vector<double>& v, const ImpactOperator& resolve,
                               const LinealityOptions& options = {}, AntiLockingReport* report = nullptr,
                               const ApproximateLinealityOptions* approximate = nullptr);

}  // namespace percussion::impact
