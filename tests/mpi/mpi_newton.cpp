// The generic Newton minimiser (solvers/newton.hpp) on analytic problems distributed over the ranks: a separable
// sum of one-dimensional terms, each rank holding a slice of the global components. Its decisions (convergence,
// the step bound, the line search's trials) are taken on reduced values, so every rank reports the same result,
// and the same as one rank holding every component.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "percussion/solvers/newton.hpp"
#include "../support/mpi_world.hpp"

namespace mpi_newton {

using namespace percussion;
using percussion::test::world_rank;
using percussion::test::world_size;

namespace {

// Φ(x) = Σ_i f(x_i, i) over n global components, this rank holding the slice [begin, end). Newton's direction solves
// the diagonal system f''(x_i) d_i = −f'(x_i) exactly (`curvature` may misstate f'' to test the step control);
// the residual is max_i |f'(x_i)|. `bound`, if set, gives component i's largest step fraction along d_i.
struct Separable final : solvers::NewtonProblem {
  std::function<double(double, int)> f, df, curvature;
  std::function<double(double, double, int)> bound;  // (x_i, d_i, i)
  MPI_Comm comm;
  int begin = 0;
  std::vector<double> x, base, d;
  // What the loop asked: the first trial of each iteration, and the largest x_i any trial reached.
  std::vector<double> first_trials, largest_x;

  Separable(MPI_Comm c, int n, const std::function<double(int)>& start) : comm(c) {
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    begin = n * rank / size;
    const int end = n * (rank + 1) / size;
    for (int i = begin; i < end; ++i) x.push_back(start(i));
    d.assign(x.size(), 0.0);
    largest_x = x;
  }
  int global(std::size_t k) const { return begin + static_cast<int>(k); }
  using Term = std::function<double(double, int)>;
  void terms(Term energy, Term derivative, Term second) {
    f = std::move(energy);
    df = std::move(derivative);
    curvature = std::move(second);
  }

