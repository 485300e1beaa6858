// The active-set finish of the impact QPs (qp_active_set.hpp) on small singular QPs with a known optimal value:
// exact KKT with complementarity, the optimum of a long projected-gradient run, lower and upper bounds.
#include <gtest/gtest.h>
#include <petscmat.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "percussion/physics/impact/qp_active_set.hpp"

namespace test_impact_qp_active_set {

using namespace percussion::impact;

namespace {

// A = CᵀC (rank r < n: singular, like the Delassus matrix of redundant contacts), b = Cᵀd (in A's range).
struct Qp {
  int n = 0;
  std::vector<double> A, b;
  Mat mat = nullptr;
  ~Qp() {
    if (mat) MatDestroy(&mat);
  }
  double f(const std::vector<double>& x) const {
    double v = 0.0;
    for (int i = 0; i < n; ++i) {
      double ax = 0.0;
      for (int j = 0; j < n; ++j) ax += A[i * n + j] * x[j];
      v += x[i] * (0.5 * ax + b[i]);
    }
    return v;
  }
  std::vector<double> g(const std::vector<double>& x) const {
    std::vector<double> out(b);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) out[i] += A[i * n + j] * x[j];
    return out;
  }
};

void make(Qp& q, int n, int rank, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> c(static_cast<std::size_t>(rank * n)), d(static_cast<std::size_t>(rank));
  for (double& x : c) x = normal(rng);
  for (double& x : d) x = normal(rng);
  q.n = n;
  q.A.assign(static_cast<std::size_t>(n * n), 0.0);
  q.b.assign(static_cast<std::size_t>(n), 0.0);
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < rank; ++k) q.b[i] += c[k * n + i] * d[k];
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < rank; ++k) q.A[i * n + j] += c[k * n + i] * c[k * n + j];
  }
  ASSERT_EQ(MatCreateSeqAIJ(PETSC_COMM_SELF, n, n, n, nullptr, &q.mat), 0);
  for (PetscInt i = 0; i < n; ++i)
    for (PetscInt j = 0; j < n; ++j) MatSetValue(q.mat, i, j, q.A[i * n + j], INSERT_VALUES);
  MatAssemblyBegin(q.mat, MAT_FINAL_ASSEMBLY);
  MatAssemblyEnd(q.mat, MAT_FINAL_ASSEMBLY);
}

// The optimal value by projected gradient with step 1/‖A‖_F, run far past convergence (slow but sure).
double reference_optimum(const Qp& q, const std::vector<double>& lower, const std::vector<double>& upper) {
  double frob = 0.0;
  for (double a : q.A) frob += a * a;
  const double step = 1.0 / std::sqrt(frob);
  std::vector<double> x(static_cast<std::size_t>(q.n));
  for (int i = 0; i < q.n; ++i) x[i] = std::clamp(0.0, lower[i], upper[i]);
  for (int it = 0; it < 200000; ++it) {
    const std::vector<double> g = q.g(x);
    for (int i = 0; i < q.n; ++i) x[i] = std::clamp(x[i] - step * g[i], lower[i], upper[i]);
  }
  return q.f(x);
}

}  // namespace

TEST(QpActiveSet, SingularNonnegativeQpReachesExactKkt) {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    Qp q;
    make(q, 8, 3, seed);
    const std::vector<double> lower(8, 0.0), upper(8, PETSC_INFINITY);
    std::vector<double> x(8, 0.0);
    ActiveSetOptions o;
    o.tolerance = 1e-13;
    o.single_release = seed % 2 == 0;  // Lawson–Hanson's one release per face, or all at once
    const ActiveSetReport r = active_set_finish(q.mat, q.b, lower, upper, x, o);
    ASSERT_TRUE(r.converged) << "seed " << seed << ": residual " << r.residual;
    const std::vector<double> g = q.g(x);
    for (int i = 0; i < 8; ++i) {
      ASSERT_GE(x[i], 0.0);
      if (x[i] > 0.0) EXPECT_LE(std::abs(g[i]), 1e-13) << "seed " << seed << ", free " << i;
      else EXPECT_GE(g[i], -1e-13) << "seed " << seed << ", bound " << i;
    }
    EXPECT_LE(projected_residual(x, g, lower, upper), 1e-13);
    EXPECT_NEAR(q.f(x), reference_optimum(q, lower, upper), 1e-9) << "seed " << seed;
  }
}

TEST(QpActiveSet, BoxBoundsAndAWarmStartKeepFeasibilityAndDescend) {
  for (unsigned seed = 11; seed <= 15; ++seed) {
    Qp q;
    make(q, 10, 6, seed);
    std::vector<double> lower(10), upper(10);
    for (int i = 0; i < 10; ++i) lower[i] = -0.3 * (i % 3), upper[i] = 0.2 + 0.1 * i;
    lower[4] = upper[4] = 0.1;  // a fixed variable
    std::vector<double> x(10);
    for (int i = 0; i < 10; ++i) x[i] = upper[i];  // a feasible corner, far from the optimum
    const double start = q.f(x);
    ActiveSetOptions o;
    o.tolerance = 1e-13;
    const ActiveSetReport r = active_set_finish(q.mat, q.b, lower, upper, x, o);
    ASSERT_TRUE(r.converged) << "seed " << seed << ": residual " << r.residual;
    for (int i = 0; i < 10; ++i) {
      EXPECT_GE(x[i], lower[i]);
      EXPECT_LE(x[i], upper[i]);
    }
    EXPECT_EQ(x[4], 0.1);
    EXPECT_LE(q.f(x), start);
    EXPECT_NEAR(q.f(x), reference_optimum(q, lower, upper), 1e-9) << "seed " << seed;
    EXPECT_LE(projected_residual(x, q.g(x), lower, upper), 1e-13);
  }
}

}  // namespace test_impact_qp_active_set
