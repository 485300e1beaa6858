// Exact intersection predicates (geometry/intersection): known answers for generic and degenerate configurations
// (touching at a vertex, collinear, coplanar, parallel), a randomised set against a GMP rational reference that
// solves for the intersection parameters, and point-in-body parity through vertices and edges.
#include <gmpxx.h>
#include <gtest/gtest.h>

#include <Eigen/Geometry>

#include <random>

#include "percussion/geometry/intersection/edge_triangle.hpp"
#include "percussion/geometry/intersection/orientation.hpp"
#include "percussion/geometry/intersection/ray_parity.hpp"
#include "percussion/geometry/intersection/segment_segment.hpp"

namespace test_intersection_predicates {

namespace {

using namespace percussion::geometry;
using V2 = Eigen::Vector2d;
using V3 = Eigen::Vector3d;
using Q = mpq_class;

// ---- The rational reference: intersection parameters solved exactly.
struct Q2 {
  Q x, y;
};
struct Q3 {
  Q v[3];
};
Q2 q2(const V2& p) { return {Q(p.x()), Q(p.y())}; }
Q3 q3(const V3& p) { return {{Q(p.x()), Q(p.y()), Q(p.z())}}; }
Q2 operator-(const Q2& a, const Q2& b) { return {a.x - b.x, a.y - b.y}; }
Q3 operator-(const Q3& a, const Q3& b) { return {{a.v[0] - b.v[0], a.v[1] - b.v[1], a.v[2] - b.v[2]}}; }
Q cross(const Q2& a, const Q2& b) { return a.x * b.y - a.y * b.x; }
Q dot(const Q2& a, const Q2& b) { return a.x * b.x + a.y * b.y; }
Q3 cross(const Q3& a, const Q3& b) {
  return {{a.v[1] * b.v[2] - a.v[2] * b.v[1], a.v[2] * b.v[0] - a.v[0] * b.v[2], a.v[0] * b.v[1] - a.v[1] * b.v[0]}};
}
Q dot(const Q3& a, const Q3& b) { return a.v[0] * b.v[0] + a.v[1] * b.v[1] + a.v[2] * b.v[2]; }
Q triple(const Q3& a, const Q3& b, const Q3& c) { return dot(a, cross(b, c)); }
Q3 neg(const Q3& a) { return {{-a.v[0], -a.v[1], -a.v[2]}}; }

// Segments with distinct endpoints.
Intersection reference_segments(const Q2& p0, const Q2& p1, const Q2& q0, const Q2& q1) {
  const Q2 d1 = p1 - p0, d2 = q1 - q0, w = q0 - p0;
  const Q den = cross(d1, d2);
  if (den != 0) {
    const Q s = cross(w, d2) / den, t = cross(w, d1) / den;
    if (s < 0 || s > 1 || t < 0 || t > 1) return Intersection::none;
    return s > 0 && s < 1 && t > 0 && t < 1 ? Intersection::crossing : Intersection::touching;
  }
  if (cross(w, d1) != 0) return Intersection::none;
  const Q a1 = dot(d1, d1), b0 = dot(w, d1), b1 = dot(q1 - p0, d1);
  const Q lo = b0 < b1 ? b0 : b1, hi = b0 < b1 ? b1 : b0;  // q's interval on p's, which is [0, a1]
  return lo <= a1 && hi >= 0 ? Intersection::touching : Intersection::none;
}

// A segment with distinct endpoints and a non-degenerate triangle.
Intersection reference_edge_triangle(const Q3& e0, const Q3& e1, const Q3& t0, const Q3& t1, const Q3& t2) {
  const Q3 d = e1 - e0, a = t1 - t0, b = t2 - t0, w = e0 - t0;
  const Q det = triple(a, b, neg(d));
  if (det != 0) {  // e0 + s d = t0 + u a + v b
    const Q u = triple(w, b, neg(d)) / det, v = triple(a, w, neg(d)) / det, s = triple(a, b, w) / det;
    if (s < 0 || s > 1 || u < 0 || v < 0 || u + v > 1) return Intersection::none;
    return s > 0 && s < 1 && u > 0 && v > 0 && u + v < 1 ? Intersection::crossing : Intersection::touching;
  }
  const Q3 n = cross(a, b);
  if (dot(n, w) != 0) return Intersection::none;
  int k = 0;
  while (n.v[k] == 0) ++k;
  auto flat = [&](const Q3& p) { return Q2{p.v[(k + 1) % 3], p.v[(k + 2) % 3]}; };
  const Q2 p = flat(e0), q = flat(e1), tri[3] = {flat(t0), flat(t1), flat(t2)};
  auto inside = [&](const Q2& r) {  // barycentric coordinates in the projected triangle
    const Q2 ab = tri[1] - tri[0], ac = tri[2] - tri[0], ar = r - tri[0];
    const Q area = cross(ab, ac), u = cross(ar, ac) / area, v = cross(ab, ar) / area;
    return u >= 0 && v >= 0 && u + v <= 1;
  };
  if (inside(p) || inside(q)) return Intersection::touching;
  for (int i = 0; i < 3; ++i)
    if (reference_segments(p, q, tri[i], tri[(i + 1) % 3]) != Intersection::none) return Intersection::touching;
  return Intersection::none;
}

// ---- Known answers.
TEST(Orientation, SignsOfExactAndNearlyDegenerateTriples) {
  EXPECT_EQ(orient2d({0, 0}, {1, 0}, {0, 1}), 1);
  EXPECT_EQ(orient2d({0, 0}, {0, 1}, {1, 0}), -1);
  EXPECT_EQ(orient2d({0, 0}, {1, 3}, {0.1, 0.3}), -1);  // rounded decimals: 0.3 < 3 × 0.1, below the line
  EXPECT_EQ(orient2d({0.5, 0.5}, {12, 12}, {24, 24}), 0);
  const double tiny = std::nextafter(0.5, 1.0);
  EXPECT_EQ(orient2d({0.5, 0.5}, {12, 12}, {24, 24 + 24 * 1e-16}), 1);
  EXPECT_EQ(orient2d({tiny, 0.5}, {12, 12}, {24, 24}), -1);
  EXPECT_EQ(orient3d({0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}), -1);  // d on the side the normal points to
  EXPECT_EQ(orient3d({0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0.3, 0.7, 0}), 0);
  EXPECT_EQ(orient3d({0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0.3, 0.7, -1e-300}), 1);
}

TEST(SegmentSegment, KnownAnswersIncludingDegenerateCases) {
  EXPECT_EQ(segment_segment({0, 0}, {2, 2}, {0, 2}, {2, 0}), Intersection::crossing);
  EXPECT_EQ(segment_segment({0, 0}, {2, 2}, {3, 1}, {1, 3}), Intersection::touching);   // endpoint on a segment
  EXPECT_EQ(segment_segment({0, 0}, {1, 0}, {1, 0}, {2, 5}), Intersection::touching);   // shared vertex
  EXPECT_EQ(segment_segment({0, 0}, {2, 0}, {1, 0}, {3, 0}), Intersection::touching);   // collinear overlap
  EXPECT_EQ(segment_segment({0, 0}, {1, 0}, {2, 0}, {3, 0}), Intersection::none);       // collinear, apart
  EXPECT_EQ(segment_segment({0, 0}, {2, 0}, {0, 1}, {2, 1}), Intersection::none);       // parallel
  EXPECT_EQ(segment_segment({0, 0}, {2, 0}, {1, 1e-300}, {1, 1}), Intersection::none);  // just above
  EXPECT_EQ(segment_segment({0, 0}, {2, 0}, {1, -1e-300}, {1, 1}), Intersection::crossing);
  EXPECT_EQ(segment_segment({1, 1}, {1, 1}, {0, 0}, {2, 2}), Intersection::touching);   // a point on a segment
  EXPECT_EQ(segment_segment({1, 2}, {1, 2}, {0, 0}, {2, 2}), Intersection::none);
}

TEST(EdgeTriangle, KnownAnswersIncludingDegenerateCases) {
  const V3 a(0, 0, 0), b(2, 0, 0), c(0, 2, 0);
  EXPECT_EQ(edge_triangle({0.5, 0.5, -1}, {0.5, 0.5, 1}, a, b, c), Intersection::crossing);
  EXPECT_EQ(edge_triangle({0.5, 0.5, 1e-300}, {0.5, 0.5, 1}, a, b, c), Intersection::none);
  EXPECT_EQ(edge_triangle({0.5, 0.5, 0}, {0.5, 0.5, 1}, a, b, c), Intersection::touching);  // endpoint on it
  EXPECT_EQ(edge_triangle({1, 0, -1}, {1, 0, 1}, a, b, c), Intersection::touching);        // through an edge
  EXPECT_EQ(edge_triangle({0, 0, -1}, {0, 0, 1}, a, b, c), Intersection::touching);        // through a vertex
  EXPECT_EQ(edge_triangle({3, 3, -1}, {3, 3, 1}, a, b, c), Intersection::none);
  EXPECT_EQ(edge_triangle({-1, 0.5, 1}, {3, 0.5, 1}, a, b, c), Intersection::none);        // parallel above
  EXPECT_EQ(edge_triangle({-1, 0.5, 0}, {3, 0.5, 0}, a, b, c), Intersection::touching);    // in the plane, across
  EXPECT_EQ(edge_triangle({0.2, 0.2, 0}, {0.4, 0.3, 0}, a, b, c), Intersection::touching); // in the plane, inside
  EXPECT_EQ(edge_triangle({2, 2, 0}, {3, 1, 0}, a, b, c), Intersection::none);             // in the plane, outside
  EXPECT_EQ(edge_triangle({-1, 3, 0}, {3, -1, 0}, a, b, c), Intersection::touching);       // along the hypotenuse
  // In a tilted plane none of whose coordinates vanish, the rounded midpoint is off the plane: exact answers.
  const V3 p(0.1, 0.7, 0.3), q(0.9, 0.2, 0.4), r(0.3, 0.1, 0.9);
  const V3 inside = (p + q + r) / 3.0, normal = (q - p).cross(r - p);
  EXPECT_EQ(edge_triangle(inside - normal, inside + normal, p, q, r), Intersection::crossing);
  // A degenerate (collinear) triangle is its edges.
  EXPECT_EQ(edge_triangle({1, -1, 0}, {1, 1, 0}, a, b, {4, 0, 0}), Intersection::touching);
  EXPECT_EQ(edge_triangle({1, -1, 1}, {1, 1, 1}, a, b, {4, 0, 0}), Intersection::none);
  EXPECT_EQ(segment_segment_3d({0, 0, 0}, {1, 1, 1}, {1, 0, 0}, {0, 1, 1}), Intersection::touching);
  EXPECT_EQ(segment_segment_3d({0, 0, 0}, {1, 1, 1}, {1, 0, 0}, {0, 1, 1.5}), Intersection::none);
}

// ---- Randomised against the reference: generic doubles, small-grid points (exact degeneracies) and points
// rounded onto lines and planes (near degeneracies, where the floating-point filter must defer).
struct Sampler {
  std::mt19937_64 rng{20260};
  double real() { return std::uniform_real_distribution<double>(-1, 1)(rng); }
  double grid() { return static_cast<double>(std::uniform_int_distribution<int>(0, 2)(rng)) * 0.1; }
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); }
};

