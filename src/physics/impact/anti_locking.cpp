// Anti-locking projection and the reduced impact problem (notes 003 Alg. F, covector form of Appendix A item 1).
#include "percussion/physics/impact/anti_locking.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace percussion::impact {

namespace {

// xᵀM⁻¹x for a vector over consecutive original bodies `bodies` (laid out body after body).
double inverse_metric(const ImpactSystem& s, std::span<const int> bodies, const std::vector<double>& x) {
  double sum = 0.0;
  int at = 0;
  for (int k : bodies) {
    const int n = s.body_dofs(k);
    const std::span<const double> minv = s.inverse_mass_block(k);
    for (int r = 0; r < n; ++r) {
      double row = 0.0;
      for (int c = 0; c < n; ++c) row += minv[r * n + c] * x[at + c];
      sum += x[at + r] * row;
    }
    at += n;
  }
  return sum;
}

}  // namespace

AntiLocking::AntiLocking(const ImpactSystem& system, ImplicitEqualities found, double span_tolerance)
    : original_(&system), found_(std::move(found)), basis_(lineality_basis(system, found_)) {
  const ImpactSystem& s = system;
  if (identity()) {
    original_of_.resize(s.constraints());
    std::iota(original_of_.begin(), original_of_.end(), 0);
    return;
  }
  // Reduced bodies: a cluster where its lowest body stood, every other body as it is.
  std::vector<int> group_of(s.bodies(), -1);
  std::vector<std::vector<int>> members;
  local_.assign(s.bodies(), 0);
  for (int k = 0; k < s.bodies(); ++k) {
    const int cl = basis_.cluster_of[k];
    if (cl >= 0 && basis_.clusters[cl].bodies.front() != k) {
      group_of[k] = group_of[basis_.clusters[cl].bodies.front()];
      continue;
    }
    group_of[k] = static_cast<int>(members.size());
    members.push_back(cl >= 0 ? basis_.clusters[cl].bodies : std::vector<int>{k});
  }
  std::vector<int> cluster_of_group(members.size(), -1);
  for (std::size_t g = 0; g < members.size(); ++g) {
    int dofs = 0;
    for (int k : members[g]) local_[k] = dofs, dofs += s.body_dofs(k);
    std::vector<double> block(static_cast<std::size_t>(dofs) * dofs, 0.0);
    for (int k : members[g]) {
      const int n = s.body_dofs(k);
      const std::span<const double> mk = s.mass_block(k);
      for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c) block[static_cast<std::size_t>(local_[k] + r) * dofs + local_[k] + c] = mk[r * n + c];
      for (int i = 0; i < n; ++i) dof_map_.push_back(s.body_offset(k) + i);
    }
    reduced_.add_merged_body(dofs, block);
    cluster_of_group[g] = basis_.cluster_of[members[g].front()];
    if (cluster_of_group[g] >= 0) cluster_body_.push_back(static_cast<int>(g));  // clusters ordered as groups
  }

  std::vector<char> drop(s.constraints(), 0);
  for (int c : found_.constraints) drop[c] = 1;
  for (int c = 0; c < s.constraints(); ++c) {
    if (drop[c]) continue;
    // Lines 6–8: x = n_c − Σ_k (e_kᵀM⁻¹n_c) e_k on each end's group, then x / ‖x‖_{M⁻¹} (add_constraint scales).
    int ends[2] = {group_of[s.end_a(c)], s.end_b(c) >= 0 ? group_of[s.end_b(c)] : -1};
    if (ends[1] == ends[0]) ends[1] = -1;  // both bodies in one cluster: a single end
    std::vector<double> x[2];
    std::vector<Coupling> found_couplings;
    double metric = 0.0;
    for (int e = 0; e < 2; ++e) {
      const int g = ends[e];
      if (g < 0) continue;
      x[e].assign(reduced_.body_dofs(g), 0.0);
      for (int end = 0; end < 2; ++end) {
        const int body = end == 0 ? s.end_a(c) : s.end_b(c);
        if (body < 0 || group_of[body] != g) continue;
        const std::span<const double> n = s.gradient_block(c, end);
        for (std::size_t i = 0; i < n.size(); ++i) x[e][local_[body] + i] += n[i];
      }
      const int cl = cluster_of_group[g];
      if (cl >= 0) {
        const LinealityCluster& cluster = basis_.clusters[cl];
        for (int k = 0; k < cluster.rank; ++k) {
          const double* w = cluster.impulses.data() + static_cast<std::size_t>(k) * cluster.dofs;
          const double* ek = cluster.basis.data() + static_cast<std::size_t>(k) * cluster.dofs;
          double beta = 0.0;
          for (int i = 0; i < cluster.dofs; ++i) beta += w[i] * x[e][i];
          for (int i = 0; i < cluster.dofs; ++i) x[e][i] -= beta * ek[i];
          found_couplings.push_back({0, cl, k, beta});
        }
      }
      metric += inverse_metric(s, members[g], x[e]);
    }
    if (!(std::sqrt(std::max(metric, 0.0)) > span_tolerance)) {
      drop[c] = 1;
      continue;
    }
    const int reduced_c = ends[1] >= 0 ? reduced_.add_constraint(ends[0], x[0], ends[1], x[1])
                                       : reduced_.add_constraint(ends[0], x[0]);
    for (Coupling& k : found_couplings) k.constraint = reduced_c, couplings_.push_back(k);
    original_of_.push_back(c);
    restricted_norm_.push_back(std::sqrt(reduced_.raw_metric(reduced_c)));
  }
  for (int c = 0; c < s.constraints(); ++c) {
    if (drop[c]) removed_.push_back(c);
  }
  reduced_.finish();
}

