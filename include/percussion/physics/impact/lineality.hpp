#pragma once
// Implicit equality constraints (notes 003 §2.5, Alg. E): constraint i is one when some λ ≥ 0 with Nλ = 0 has
// λ_i > 0. Every feasible velocity then has n_iᵀv = 0, and elastic reflections between such opposing constraints
// cycle forever (a ball wedged between two walls). The set I is found by one linear program; E, a basis of the
// lineality space span{n_i : i ∈ I}, is what the anti-locking projection removes.
#include <span>
#include <vector>

#include "percussion/physics/impact/impact_system.hpp"

namespace percussion::impact {

struct LinealityOptions {
  // A velocity w with n_iᵀw > 0 for every constraint proves there is none (wᵀNλ > 0 for every λ ≥ 0, λ ≠ 0) and
  // the linear program is skipped. For balls without walls the centres q are one: a ball–ball gradient lies on
  // the centre line, so n_iᵀq ∝ |x_a − x_b| > 0; with walls, q − z for a point z behind every contacted wall.
  // Checked here with a margin of 1e-12 ‖w‖_M, so a wrong guess only costs the linear program.
  std::span<const double> witness;
  // Always finish with GLPK's rational simplex, even when the floating-point answer passes its check (slow on large
  // problems: rational LU factors).
  bool exact = false;
};

struct ImplicitEqualities {
  std::vector<int> constraints;     // I, ascending
  // λ per constraint: λ ≥ 0, λ_i ≥ 1 on I, 0 off I, Nλ = 0 to the tolerance (LinealityCluster::combination is
  // the one refined to round-off).
  std::vector<double> combination;
  // A velocity w with n_iᵀw ≥ 0 for every constraint and n_iᵀw ≥ 1 off I (the program's dual), or the witness.
  std::vector<double> certificate;
  bool solved_lp = false;  // false: the witness settled it
  bool exact = false;      // the rational simplex was needed
};

// Algorithm E lines 1–2: max Σt s.t. Nλ = 0, λ ≥ t, 0 ≤ t ≤ 1 over the sparse N (≤ 12 nonzeros per column; with
// λ = t + u, u ≥ 0, only the rows Nλ = 0 remain), by GLPK's simplex. Every optimum has t = the indicator of I, so
// I = {i : t_i > ½}. The answer is certified by its own numbers, to a tolerance of 1e-9: the combination on I has
// ‖Nλ‖_{M⁻¹} ≤ 1e-9 Σλ, and the dual velocity w has n_iᵀw ≥ ½ off I and |n_iᵀw| ≤ 1e-9 ‖w‖_M on I. If the check
// fails, GLPK's rational simplex finishes from the floating-point basis (exact for its reading of the data, which
// is the given doubles to 1e-9 relative per entry); `exact` says so. Near-degeneracy beyond the tolerance is
// Algorithm I's business.
ImplicitEqualities find_implicit_equalities(const ImpactSystem& system, const LinealityOptions& options = {});

// Algorithm E line 3: E, an M⁻¹-orthonormal basis of span{n_i : i ∈ I}, cluster by cluster. A cluster is a set of
// bodies joined by constraints of I (a jammed plug between walls); each basis covector lives on one cluster's
// degrees of freedom, ordered body by body (ascending body index), dense there. Nothing is built when I is empty.
struct LinealityCluster {
  std::vector<int> bodies;       // ascending
  std::vector<int> constraints;  // the constraints of I inside it, ascending
  int dofs = 0;                  // Σ body_dofs over `bodies`
  int rank = 0;                  // number of basis covectors
  std::vector<double> basis;     // rank × dofs, row-major: covectors e_k with e_kᵀM⁻¹e_l = δ_kl
  std::vector<double> impulses;  // rank × dofs: M⁻¹e_k
  // |constraints| × rank, row-major: e_k = Σ_j coefficients[j][k] n_{constraints[j]} (impulses on I are reported
  // through it).
  std::vector<double> coefficients;
  // Per constraint of the cluster: λ ≥ 1 with Σ_j λ_j n_j = 0 to round-off (the program's, refined).
  std::vector<double> combination;
};

struct LinealityBasis {
  std::vector<LinealityCluster> clusters;  // ordered by their lowest body
  std::vector<int> cluster_of;             // body → cluster, −1 outside every cluster
  int dimension() const {
    int d = 0;
    for (const LinealityCluster& c : clusters) d += c.rank;
    return d;
  }
};

// Singular values of the cluster's gradients (in the M⁻¹ metric) below `rank_tolerance` times the largest count
// as dependence.
LinealityBasis lineality_basis(const ImpactSystem& system, const ImplicitEqualities& found,
                               double rank_tolerance = 1e-6);

}  // namespace percussion::impact