  Evaluation evaluate(int) override {
    double local = 0, res = 0;
    for (std::size_t k = 0; k < x.size(); ++k) local = std::max(local, std::abs(df(x[k], global(k))));
    MPI_Allreduce(&local, &res, 1, MPI_DOUBLE, MPI_MAX, comm);
    return {res, ""};
  }
  bool search_direction(int, double) override {
    for (std::size_t k = 0; k < x.size(); ++k) d[k] = -df(x[k], global(k)) / curvature(x[k], global(k));
    return true;
  }
  SlopeTerms slope_terms() const override {
    SlopeTerms t;
    for (std::size_t k = 0; k < x.size(); ++k) {
      const double g = df(x[k], global(k));
      t.slope += g * d[k];
      t.roundoff += std::abs(f(x[k], global(k))) + std::abs(x[k] * g);  // the terms' size: their round-off
    }
    return t;
  }
  void descent() override {
    for (std::size_t k = 0; k < x.size(); ++k) d[k] = -df(x[k], global(k));
  }
  double step_bound() const override {
    double b = std::numeric_limits<double>::infinity();
    if (bound)
      for (std::size_t k = 0; k < x.size(); ++k) b = std::min(b, bound(x[k], d[k], global(k)));
    return b;
  }
  void begin_line_search(double alpha) override {
    base = x;
    first_trials.push_back(alpha);
  }
  double trial(double alpha, int) override {
    double local = 0, change = 0;
    for (std::size_t k = 0; k < x.size(); ++k) {
      x[k] = base[k] + alpha * d[k];
      largest_x[k] = std::max(largest_x[k], x[k]);
      local += f(x[k], global(k)) - f(base[k], global(k));
    }
    MPI_Allreduce(&local, &change, 1, MPI_DOUBLE, MPI_SUM, comm);
    return change;
  }
  void end_iteration(bool accepted, double) override {
    if (!accepted) x = base;
  }
};

// Every rank holds the same result.
void expect_same_on_all_ranks(const solvers::NewtonResult& r) {
  double mine[3] = {static_cast<double>(r.reason), static_cast<double>(r.iterations), r.residual}, low[3], high[3];
  MPI_Allreduce(mine, low, 3, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(mine, high, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(low[k], high[k]) << "entry " << k << " differs between ranks";
}

// Strictly convex and separable: Φ = Σ w_i (cosh(x_i − c_i) − 1), minimiser c_i, started 3 away.
constexpr int kComponents = 12;
double centre(int i) { return 0.25 * i - 1.0; }
double weight(int i) { return 1.0 + 0.5 * (i % 3); }
Separable cosh_problem(MPI_Comm comm) {
  Separable p(comm, kComponents, [](int i) { return centre(i) + (i % 2 ? 3.0 : -2.5); });
  p.f = [](double x, int i) {  // cosh e − 1 as 2 sinh²(e/2): no cancellation near the minimiser
    const double s = std::sinh(0.5 * (x - centre(i)));
    return weight(i) * 2 * s * s;
  };
  p.df = [](double x, int i) { return weight(i) * std::sinh(x - centre(i)); };
  p.curvature = [](double x, int i) { return weight(i) * std::cosh(x - centre(i)); };
  return p;
}

}  // namespace

TEST(Newton, ConvexSeparableReachesItsMinimiserAlikeOnEveryRankCount) {
  solvers::NewtonSettings settings;
  settings.tolerance = 1e-12;
  Separable p = cosh_problem(MPI_COMM_WORLD);
  solvers::NewtonMinimiser newton(MPI_COMM_WORLD, "test_");
  const solvers::NewtonResult r = newton.minimise(p, settings);
  EXPECT_EQ(r.reason, solvers::NewtonReason::Converged);
  EXPECT_LT(r.residual, 1e-12);
  for (std::size_t k = 0; k < p.x.size(); ++k) EXPECT_NEAR(p.x[k], centre(p.global(k)), 1e-12);
  expect_same_on_all_ranks(r);
  // The same iterations as one rank holding all components: the decisions did not depend on the split.
  Separable serial = cosh_problem(MPI_COMM_SELF);
  solvers::NewtonMinimiser alone(MPI_COMM_SELF, "test_");
  const solvers::NewtonResult s = alone.minimise(serial, settings);
  EXPECT_EQ(r.iterations, s.iterations);
  // Newton from 3 away in cosh: full steps, and quadratic convergence once within ~1.
  EXPECT_EQ(r.iterations, 6);
  EXPECT_EQ(newton.counters().line_search_trials, r.iterations);  // every full step accepted
  EXPECT_EQ(newton.counters().iterations, r.iterations);
  EXPECT_EQ(newton.counters().minimisations, 1);
}

TEST(Newton, StopsOnTheDecrementOrTheIterationCap) {
  solvers::NewtonMinimiser newton(MPI_COMM_WORLD, "test_");
  solvers::NewtonSettings settings;
  settings.tolerance = 0;  // only the decrement can stop it
  settings.decrement_tolerance = 1e-20;
  Separable p = cosh_problem(MPI_COMM_WORLD);
  const solvers::NewtonResult r = newton.minimise(p, settings);
  EXPECT_EQ(r.reason, solvers::NewtonReason::ConvergedDecrement);
  EXPECT_TRUE(r.converged());
  for (std::size_t k = 0; k < p.x.size(); ++k) EXPECT_NEAR(p.x[k], centre(p.global(k)), 1e-9);
  expect_same_on_all_ranks(r);

  settings.decrement_tolerance = 0;
  settings.max_iterations = 2;
  Separable q = cosh_problem(MPI_COMM_WORLD);
  const solvers::NewtonResult c = newton.minimise(q, settings);
  EXPECT_EQ(c.reason, solvers::NewtonReason::IterationCap);
  EXPECT_FALSE(c.converged());
  EXPECT_EQ(c.iterations, 2);
  EXPECT_EQ(newton.counters().iterations, r.iterations + 2);
  EXPECT_EQ(newton.counters().minimisations, 2);
}

// Φ = Σ √(1 + x_i²): the Newton step −x(1 + x²) overshoots far from 0, and the line search halves it.
TEST(Newton, LineSearchBacktracksAnOvershootingNewtonStep) {
  Separable p(MPI_COMM_WORLD, 6, [](int i) { return 3.0 + 0.1 * i; });
  p.terms([](double x, int) { return std::sqrt(1 + x * x); }, [](double x, int) { return x / std::sqrt(1 + x * x); },
          [](double x, int) { return std::pow(1 + x * x, -1.5); });
  solvers::NewtonMinimiser newton(MPI_COMM_WORLD, "test_");
  const solvers::NewtonResult r = newton.minimise(p, {.tolerance = 1e-10});
  EXPECT_EQ(r.reason, solvers::NewtonReason::Converged);
  for (double x : p.x) EXPECT_NEAR(x, 0.0, 1e-10);
  // The first direction (|d| ≈ 30 to 34 from x ≈ 3) is cut to a few hundredths.
  EXPECT_GT(newton.counters().line_search_trials, r.iterations + 3);
  expect_same_on_all_ranks(r);
}

// Φ = Σ (x_i⁴/4 − x_i²/2), a double well: at |x| < 1/√3 the Hessian is negative and the Newton direction climbs;
// the loop takes descent instead and reaches the well at ±1.
TEST(Newton, NonconvexFallsBackToDescent) {
  Separable p(MPI_COMM_WORLD, 4, [](int i) { return 0.3 + 0.05 * i; });
  p.terms([](double x, int) { return 0.25 * x * x * x * x - 0.5 * x * x; }, [](double x, int) { return x * x * x - x; },
          [](double x, int) { return 3 * x * x - 1; });
  solvers::NewtonMinimiser newton(MPI_COMM_WORLD, "test_");
  const solvers::NewtonResult r = newton.minimise(p, {.tolerance = 1e-10});
  EXPECT_EQ(r.reason, solvers::NewtonReason::Converged);
  for (double x : p.x) EXPECT_NEAR(x, 1.0, 1e-10);
  EXPECT_GE(newton.counters().descent_fallbacks, 1);
  expect_same_on_all_ranks(r);
}

// A barrier: Φ = Σ ½(x_i − 2)² − κ log(w_i − x_i), defined left of a wall w_i. The step bound (as IPC's continuous
// collision detection gives it) admits 0.9 of the way to the nearest wall along d, on any rank: no trial crosses.
TEST(Newton, StepBoundKeepsEveryTrialBeforeTheWall) {
  constexpr double kappa = 1e-2;
  auto wall = [](int i) { return 1.0 + 0.1 * i; };
  Separable p(MPI_COMM_WORLD, 6, [](int) { return 0.0; });
  p.f = [&](double x, int i) {
    return x < wall(i) ? 0.5 * (x - 2) * (x - 2) - kappa * std::log(wall(i) - x)
                       : std::numeric_limits<double>::infinity();
  };
  p.df = [&](double x, int i) { return (x - 2) + kappa / (wall(i) - x); };
  p.curvature = [&](double x, int i) { return 1 + kappa / ((wall(i) - x) * (wall(i) - x)); };
  p.bound = [&](double x, double d, int i) {
    return d > 0 ? 0.9 * (wall(i) - x) / d : std::numeric_limits<double>::infinity();
  };
  solvers::NewtonMinimiser newton(MPI_COMM_WORLD, "test_");
  solvers::NewtonSettings settings;
  settings.tolerance = 1e-12;
  settings.extrapolate = true;  // its target is bounded too
  const solvers::NewtonResult r = newton.minimise(p, settings);
  EXPECT_EQ(r.reason, solvers::NewtonReason::Converged);
  for (std::size_t k = 0; k < p.x.size(); ++k) {
    const double w = wall(p.global(k)), c = 2 - w;  // the minimiser solves (x − 2)(w − x) + κ = 0
    EXPECT_NEAR(p.x[k], w - (std::sqrt(c * c + 4 * kappa) - c) / 2, 1e-12);
  }
  double largest_gap = -1;  // the largest x_i − w_i any trial reached, on any rank
  for (std::size_t k = 0; k < p.x.size(); ++k) largest_gap = std::max(largest_gap, p.largest_x[k] - wall(p.global(k)));
  MPI_Allreduce(MPI_IN_PLACE, &largest_gap, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_LT(largest_gap, 0.0);
  // The first step: from 0 the direction is d_i = (2 − κ/w_i)/(1 + κ/w_i²), the wall nearest in step fractions
  // is component 0's (w = 1), on rank 0 only; every rank's first trial is its bound.
  const double d0 = (2 - kappa) / (1 + kappa);
  ASSERT_FALSE(p.first_trials.empty());
  EXPECT_DOUBLE_EQ(p.first_trials[0], 0.9 / d0);
  EXPECT_GT(newton.counters().bounded_steps, 0);
  expect_same_on_all_ranks(r);
}

// The model's curvature 10× too high: the full Newton step goes a tenth of the way, and the extrapolation to the
// parabola's minimiser (capped at 8 steps) takes 8 of them.
TEST(Newton, ExtrapolatesAStepWhoseModelIsTooStiff) {
  auto make = [] {
    Separable p(MPI_COMM_WORLD, 5, [](int i) { return 1.0 + i; });
    p.f = [](double x, int) { return 0.5 * x * x; };
    p.df = [](double x, int) { return x; };
    p.curvature = [](double, int) { return 10.0; };
    return p;
  };
  solvers::NewtonSettings settings;
  settings.tolerance = 1e-8;
  settings.max_iterations = 300;
  Separable plain = make(), extrapolated = make();
  solvers::NewtonMinimiser a(MPI_COMM_WORLD, "test_"), b(MPI_COMM_WORLD, "test_");
  const solvers::NewtonResult ra = a.minimise(plain, settings);
  settings.extrapolate = true;
  const solvers::NewtonResult rb = b.minimise(extrapolated, settings);
  EXPECT_EQ(ra.reason, solvers::NewtonReason::Converged);
  EXPECT_EQ(rb.reason, solvers::NewtonReason::Converged);
  EXPECT_EQ(a.counters().extrapolations, 0);
  EXPECT_EQ(b.counters().extrapolations, rb.iterations);  // each step: x → x (1 − 0.8) = 0.2 x
  EXPECT_EQ(b.counters().extrapolations_tried, rb.iterations);
  // 0.9ⁿ · 5 < 1e-8 needs 191 plain steps, 0.2ⁿ · 5 < 1e-8 13.
  EXPECT_EQ(ra.iterations, 191);
  EXPECT_EQ(rb.iterations, 13);
  expect_same_on_all_ranks(rb);
}

// A wrong gradient (the direction climbs, and so does descent's): no trial decreases Φ; the loop reports the
// failure with the iterate back at its start.
TEST(Newton, ReportsAFailedLineSearchAndRestoresTheIterate) {
  Separable p(MPI_COMM_WORLD, 4, [](int i) { return 1.0 + i; });
  p.f = [](double x, int) { return 0.5 * x * x; };
  p.df = [](double x, int) { return -x; };  // the wrong sign
  p.curvature = [](double, int) { return -1.0; };
  const std::vector<double> start = p.x;
  solvers::NewtonMinimiser newton(MPI_COMM_WORLD, "test_");
  solvers::NewtonSettings settings;
  settings.line_search.max_backtracks = 5;
  const solvers::NewtonResult r = newton.minimise(p, settings);
  EXPECT_EQ(r.reason, solvers::NewtonReason::LineSearchFailed);
  EXPECT_EQ(r.iterations, 0);
  EXPECT_EQ(p.x, start);
  EXPECT_EQ(newton.counters().line_search_trials, 5);
  EXPECT_EQ(newton.counters().line_search_failures, 1);
  expect_same_on_all_ranks(r);
}

}  // namespace mpi_newton
