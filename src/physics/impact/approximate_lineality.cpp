// Approximate implicit equalities: δ ≤ eps after the exact projection (notes 003 Alg. I).
#include "percussion/physics/impact/approximate_lineality.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "percussion/physics/impact/anti_locking.hpp"

namespace percussion::impact {

namespace {

// min_c n_cᵀw / ‖w‖_M over the reduced system for the projected certificate: δ of the reduced cone is at least
// this (minimax duality). 0 when the certificate says nothing.
double certified_lower_bound(const AntiLocking& lock, const std::vector<double>& certificate) {
  if (certificate.empty()) return 0.0;
  std::vector<double> w;
  lock.project(certificate, w);
  const ImpactSystem& s = lock.system();
  const double norm = std::sqrt(s.energy_norm_squared(w.data()));
  if (!(norm > 0.0)) return 0.0;
  double lowest = std::numeric_limits<double>::infinity();
  for (int c = 0; c < s.constraints(); ++c) lowest = std::min(lowest, s.slope(c, w.data()));
  return std::max(0.0, lowest / norm);
}

}  // namespace

ImplicitEqualities find_approximate_implicit_equalities(const ImpactSystem& system,
                                                        const ApproximateLinealityOptions& options,
                                                        const LinealityOptions& lineality,
                                                        ApproximateLinealityReport* report) {
  ImplicitEqualities found = find_implicit_equalities(system, lineality);
  ApproximateLinealityReport local;
  ApproximateLinealityReport& r = report ? *report : local;
  r = ApproximateLinealityReport{};
  r.exact = found.constraints;
  for (;;) {
    const AntiLocking lock(system, found);
    const ImpactSystem& reduced = lock.system();
    if (reduced.constraints() == 0) {
      r.delta = r.delta_lower = std::numeric_limits<double>::infinity();
      break;
    }
    r.delta_lower = certified_lower_bound(lock, found.certificate);
    r.delta = std::numeric_limits<double>::infinity();
    if (r.delta_lower > options.eps) break;
    const LinealityDistance d = lineality_distance(reduced, options.distance);
    ++r.rounds;
    r.delta = d.delta;
    r.delta_lower = d.lower_bound;
    if (!(d.delta <= options.eps)) break;
    // The support of δ's minimiser, less the constraints whose weight is below sqrt(eps) of the largest: those only
    // correct the small residual (e.g. a projectile touching a nearly jammed plug takes a weight of the order of
    // the tilt) and are not jammed themselves. Kept only if the trimmed combination is still nearly zero.
    const double largest = *std::max_element(d.weights.begin(), d.weights.end());
    std::vector<int> support;
    for (double floor : {std::sqrt(options.eps) * largest, 0.0}) {
      support.clear();
      std::vector<double> w(reduced.dofs(), 0.0);
      double sum = 0.0;
      for (int c = 0; c < reduced.constraints(); ++c) {
        if (!(d.weights[c] > floor)) continue;
        support.push_back(c);
        reduced.apply(c, d.weights[c], w.data());
        sum += d.weights[c];
      }
      if (std::sqrt(reduced.energy_norm_squared(w.data())) <= options.eps * sum) break;
    }
    for (int c : support) {
      const int original = lock.original_constraint()[c];
      found.constraints.push_back(original);
      found.combination[original] = d.weights[c] / largest;
      r.approximate.push_back(original);
    }
    std::sort(found.constraints.begin(), found.constraints.end());
    std::sort(r.approximate.begin(), r.approximate.end());
    found.certificate.clear();  // it certified the previous cone only
  }
  return found;
}

}  // namespace percussion::impact
