// Armijo backtracking (solvers/line_search.hpp) on one-dimensional energies with known minimisers: a full Newton
// step on a quadratic is taken at once, an overshooting one halved until it decreases enough, a bound below the full
// step is the first trial, round-off-sized changes near the minimiser are accepted, and an ascent is refused after
// the given number of trials.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "percussion/solvers/line_search.hpp"

namespace test_line_search {

using percussion::solvers::BacktrackingLineSearch;

namespace {

// Φ(x) along d from x0: the change Φ(x0 + αd) − Φ(x0), recording the steps tried.
struct Line {
  double (*phi)(double);
  double x0, d;
  std::vector<double> tried;
  double operator()(double alpha, int k) {
    EXPECT_EQ(k, static_cast<int>(tried.size()));
    tried.push_back(alpha);
    return phi(x0 + alpha * d) - phi(x0);
  }
};

double quadratic(double x) { return 2.0 * (x - 1.0) * (x - 1.0); }
double quartic(double x) { return x * x * x * x; }

}  // namespace

TEST(LineSearch, FullNewtonStepOnAQuadraticIsTakenAtOnce) {
  const BacktrackingLineSearch search;
  Line line{quadratic, 3.0, -2.0, {}};  // Newton's step from 3 reaches the minimiser 1
  const double slope = 4.0 * (3.0 - 1.0) * line.d;
  const auto r = search.search(1.0, slope, 0.0, line);
  EXPECT_TRUE(r.accepted);
  EXPECT_EQ(r.alpha, 1.0);
  EXPECT_EQ(r.trials, 1);
  EXPECT_DOUBLE_EQ(r.change, -8.0);
}

TEST(LineSearch, OvershootIsHalvedUntilItDecreasesEnough) {
  const BacktrackingLineSearch search{0.5, 40};  // a strict Armijo constant: half the predicted decrease
  Line line{quadratic, 3.0, -8.0, {}};           // four times Newton's step
  const double slope = 4.0 * 2.0 * line.d;       // −64
  const auto r = search.search(1.0, slope, 0.0, line);
  ASSERT_TRUE(r.accepted);
  // α = 1 and 0.5 fail (changes 64 and 0 against −32 and −16); α = 0.25 reaches the minimiser: −8 ≤ −8.
  EXPECT_EQ(line.tried, (std::vector<double>{1.0, 0.5, 0.25}));
  EXPECT_EQ(r.alpha, 0.25);
  EXPECT_DOUBLE_EQ(r.change, -8.0);
}

TEST(LineSearch, TheCallersBoundIsTheFirstTrial) {
  const BacktrackingLineSearch search;
  Line line{quadratic, 3.0, -2.0, {}};
  const auto r = search.search(0.3, 4.0 * 2.0 * line.d, 0.0, line);  // e.g. a collision-free step
  EXPECT_TRUE(r.accepted);
  EXPECT_EQ(line.tried, std::vector<double>{0.3});
  EXPECT_NEAR(r.change, quadratic(3.0 - 0.6) - quadratic(3.0), 1e-15);
}

TEST(LineSearch, RoundOffSizedChangesNearTheMinimiserAreTaken) {
  const BacktrackingLineSearch search;
  // A decrease of 1e-24 that the arithmetic shows is taken on the Armijo test alone; where it shows none (a flat
  // line, a predicted decrease of 1e-22), only a round-off scale above both lets the step be taken.
  Line line{quartic, 1e-6, -1e-6, {}};
  const double slope = 4e-18 * line.d;
  const auto strict = search.search(1.0, slope, 0.0, line);
  EXPECT_TRUE(strict.accepted);  // (an exact decrease: −1e-24 ≤ 1e-4·(−4e-24))
  Line flat{[](double) { return 1.0; }, 0.0, 1.0, {}};  // no change at all, a tiny predicted decrease
  EXPECT_FALSE(search.search(1.0, -1e-22, 0.0, flat).accepted);
  Line flat_again{[](double) { return 1.0; }, 0.0, 1.0, {}};
  const auto noisy = search.search(1.0, -1e-22, 1e-20, flat_again);
  EXPECT_TRUE(noisy.accepted);
  EXPECT_EQ(noisy.trials, 1);
}

TEST(LineSearch, AnAscentIsRefusedAfterTheGivenTrials) {
  const BacktrackingLineSearch search{1e-4, 5};
  Line line{quadratic, 3.0, 1.0, {}};  // uphill, though the caller claims a negative slope
  const auto r = search.search(1.0, -1.0, 0.0, line);
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.trials, 5);
  EXPECT_EQ(line.tried.back(), 1.0 / 16);
  EXPECT_EQ(r.alpha, 1.0 / 32);  // halved once more after the last trial, as the loop leaves it
}

}  // namespace test_line_search
