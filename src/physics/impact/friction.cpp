// The one-way friction post-pass: tangent generators as a second ImpactSystem, one bounded QP (notes 003 Alg. J3).
#include "percussion/physics/impact/friction.hpp"

#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace percussion::impact {

namespace {

// tᵀv for a raw covector with blocks on bodies a and b (b < 0: none): the relative tangential velocity.
double raw_slope(const ImpactSystem& s, int a, std::span<const double> ta, int b, std::span<const double> tb,
                 const std::vector<double>& v) {
  double sum = 0.0;
  for (std::size_t i = 0; i < ta.size(); ++i) sum += ta[i] * v[s.body_offset(a) + i];
  if (b >= 0) {
    for (std::size_t i = 0; i < tb.size(); ++i) sum += tb[i] * v[s.body_offset(b) + i];
  }
  return sum;
}

void check_contact(const ImpactSystem& s, const FrictionContact& f, int k) {
  const auto fail = [&](const std::string& what) {
    throw std::invalid_argument("impact: friction contact " + std::to_string(k) + ": " + what);
  };
  if (f.constraint < 0 || f.constraint >= s.constraints()) fail("no such constraint");
  if (!(f.mu >= 0.0) || !std::isfinite(f.mu)) fail("mu must be finite and >= 0");
  const int a = s.end_a(f.constraint), b = s.end_b(f.constraint);
  const auto size = [&](int body) { return body < 0 ? 0U : static_cast<std::size_t>(s.body_dofs(body)); };
  if (f.t1_a.size() != size(a) || f.t1_b.size() != size(b)) fail("t1 blocks do not match the constraint's ends");
  if (!f.t2_a.empty() && (f.t2_a.size() != size(a) || f.t2_b.size() != size(b))) {
    fail("t2 blocks do not match the constraint's ends");
  }
}

}  // namespace

FrictionResult friction_post_pass(const ImpactSystem& system, std::span<const FrictionContact> contacts,
                                  std::span<const double> normal_impulses, std::vector<double>& v,
                                  const FrictionOptions& options) {
  if (options.generators < 1) throw std::invalid_argument("impact: friction needs at least one generator");
  if (normal_impulses.size() != static_cast<std::size_t>(system.constraints())) {
    throw std::invalid_argument("impact: friction needs one normal impulse per constraint");
  }
  FrictionResult result;
  result.tangential.assign(2 * contacts.size(), 0.0);
  result.norm_before = result.norm_after = std::sqrt(system.energy_norm_squared(v.data()));

  // The generators as constraints of a system on the same bodies: it normalises them and couples those that
  // share a body, exactly as the contact QP needs.
  ImpactSystem tangents;
  for (int k = 0; k < system.bodies(); ++k) tangents.add_body(system.body_dofs(k), system.mass_block(k));
  struct Generator {
    int contact;
    double c1, c2;  // direction cos, sin in the (t1, t2) basis
    double bound;   // on the normalised multiplier
  };
  std::vector<Generator> generators;
  std::vector<double> ga, gb;
  const double pi = std::acos(-1.0);
  for (std::size_t k = 0; k < contacts.size(); ++k) {
    const FrictionContact& f = contacts[k];
    check_contact(system, f, static_cast<int>(k));
    const int c = f.constraint, a = system.end_a(c), b = system.end_b(c);
    const double alpha = normal_impulses[c] / std::sqrt(system.raw_metric(c));  // physical normal impulse
    if (!(f.mu > 0.0) || !(alpha > 0.0)) continue;
    const bool planar = f.t2_a.empty();
    const int count = planar ? 1 : options.generators;
    // Vertices along the slip: offsets π(j + ½)/K for even K, πj/K for odd K are symmetric about it.
    const double phi = planar ? 0.0
                              : std::atan2(raw_slope(system, a, f.t2_a, b, f.t2_b, v),
                                           raw_slope(system, a, f.t1_a, b, f.t1_b, v));
    const double shift = count % 2 == 0 ? 0.5 : 0.0;
    const double half = f.mu * alpha * (planar ? 1.0 : std::sin(pi / (2.0 * count)));
    for (int j = 0; j < count; ++j) {
      const double theta = phi + pi * (j + shift) / count;
      const double c1 = planar ? 1.0 : std::cos(theta), c2 = planar ? 0.0 : std::sin(theta);
      ga.assign(f.t1_a.size(), 0.0);
      gb.assign(f.t1_b.size(), 0.0);
      for (std::size_t i = 0; i < ga.size(); ++i) ga[i] = c1 * f.t1_a[i] + (planar ? 0.0 : c2 * f.t2_a[i]);
      for (std::size_t i = 0; i < gb.size(); ++i) gb[i] = c1 * f.t1_b[i] + (planar ? 0.0 : c2 * f.t2_b[i]);
      const int g = tangents.add_constraint(a, ga, b, gb);
      generators.push_back({static_cast<int>(k), c1, c2, half * std::sqrt(tangents.raw_metric(g))});
    }
  }
  tangents.finish();
  if (generators.empty()) {
    result.converged = true;
    result.reason = "no friction";
    return result;
  }

  std::vector<int> all(generators.size());
  std::iota(all.begin(), all.end(), 0);
  const ImpactQp problem(tangents, all, v.data());
  std::vector<double> lower(generators.size()), upper(generators.size());
  for (std::size_t j = 0; j < generators.size(); ++j) lower[j] = -generators[j].bound, upper[j] = generators[j].bound;
  const QpResult beta = problem.solve(lower, upper, options.qp);
  result.iterations = beta.iterations;
  result.converged = beta.converged;
  result.reason = beta.reason;
  if (!beta.converged) return result;
  for (std::size_t j = 0; j < generators.size(); ++j) {
    if (beta.x[j] == 0.0) continue;
    tangents.apply(static_cast<int>(j), beta.x[j], v.data());
    const double physical = beta.x[j] / std::sqrt(tangents.raw_metric(static_cast<int>(j)));
    result.tangential[2 * generators[j].contact] += physical * generators[j].c1;
    result.tangential[2 * generators[j].contact + 1] += physical * generators[j].c2;
  }
  result.norm_after = std::sqrt(system.energy_norm_squared(v.data()));
  return result;
}

}  // namespace percussion::impact