TEST(SegmentSegment, RandomisedAgainstRationalReference) {
  Sampler s;
  int counts[3] = {0, 0, 0};
  for (int trial = 0; trial < 30000; ++trial) {
    const int mode = trial % 3;
    V2 p[4];
    for (V2& v : p) v = mode == 1 ? V2(s.grid(), s.grid()) : V2(s.real(), s.real());
    if (mode == 2) p[2 + s.pick(2)] = p[0] + s.real() * (p[1] - p[0]);  // rounded onto p's line
    if (p[0] == p[1] || p[2] == p[3]) continue;
    const Intersection want = reference_segments(q2(p[0]), q2(p[1]), q2(p[2]), q2(p[3]));
    ASSERT_EQ(segment_segment(p[0], p[1], p[2], p[3]), want) << "trial " << trial;
    ++counts[static_cast<int>(want)];
  }
  // Every outcome occurs often enough to mean something.
  for (int c : counts) EXPECT_GT(c, 1000);
}

TEST(EdgeTriangle, RandomisedAgainstRationalReference) {
  Sampler s;
  int counts[3] = {0, 0, 0};
  for (int trial = 0; trial < 30000; ++trial) {
    const int mode = trial % 3;
    V3 p[5];
    for (V3& v : p) v = mode == 1 ? V3(s.grid(), s.grid(), s.grid()) : V3(s.real(), s.real(), s.real());
    if (mode == 2) {  // an endpoint rounded onto the triangle's plane, sometimes the other onto one of its edges
      const double u = std::abs(s.real()), v = (1 - u) * std::abs(s.real());
      p[s.pick(2)] = p[2] + u * (p[3] - p[2]) + v * (p[4] - p[2]);
      const int j = s.pick(3);
      if (trial % 2) p[1] = p[2 + j] + s.real() * (p[2 + (j + 1) % 3] - p[2 + j]);
    }
    const Q3 e0 = q3(p[0]), e1 = q3(p[1]), t0 = q3(p[2]), t1 = q3(p[3]), t2 = q3(p[4]);
    const Q3 n = cross(t1 - t0, t2 - t0);
    if (p[0] == p[1] || (n.v[0] == 0 && n.v[1] == 0 && n.v[2] == 0)) continue;
    const Intersection want = reference_edge_triangle(e0, e1, t0, t1, t2);
    ASSERT_EQ(edge_triangle(p[0], p[1], p[2], p[3], p[4]), want) << "trial " << trial;
    ++counts[static_cast<int>(want)];
  }
  for (int c : counts) EXPECT_GT(c, 300);
}

