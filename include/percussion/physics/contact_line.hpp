#pragma once
// The incremental potential along a Newton direction with its contacts taken exactly: a penalty ½k·min(0, g)² on a
// gap that is linear in the positions (a pair along its predicted normal, a sphere on a plane) is piecewise
// quadratic in the step length α, while the rest of Φ (inertia, bonds) is close to the Newton model's quadratic.
// The minimiser of that line model is the line search's first trial step (implicit.line_search_contacts): where a
// full step runs into a contact the model did not hold, it goes to where that contact stops the step, a little into
// it, so that the next Newton model holds it; halving from 1 stops short of it, at a power of two.
#include <algorithm>
#include <span>

namespace percussion::physics {

// A contact's gap at α = 0 and its rate of change along the direction, g(α) = gap + α rate.
struct LineContact {
  double gap, rate;
};

// The minimiser on (0, 1] of φ(α) = α s + ½ α² c + Σ ½ k min(0, gap + α rate)², where s and c are the model's slope
// and curvature along the direction without the contacts: `slope` and `curvature` are the whole model's (dᵀHd, which
// CG from a zero guess gives as −slope), and the contacts touching at α = 0 are taken out of them. `contacts` holds
// every contact touching somewhere on [0, 1] (this rank's share); sum(v, n) adds n values over the ranks in place.
// Returns 1 when φ still falls at α = 1 or the rest of the model is not convex; collective through sum.
template <class Sum>
double contact_line_minimiser(double slope, double curvature, std::span<const LineContact> contacts, double k,
                              Sum&& sum) {
  double touching[2] = {0, 0};  // the slope and curvature of the contacts touching at α = 0
  for (const LineContact& c : contacts)
    if (c.gap < 0) {
      touching[0] += k * c.gap * c.rate;
      touching[1] += k * c.rate * c.rate;
    }
  sum(touching, 2);
  const double s = slope - touching[0], curve = curvature - touching[1];
  if (!(curve > 0)) return 1.0;
  auto derivative = [&](double alpha) {  // φ′(α), non-decreasing
    double contact = 0;
    for (const LineContact& c : contacts) contact += k * std::min(0.0, c.gap + alpha * c.rate) * c.rate;
    sum(&contact, 1);
    return s + alpha * curve + contact;
  };
  if (!(derivative(1.0) > 0)) return 1.0;
  // φ′(0) = slope < 0 < φ′(1): bisection, to 2⁻³⁰ of the full step (every rank takes the same decisions).
  double low = 0, high = 1;
  for (int i = 0; i < 30; ++i) {
    const double mid = 0.5 * (low + high);
    (derivative(mid) < 0 ? low : high) = mid;
  }
  return high;
}

}  // namespace percussion::physics
