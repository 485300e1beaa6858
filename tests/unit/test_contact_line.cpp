// The line search's contact model (physics/contact_line.hpp): its minimiser against a brute-force scan of the
// same piecewise-quadratic function, and the cases where it keeps the full step.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "percussion/physics/contact_line.hpp"

namespace test_contact_line {

using percussion::physics::contact_line_minimiser;
using percussion::physics::LineContact;

namespace {

constexpr double kK = 2.0e3;

void one_rank(double*, int) {}

// φ(α) of the model whose whole slope and curvature along the direction are `slope` and `curvature`.
double phi(double alpha, double slope, double curvature, const std::vector<LineContact>& contacts) {
  double s = slope, c = curvature, value = 0;
  for (const LineContact& t : contacts) {
    if (t.gap < 0) {
      s -= kK * t.gap * t.rate;
      c -= kK * t.rate * t.rate;
    }
    const double g = std::min(0.0, t.gap + alpha * t.rate);
    value += 0.5 * kK * g * g;
  }
  return value + alpha * s + 0.5 * alpha * alpha * c;
}

double scan_minimiser(double slope, double curvature, const std::vector<LineContact>& contacts) {
  double best = 0, best_phi = phi(0, slope, curvature, contacts);
  constexpr int kSamples = 200000;
  for (int i = 1; i <= kSamples; ++i) {
    const double alpha = static_cast<double>(i) / kSamples;
    const double value = phi(alpha, slope, curvature, contacts);
    if (value < best_phi) {
      best_phi = value;
      best = alpha;
    }
  }
  return best;
}

}  // namespace

// Random lines with contacts that touch at α = 0 and open, touch and close further, or close within the step: the
// model's minimiser is the scan's, and it lowers φ at least as much.
TEST(ContactLine, MinimiserIsTheScansOnRandomLines) {
  std::mt19937_64 gen(7);
  auto uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(gen); };
  int shortened = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<LineContact> contacts;
    const int count = 1 + static_cast<int>(uniform(0, 6));
    for (int j = 0; j < count; ++j) contacts.push_back({uniform(-1e-3, 1e-3), uniform(-5e-3, 5e-3)});
    // The rest of the model: slope s < 0 and curvature c > 0, with the touching contacts' terms added to make the
    // whole model's (as CG's direction gives them).
    double slope = -uniform(1e-4, 1e-2), curvature = uniform(1e-4, 2e-2);
    for (const LineContact& t : contacts)
      if (t.gap < 0) {
        slope += kK * t.gap * t.rate;
        curvature += kK * t.rate * t.rate;
      }
    if (!(slope < 0)) continue;  // not a descent direction: the line search never sees it
    const double alpha = contact_line_minimiser(slope, curvature, contacts, kK, one_rank);
    const double expected = std::min(1.0, scan_minimiser(slope, curvature, contacts));
    ASSERT_GT(alpha, 0.0);
    ASSERT_LE(alpha, 1.0);
    EXPECT_NEAR(alpha, expected, 2e-5) << "trial " << trial;
    EXPECT_LE(phi(alpha, slope, curvature, contacts), phi(expected, slope, curvature, contacts) + 1e-15);
    shortened += alpha < 1.0;
  }
  EXPECT_GT(shortened, 50);  // the lines are not all full steps
}

// The Newton direction (whole-model curvature −slope, as CG from a zero guess gives it) with no contact on the line,
// or with every touching contact staying shut: the line model is the Newton model, whose minimiser is the full step.
TEST(ContactLine, FullStepWhereNoContactSwitches) {
  EXPECT_EQ(contact_line_minimiser(-2e-3, 2e-3, std::vector<LineContact>{}, kK, one_rank), 1.0);
  const std::vector<LineContact> shut = {{-2e-4, 1e-4}, {-1e-4, -3e-4}};
  EXPECT_EQ(contact_line_minimiser(-2e-3, 2e-3, shut, kK, one_rank), 1.0);
  // One of them opening within the step lowers φ further along: still the full step (extrapolation is not its job).
  const std::vector<LineContact> opening = {{-2e-4, 4e-4}};
  EXPECT_EQ(contact_line_minimiser(-2e-3, 2e-3, opening, kK, one_rank), 1.0);
}

// A sphere falling onto a floor it touches halfway along the step: the model stops it where the floor's penalty
// balances the rest of the model, past the first touch.
TEST(ContactLine, StopsAPairThatClosesWithinTheStep) {
  const double slope = -1e-3, curvature = 1e-3;  // alone, the full step
  const std::vector<LineContact> floor = {{1e-3, -2e-3}};  // touches at α = 0.5
  const double alpha = contact_line_minimiser(slope, curvature, floor, kK, one_rank);
  // φ′(α) = −1e-3 + 1e-3 α + k (1e-3 − 2e-3 α)(−2e-3) = 0 past α = 0.5.
  const double exact = (1e-3 + 2e-3 * kK * 1e-3) / (1e-3 + kK * 4e-6);
  EXPECT_GT(alpha, 0.5);
  EXPECT_NEAR(alpha, exact, 1e-8);
}

}  // namespace test_contact_line