// ---- Parity: grid points against boundaries whose vertices and edges lie on the rays.
TEST(RayParity, SquareWithVerticesOnTheRays) {
  // The square [0, 2]² with its sides split at their midpoints, counterclockwise.
  const V2 v[8] = {{0, 0}, {1, 0}, {2, 0}, {2, 1}, {2, 2}, {1, 2}, {0, 2}, {0, 1}};
  int inside = 0;
  for (int i = -1; i <= 3; ++i)
    for (int j = -1; j <= 3; ++j) {
      const V2 p(i * 0.5 + 0.5, j * 0.5 + 0.5);
      const bool on_boundary = (p.x() == 0 || p.x() == 2) ? (p.y() >= 0 && p.y() <= 2)
                                                          : (p.y() == 0 || p.y() == 2) && p.x() >= 0 && p.x() <= 2;
      if (on_boundary) continue;
      int crossings = 0;
      for (int k = 0; k < 8; ++k) crossings += ray_crosses_segment(p, v[k], v[(k + 1) % 8]);
      const bool want = p.x() > 0 && p.x() < 2 && p.y() > 0 && p.y() < 2;
      EXPECT_EQ(crossings % 2 == 1, want) << p.transpose();
      inside += want;
    }
  EXPECT_EQ(inside, 9);
}

TEST(RayParity, OctahedronWithEdgesAndVerticesOnTheRays) {
  const V3 v[6] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
  std::vector<std::array<int, 3>> faces;
  for (int x : {0, 1})
    for (int y : {2, 3})
      for (int z : {4, 5}) faces.push_back({x, y, z});
  int inside = 0, tested = 0;
  for (int i = -3; i <= 3; ++i)
    for (int j = -3; j <= 3; ++j)
      for (int k = -3; k <= 3; ++k) {
        const V3 p(i * 0.5, j * 0.5, k * 0.5);
        const double l1 = std::abs(p.x()) + std::abs(p.y()) + std::abs(p.z());
        if (l1 == 1) continue;
        int crossings = 0;
        for (const auto& f : faces) crossings += ray_crosses_triangle(p, v[f[0]], v[f[1]], v[f[2]]);
        EXPECT_EQ(crossings % 2 == 1, l1 < 1) << p.transpose();
        inside += l1 < 1;
        ++tested;
      }
  EXPECT_EQ(inside, 7);
  EXPECT_GT(tested, 250);
}

}  // namespace

}  // namespace test_intersection_predicates
