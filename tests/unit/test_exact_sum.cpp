// The exact sum behind partition-independent norms (impact batches): any order and any split into partial sums give
// the same double, and cancellation that ruins a double sum is exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "percussion/parallel/exact_sum.hpp"

namespace test_exact_sum {

using percussion::parallel::ExactSum;

TEST(ExactSum, OrderAndSplitDoNotMatter) {
  std::mt19937_64 rng(5);
  std::vector<double> terms;
  for (int i = 0; i < 20000; ++i)
    terms.push_back(std::ldexp(static_cast<double>(rng() >> 11), -53 + static_cast<int>(rng() % 60) - 30));
  ExactSum forward;
  for (double x : terms) forward.add(x);
  const double reference = forward.value();
  std::shuffle(terms.begin(), terms.end(), rng);
  ExactSum parts[3];
  for (std::size_t i = 0; i < terms.size(); ++i) parts[i % 3].add(terms[i]);
  parts[2].add(parts[0]);
  parts[2].add(parts[1]);
  EXPECT_EQ(parts[2].value(), reference);  // bit for bit
  // A naive double sum in the two orders usually differs in the last bits; the exact one is within an ulp of the
  // true sum (long double over the sorted terms as the yardstick).
  std::sort(terms.begin(), terms.end());
  long double sorted = 0;
  for (double x : terms) sorted += x;
  EXPECT_NEAR(reference, static_cast<double>(sorted), 2e-16 * reference);
}

TEST(ExactSum, CancellationAndExtremes) {
  ExactSum s;
  s.add(1e300);
  s.add(1.0);
  s.add(-1e300);
  EXPECT_EQ(s.value(), 1.0);  // a double sum gives 0
  ExactSum t;
  t.add(4.9406564584124654e-324);  // the smallest subnormal
  t.add(4.9406564584124654e-324);
  EXPECT_EQ(t.value(), 2 * 4.9406564584124654e-324);
  ExactSum u;
  u.add(1.7e308);
  u.add(-0.5);
  u.add(0.5);
  EXPECT_EQ(u.value(), 1.7e308);
}

}  // namespace test_exact_sum
