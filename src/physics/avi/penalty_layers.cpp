// Nested discrete penalty layers: energies, forces, time steps.
#include "percussion/physics/avi/penalty_layers.hpp"

#include <cmath>

namespace percussion::avi {

double PenaltyLayers::energy(std::int64_t l, double d) const {
  const double g = d - reach(l);
  if (g >= 0) return 0.0;
  const double ld = static_cast<double>(l);
  return ld * ld * ld * stiffness * g * g;
}

double PenaltyLayers::derivative(std::int64_t l, double d) const {
  const double g = d - reach(l);
  if (g >= 0) return 0.0;
  const double ld = static_cast<double>(l);
  return 2.0 * ld * ld * ld * stiffness * g;
}

std::int64_t PenaltyLayers::deepest_active(double d) const {
  if (!(d < reach(1))) return 0;
  auto l = static_cast<std::int64_t>(std::floor(2.0 * eta / d));
  // The quotient rounds: settle l on the exact test of reach().
  while (l > 1 && !active(l, d)) --l;
  while (active(l + 1, d)) ++l;
  return l;
}

double PenaltyLayers::barrier_energy(double d) const {
  const std::int64_t n = deepest_active(d);
  if (n == 0) return 0.0;
  if (n <= 64) {
    double sum = 0;
    for (std::int64_t l = 1; l <= n; ++l) sum += energy(l, d);
    return sum;
  }
  // Σ l³k(d − 2η/l)² = k (d² Σl³ − 4ηd Σl² + 4η² Σl): the three sums are of one size, so little cancels.
  const double m = static_cast<double>(n);
  const double s1 = m * (m + 1) / 2, s2 = m * (m + 1) * (2 * m + 1) / 6, s3 = s1 * s1;
  return stiffness * (d * d * s3 - 4 * eta * d * s2 + 4 * eta * eta * s1);
}

double PenaltyLayers::step(std::int64_t l, double mu, double courant) const {
  const double ld = static_cast<double>(l);
  return courant * std::sqrt(mu / (2.0 * ld * ld * ld * stiffness));
}

double PenaltyLayers::deepest_layer_estimate(double mu, double v) const {
  return v / eta * std::sqrt(3.0 * mu / (2.0 * stiffness));
}

}  // namespace percussion::avi
