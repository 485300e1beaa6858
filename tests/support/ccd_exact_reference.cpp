#include "ccd_exact_reference.hpp"

#include <gmpxx.h>

#include <algorithm>
#include <vector>

namespace percussion::testing {
namespace {

using Q = mpq_class;

// A closed rational interval; arithmetic gives enclosures (no rounding: the bounds are exact rationals).
struct I {
  Q lo, hi;
};
I operator+(const I& a, const I& b) { return {a.lo + b.lo, a.hi + b.hi}; }
I operator-(const I& a, const I& b) { return {a.lo - b.hi, a.hi - b.lo}; }
I operator*(const I& a, const I& b) {
  const Q p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
  return {*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
}
bool positive(const Q& q) { return sgn(q) > 0; }
bool positive(const I& i) { return sgn(i.lo) > 0; }
bool nonnegative(const Q& q) { return sgn(q) >= 0; }

template <class S>
using V3 = std::array<S, 3>;

template <class S>
V3<S> sub(const V3<S>& a, const V3<S>& b) {
  return {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
}
template <class S>
V3<S> cross(const V3<S>& a, const V3<S>& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
template <class S>
S dot(const V3<S>& a, const V3<S>& b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

// The query's points as exact rationals: start and displacement.
struct Exact {
  CcdKind kind;
  Q x0[4][3], dx[4][3];
  int points() const { return kind == CcdKind::PointEdge2D ? 3 : 4; }
  int dims() const { return kind == CcdKind::PointEdge2D ? 2 : 3; }
};

Exact exact_of(const CcdCase& c) {
  Exact e;
  e.kind = c.kind;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 3; ++i) {
      e.x0[k][i] = Q(c.x[k][i]);
      e.dx[k][i] = Q(c.x[k + 4][i]) - e.x0[k][i];
    }
  return e;
}

// Positions of the points at time t (a rational) or over a time interval.
std::array<V3<Q>, 4> at(const Exact& e, const Q& t) {
  std::array<V3<Q>, 4> p;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 3; ++i) p[k][i] = e.x0[k][i] + t * e.dx[k][i];
  return p;
}
std::array<V3<I>, 4> at(const Exact& e, const I& t) {
  std::array<V3<I>, 4> p;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 3; ++i) p[k][i] = I{e.x0[k][i], e.x0[k][i]} + t * I{e.dx[k][i], e.dx[k][i]};
  return p;
}

// Coplanarity (collinearity in 2D) polynomial: zero at the times the primitives' supports meet.
Q coplanarity(const Exact& e, const Q& t) {
  const auto p = at(e, t);
  switch (e.kind) {
    case CcdKind::VertexFace: return dot(cross(sub(p[2], p[1]), sub(p[3], p[1])), sub(p[0], p[1]));
    case CcdKind::EdgeEdge: return dot(cross(sub(p[1], p[0]), sub(p[3], p[2])), sub(p[2], p[0]));
    case CcdKind::PointEdge2D: {
      const auto e1 = sub(p[2], p[1]), w = sub(p[0], p[1]);
      return e1[0] * w[1] - e1[1] * w[0];
    }
  }
  return 0;
}

// Given coplanarity, is the contact point inside both primitives? Strict for intervals (a proof over the whole
// time interval), closed for exact values.
template <class S>
bool inside(const Exact& e, const std::array<V3<S>, 4>& p) {
  auto test = [](const S& s) { if constexpr (std::is_same_v<S, I>) return positive(s); else return nonnegative(s); };
  switch (e.kind) {
    case CcdKind::VertexFace: {
      const auto n = cross(sub(p[2], p[1]), sub(p[3], p[1]));
      if (!positive(dot(n, n))) return false;
      return test(dot(n, cross(sub(p[2], p[0]), sub(p[3], p[0])))) &&
             test(dot(n, cross(sub(p[3], p[0]), sub(p[1], p[0])))) &&
             test(dot(n, cross(sub(p[1], p[0]), sub(p[2], p[0]))));
    }
    case CcdKind::EdgeEdge: {
      const auto e1 = sub(p[1], p[0]), e2 = sub(p[3], p[2]), w = sub(p[2], p[0]);
      const auto n = cross(e1, e2);
      const S nn = dot(n, n);
      if (!positive(nn)) return false;
      const S u = dot(cross(w, e2), n), v = dot(cross(w, e1), n);
      return test(u) && test(nn - u) && test(v) && test(nn - v);
    }
    case CcdKind::PointEdge2D: {
      const auto e1 = sub(p[2], p[1]), w = sub(p[0], p[1]);  // z = 0 exactly
      const S den = dot(e1, e1);
      if (!positive(den)) return false;
      const S num = dot(w, e1);
      return test(num) && test(den - num);
    }
  }
  return false;
}

bool hit_certificate(const Exact& e, const ExactOptions& o) {
  const int n = o.samples;
  Q prev_t = 0, prev_g = coplanarity(e, prev_t);
  if (sgn(prev_g) == 0 && inside<Q>(e, at(e, prev_t))) return true;
  for (int k = 1; k <= n; ++k) {
    Q t(k, n);
    t.canonicalize();
    const Q g = coplanarity(e, t);
    if (sgn(g) == 0 && inside<Q>(e, at(e, t))) return true;
    if (sgn(g) * sgn(prev_g) < 0) {
      Q lo = prev_t, hi = t, glo = prev_g;
      bool exact_zero = false;
      for (int r = 0; r < o.refine && !exact_zero; ++r) {
        const Q mid = (lo + hi) / 2;
        const Q gm = coplanarity(e, mid);
        if (sgn(gm) == 0) {
          if (inside<Q>(e, at(e, mid))) return true;
          exact_zero = true;
        } else if (sgn(gm) == sgn(glo)) {
          lo = mid, glo = gm;
        } else {
          hi = mid;
        }
      }
      if (!exact_zero && inside<I>(e, at(e, I{lo, hi}))) return true;
    }
    prev_t = t, prev_g = g;
  }
  return false;
}

// Exact range of F over a parameter box (t, u, v): every coordinate excluded from zero proves the box empty.
bool box_excluded(const Exact& e, const Q lo[3], const Q hi[3]) {
  if (e.kind == CcdKind::VertexFace && lo[1] + lo[2] > 1) return true;
  const int dims = e.dims();
  Q fmin[3], fmax[3];
  bool first = true;
  for (int s = 0; s < 2; ++s) {
    const auto p = at(e, s ? hi[0] : lo[0]);
    for (int su = 0; su < 2; ++su)
      for (int sv = 0; sv < 2; ++sv) {
        const Q& u = su ? hi[1] : lo[1];
        const Q& v = sv ? hi[2] : lo[2];
        for (int i = 0; i < dims; ++i) {
          Q f;
          switch (e.kind) {
            case CcdKind::VertexFace: f = p[0][i] - (p[1][i] + u * (p[2][i] - p[1][i]) + v * (p[3][i] - p[1][i])); break;
            case CcdKind::EdgeEdge: f = p[0][i] + u * (p[1][i] - p[0][i]) - p[2][i] - v * (p[3][i] - p[2][i]); break;
            case CcdKind::PointEdge2D: f = p[0][i] - (p[1][i] + u * (p[2][i] - p[1][i])); break;
          }
          if (first || f < fmin[i]) fmin[i] = f;
          if (first || f > fmax[i]) fmax[i] = f;
        }
        first = false;
      }
  }
  for (int i = 0; i < dims; ++i)
    if (sgn(fmin[i]) > 0 || sgn(fmax[i]) < 0) return true;
  return false;
}

bool miss_certificate(const Exact& e, int max_boxes) {
  struct Box {
    Q lo[3], hi[3];
    int depth;
  };
  const int params = e.kind == CcdKind::PointEdge2D ? 2 : 3;
  std::vector<Box> stack(1);
  for (int k = 0; k < 3; ++k) stack[0].lo[k] = 0, stack[0].hi[k] = 1;
  stack[0].depth = 0;
  int boxes = 0;
  while (!stack.empty()) {
    Box b = stack.back();
    stack.pop_back();
    if (++boxes > max_boxes) return false;
    if (box_excluded(e, b.lo, b.hi)) continue;
    const int k = b.depth % params;
    const Q mid = (b.lo[k] + b.hi[k]) / 2;
    Box left = b, right = b;
    left.hi[k] = mid, right.lo[k] = mid;
    left.depth = right.depth = b.depth + 1;
    stack.push_back(left);
    stack.push_back(right);
  }
  return true;
}

}  // namespace

ExactVerdict exact_ccd(const CcdCase& query, const ExactOptions& options) {
  const Exact e = exact_of(query);
  // Most random queries are excluded by a few boxes: try that first, then the hit proof, then a deeper search.
  if (miss_certificate(e, 64)) return ExactVerdict::Miss;
  if (hit_certificate(e, options)) return ExactVerdict::Hit;
  if (miss_certificate(e, options.miss_boxes)) return ExactVerdict::Miss;
  return ExactVerdict::Unknown;
}

}  // namespace percussion::testing
