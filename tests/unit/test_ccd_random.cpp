// CCD on random queries against the exact rational reference: zero false negatives, few false positives.
#include <gtest/gtest.h>

#include "../support/ccd_query_sets.hpp"

namespace test_ccd_random {

using namespace percussion::testing;

namespace {

// False positives allowed: near misses within about 3 tolerances (1e-6) of contact are reported as hits.
constexpr double kMaxFalsePositiveRate = 0.01;

void expect_exact_agreement(CcdKind kind, double motion, unsigned seed) {
  const int count = 400;
  int unknown = 0;
  const std::vector<CcdCase> cases = ccd_random_cases(kind, count, motion, seed, &unknown);
  EXPECT_LE(unknown, count / 20) << "the exact reference leaves too many queries undecided";
  int hits = 0, misses = 0, false_negatives = 0, false_positives = 0;
  for (const CcdCase& c : cases) {
    const bool hit = run_ccd(c).hit;
    hits += c.truth;
    misses += !c.truth;
    false_negatives += c.truth && !hit;
    false_positives += !c.truth && hit;
  }
  EXPECT_EQ(false_negatives, 0);
  EXPECT_LE(false_positives, kMaxFalsePositiveRate * misses);
  // Both answers are represented, so the counts above mean something.
  EXPECT_GE(hits, count / 100);
  EXPECT_GT(misses, count / 5);
}

}  // namespace

TEST(CcdRandom, VertexFace) { expect_exact_agreement(CcdKind::VertexFace, 2.0, 21); }
TEST(CcdRandom, EdgeEdge) { expect_exact_agreement(CcdKind::EdgeEdge, 2.0, 22); }
TEST(CcdRandom, PointEdge) { expect_exact_agreement(CcdKind::PointEdge2D, 2.0, 23); }
TEST(CcdRandom, VertexFaceSmallMotion) { expect_exact_agreement(CcdKind::VertexFace, 0.5, 24); }
TEST(CcdRandom, EdgeEdgeSmallMotion) { expect_exact_agreement(CcdKind::EdgeEdge, 0.5, 25); }

}  // namespace test_ccd_random