double AntiLocking::project(std::span<const double> v, std::vector<double>& reduced) const {
  if (identity()) {
    reduced.assign(v.begin(), v.end());
    return 0.0;
  }
  reduced.resize(dof_map_.size());
  for (std::size_t i = 0; i < dof_map_.size(); ++i) reduced[i] = v[dof_map_[i]];
  double removed = 0.0;
  for (const LinealityCluster& cl : basis_.clusters) {
    // A cluster's degrees of freedom are consecutive in the reduced layout, in the basis' local order.
    double* r = reduced.data() + reduced_.body_offset(cluster_body_[&cl - basis_.clusters.data()]);
    for (int k = 0; k < cl.rank; ++k) {  // modified Gram–Schmidt: P(v) = v − Σ_k (e_kᵀv) M⁻¹e_k
      const double* e = cl.basis.data() + static_cast<std::size_t>(k) * cl.dofs;
      const double* w = cl.impulses.data() + static_cast<std::size_t>(k) * cl.dofs;
      double beta = 0.0;
      for (int i = 0; i < cl.dofs; ++i) beta += e[i] * r[i];
      for (int i = 0; i < cl.dofs; ++i) r[i] -= beta * w[i];
      removed += 0.5 * beta * beta;
    }
  }
  return removed;
}

void AntiLocking::restore(std::span<const double> reduced, std::vector<double>& v) const {
  if (identity()) {
    v.assign(reduced.begin(), reduced.end());
    return;
  }
  v.resize(original_->dofs());
  for (std::size_t i = 0; i < dof_map_.size(); ++i) v[dof_map_[i]] = reduced[i];
}

std::vector<double> AntiLocking::original_impulses(std::span<const double> v0,
                                                   std::span<const double> reduced_impulses) const {
  if (identity()) return {reduced_impulses.begin(), reduced_impulses.end()};
  std::vector<double> lambda(original_->constraints(), 0.0);
  // The change lies in M⁻¹ span(N_off-I) + M⁻¹ span(E): coefficients c of E collect the projection (−Eᵀv0) and
  // the part each restricted impulse took off its constraint (−λ_i e_kᵀM⁻¹n_i).
  std::vector<std::vector<double>> coef(basis_.clusters.size());
  for (std::size_t q = 0; q < basis_.clusters.size(); ++q) {
    const LinealityCluster& cl = basis_.clusters[q];
    coef[q].assign(cl.rank, 0.0);
    for (int k = 0; k < cl.rank; ++k) {
      const double* e = cl.basis.data() + static_cast<std::size_t>(k) * cl.dofs;
      double beta = 0.0;
      for (int body : cl.bodies) {
        for (int i = 0; i < original_->body_dofs(body); ++i) beta += e[local_[body] + i] * v0[original_->body_offset(body) + i];
      }
      coef[q][k] = -beta;
    }
  }
  for (std::size_t c = 0; c < original_of_.size(); ++c) {
    lambda[original_of_[c]] = reduced_impulses[c] / restricted_norm_[c];
  }
  for (const Coupling& k : couplings_) {
    coef[k.cluster][k.k] -= reduced_impulses[k.constraint] / restricted_norm_[k.constraint] * k.value;
  }
  // E c = N_I B c; then add t λ* (N_I λ* = 0, λ* ≥ 1 on I) with the smallest t ≥ 0 that makes it non-negative.
  for (std::size_t q = 0; q < basis_.clusters.size(); ++q) {
    const LinealityCluster& cl = basis_.clusters[q];
    std::vector<double> on_i(cl.constraints.size(), 0.0);
    double shift = 0.0;
    for (std::size_t j = 0; j < cl.constraints.size(); ++j) {
      for (int k = 0; k < cl.rank; ++k) on_i[j] += cl.coefficients[j * cl.rank + k] * coef[q][k];
      shift = std::max(shift, -on_i[j] / cl.combination[j]);
    }
    for (std::size_t j = 0; j < cl.constraints.size(); ++j) {
      lambda[cl.constraints[j]] = std::max(0.0, on_i[j] + shift * cl.combination[j]);
    }
  }
  return lambda;
}

Resolution resolve_anti_locked(const ImpactSystem& system, std::vector<double>& v, const ImpactOperator& resolve,
                               const LinealityOptions& options, AntiLockingReport* report,
                               const ApproximateLinealityOptions* approximate) {
  ApproximateLinealityReport approximation;
  ImplicitEqualities found = approximate
                                 ? find_approximate_implicit_equalities(system, *approximate, options, &approximation)
                                 : find_implicit_equalities(system, options);
  if (report) {
    *report = AntiLockingReport{};
    report->implicit = found.constraints;
    report->approximate = approximation.approximate;
    report->solved_lp = found.solved_lp;
    report->delta = approximation.delta;
    report->delta_lower = approximation.delta_lower;
  }
  if (found.constraints.empty()) return resolve(system, v);  // Theorem T10: exactly Algorithm A
  const AntiLocking lock(system, std::move(found));
  const std::vector<double> v0 = v;
  std::vector<double> reduced;
  const double removed = lock.project(v0, reduced);
  Resolution r = resolve(lock.system(), reduced);
  lock.restore(reduced, v);
  r.impulses = lock.original_impulses(v0, r.impulses);
  r.norm_before = std::sqrt(system.energy_norm_squared(v0.data()));
  r.norm_after = std::sqrt(system.energy_norm_squared(v.data()));
  if (report) {
    report->dimension = lock.dimension();
    report->energy_removed = removed;
  }
  return r;
}

}  // namespace percussion::impact
