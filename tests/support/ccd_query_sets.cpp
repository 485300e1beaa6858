#include "ccd_query_sets.hpp"

#include <gmpxx.h>

#include <cmath>
#include <fstream>
#include <random>
#include <stdexcept>
#include <utility>

namespace percussion::testing {
namespace {

using Eigen::Vector3d;
using Points = std::array<Vector3d, 4>;

struct Rng {
  std::mt19937_64 g;
  explicit Rng(unsigned seed) : g(seed) {}
  long integer(long lo, long hi) { return lo + static_cast<long>(g() % static_cast<unsigned long>(hi - lo + 1)); }
  // A multiple of 2^-bits in [-range, range] (range a power of two), exact in a double.
  double dyadic(double range, int bits) {
    const long n = static_cast<long>(std::ldexp(range, bits));
    return std::ldexp(static_cast<double>(integer(-n, n)), -bits);
  }
  Vector3d vec(double range, int bits, bool planar) {
    return {dyadic(range, bits), dyadic(range, bits), planar ? 0.0 : dyadic(range, bits)};
  }
  double gap(int kmin, int kmax) { return std::ldexp(1.0, -static_cast<int>(integer(kmin, kmax))); }
};

Vector3d v(double x, double y, double z = 0) { return {x, y, z}; }

CcdCase make(CcdKind kind, std::string name, bool truth, const Points& at0, const Points& at1) {
  CcdCase c;
  c.kind = kind;
  c.name = std::move(name);
  c.truth = truth;
  for (int k = 0; k < 4; ++k) c.x[k] = at0[k], c.x[k + 4] = at1[k];
  return c;
}

// A random signed permutation times a unit shear (integer, |det| = 1, well conditioned), a translation and a
// displacement shared by every point at t = 1: none changes whether the primitives touch.
CcdCase mapped(const CcdCase& c, Rng& rng) {
  const bool planar = c.kind == CcdKind::PointEdge2D;
  const int n = planar ? 2 : 3;
  Eigen::Matrix3d shear = Eigen::Matrix3d::Identity();
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) shear(i, j) = static_cast<double>(rng.integer(-1, 1));
  Eigen::Matrix3d perm = Eigen::Matrix3d::Zero();
  int order[3] = {0, 1, 2};
  for (int i = n - 1; i > 0; --i) std::swap(order[i], order[rng.integer(0, i)]);
  for (int i = 0; i < 3; ++i) perm(i, i < n ? order[i] : i) = (i < n && rng.integer(0, 1)) ? -1.0 : 1.0;
  const Eigen::Matrix3d map = perm * shear;
  const Vector3d shift = rng.vec(1.0, 8, planar), motion = rng.vec(1.0, 8, planar);
  CcdCase out = c;
  for (int k = 0; k < 8; ++k) out.x[k] = map * c.x[k] + shift + (k >= 4 ? motion : Vector3d::Zero());
  return out;
}

// Points with random positions at a rational contact time t* and random displacements, in contact at t*.
CcdCase general_hit(CcdKind kind, Rng& rng) {
  const bool planar = kind == CcdKind::PointEdge2D;
  const double t = std::ldexp(static_cast<double>(rng.integer(0, 16)), -4);
  const double u = std::ldexp(static_cast<double>(rng.integer(0, 8)), -4);
  const double w = std::ldexp(static_cast<double>(rng.integer(0, 8)), -4);
  Points at;  // positions at t*
  for (auto& p : at) p = rng.vec(1.0, 10, planar);
  if (kind == CcdKind::VertexFace) at[0] = at[1] + u * (at[2] - at[1]) + w * (at[3] - at[1]);
  if (kind == CcdKind::PointEdge2D) at[0] = at[1] + 2 * u * (at[2] - at[1]);
  if (kind == CcdKind::EdgeEdge) {
    // Solve c + w (d - c) = x for c exactly: c = (x - w d) / (1 - w) with 1 - w a power of two or w = 0.
    const double ww = rng.integer(0, 1) ? 0.5 : 0.0;
    const Vector3d x = at[0] + u * (at[1] - at[0]);
    at[2] = (x - ww * at[3]) / (1 - ww);
  }
  Points at0, at1;
  for (int k = 0; k < 4; ++k) {
    const Vector3d d = rng.vec(1.0, 8, planar);
    at0[k] = at[k] - t * d;
    at1[k] = at[k] + (1 - t) * d;
  }
  return make(kind, "contact at a rational time", true, at0, at1);
}

std::vector<CcdCase> canonical_vertex_face(double s) {
  const auto K = CcdKind::VertexFace;
  const Vector3d A = v(0, 0, 0), B = v(1, 0, 0), C = v(0, 1, 0);
  auto through = [&](const std::string& name, bool truth, double x, double y, const Points& face) {
    return make(K, name, truth, {v(x, y, 1), face[1], face[2], face[3]}, {v(x, y, -1), face[1], face[2], face[3]});
  };
  const Points tri = {A, A, B, C};
  std::vector<CcdCase> out = {
      through("vf crossing", true, 0.25, 0.25, tri),
      make(K, "vf touching at t=1", true, {v(0.25, 0.25, 1), A, B, C}, {v(0.25, 0.25, 0), A, B, C}),
      make(K, "vf touching at t=0", true, {v(0.25, 0.25, 0), A, B, C}, {v(0.25, 0.25, 1), A, B, C}),
      through("vf grazing an edge", true, 0.5, 0.5, tri),
      through("vf grazing a vertex", true, 1, 0, tri),
      through("vf near miss past an edge", false, 0.5 + s, 0.5 + s, tri),
      through("vf near miss past a vertex", false, 1 + s, 0, tri),
      make(K, "vf parallel above", false, {v(-1, 0.25, s), A, B, C}, {v(2, 0.25, s), A, B, C}),
      make(K, "vf parallel in the plane through the face", true, {v(-1, 0.25, 0), A, B, C}, {v(2, 0.25, 0), A, B, C}),
      make(K, "vf parallel in the plane past a vertex", false, {v(-1, 1 + s, 0), A, B, C}, {v(2, 1 + s, 0), A, B, C}),
      make(K, "vf face moving onto a still point", true, {v(0.25, 0.25, 0), v(0, 0, 1), v(1, 0, 1), v(0, 1, 1)},
           {v(0.25, 0.25, 0), v(0, 0, -1), v(1, 0, -1), v(0, 1, -1)}),
      make(K, "vf point chasing a rising face", false, {v(0.25, 0.25, -0.5), v(0, 0, -1), v(1, 0, -1), v(0, 1, -1)},
           {v(0.25, 0.25, 3), v(0, 0, 1), v(1, 0, 1), v(0, 1, 1)}),
      through("vf zero-area face crossed", true, 0.25, 0, {A, A, B, v(0.5, 0, 0)}),
      through("vf zero-area face missed", false, 0.25, s, {A, A, B, v(0.5, 0, 0)}),
      through("vf face collapsed to a point, hit", true, 0, 0, {A, A, A, A}),
      through("vf face collapsed to a point, missed", false, s, 0, {A, A, A, A}),
      make(K, "vf no motion, in contact", true, {v(0.25, 0.25, 0), A, B, C}, {v(0.25, 0.25, 0), A, B, C}),
      make(K, "vf no motion, apart", false, {v(0.25, 0.25, s), A, B, C}, {v(0.25, 0.25, s), A, B, C}),
      make(K, "vf shrinking face escapes the point", false, {v(0.75, 0.125, 1), A, B, C},
           {v(0.75, 0.125, -1), A, v(0.5, 0, 0), v(0, 0.5, 0)}),
  };
  return out;
}

std::vector<CcdCase> canonical_edge_edge(double s) {
  const auto K = CcdKind::EdgeEdge;
  const Vector3d A = v(-1, 0, 0), B = v(1, 0, 0);
  auto descend = [&](const std::string& name, bool truth, const Vector3d& c, const Vector3d& d) {
    return make(K, name, truth, {A, B, c + v(0, 0, 1), d + v(0, 0, 1)}, {A, B, c - v(0, 0, 1), d - v(0, 0, 1)});
  };
  std::vector<CcdCase> out = {
      descend("ee crossing", true, v(0, -1, 0), v(0, 1, 0)),
      make(K, "ee touching at t=1", true, {A, B, v(0, -1, 1), v(0, 1, 1)}, {A, B, v(0, -1, 0), v(0, 1, 0)}),
      make(K, "ee touching at t=0", true, {A, B, v(0, -1, 0), v(0, 1, 0)}, {A, B, v(0, -1, 1), v(0, 1, 1)}),
      descend("ee grazing an endpoint", true, v(1, -1, 0), v(1, 1, 0)),
      descend("ee near miss past an endpoint", false, v(1 + s, -1, 0), v(1 + s, 1, 0)),
      descend("ee endpoints meet", true, v(1, 0, 0), v(1, 1, 0)),
      descend("ee endpoints near miss", false, v(1, s, 0), v(1, 1, 0)),
      make(K, "ee parallel above", false, {A, B, v(-1, 0, s), v(1, 0, s)}, {A, B, v(0, 0, s), v(2, 0, s)}),
      descend("ee parallel descending, overlapping", true, v(0, 0, 0), v(2, 0, 0)),
      descend("ee parallel descending, end to end", true, v(1, 0, 0), v(3, 0, 0)),
      descend("ee parallel descending, disjoint", false, v(1 + s, 0, 0), v(3, 0, 0)),
      make(K, "ee coplanar crossing", true, {A, B, v(0, 1, 0), v(0, 2, 0)}, {A, B, v(0, -2, 0), v(0, -1, 0)}),
      make(K, "ee coplanar past the end", false, {A, B, v(1 + s, 1, 0), v(1 + s, 2, 0)},
           {A, B, v(1 + s, -2, 0), v(1 + s, -1, 0)}),
      descend("ee zero-length edge crossing", true, v(0.5, 0, 0), v(0.5, 0, 0)),
      descend("ee zero-length edge missing", false, v(1 + s, 0, 0), v(1 + s, 0, 0)),
      make(K, "ee two points meeting", true, {A, A, v(0, 0, 0), v(0, 0, 0)}, {A, A, v(-2, 0, 0), v(-2, 0, 0)}),
      make(K, "ee two points passing", false, {A, A, v(0, s, 0), v(0, s, 0)}, {A, A, v(-2, s, 0), v(-2, s, 0)}),
      make(K, "ee no motion, crossing", true, {A, B, v(0, -1, 0), v(0, 1, 0)}, {A, B, v(0, -1, 0), v(0, 1, 0)}),
      make(K, "ee no motion, apart", false, {A, B, v(0, -1, s), v(0, 1, s)}, {A, B, v(0, -1, s), v(0, 1, s)}),
      make(K, "ee skew edge sliding over", false, {A, B, v(-2, -1, s), v(-2, 1, s)}, {A, B, v(2, -1, s), v(2, 1, s)}),
  };
  return out;
}

std::vector<CcdCase> canonical_point_edge(double s) {
  const auto K = CcdKind::PointEdge2D;
  const Vector3d A = v(-1, 0), B = v(1, 0), O = v(0, 0);
  auto pe = [&](const std::string& name, bool truth, const Vector3d& p0, const Vector3d& p1, const Vector3d& a0,
                const Vector3d& b0, const Vector3d& a1, const Vector3d& b1) {
    return make(K, name, truth, {p0, a0, b0, O}, {p1, a1, b1, O});
  };
  return {
      pe("pe crossing", true, v(0, 1), v(0, -1), A, B, A, B),
      pe("pe touching at t=1", true, v(0.5, 1), v(0.5, 0), A, B, A, B),
      pe("pe touching at t=0", true, v(0.5, 0), v(0.5, 1), A, B, A, B),
      pe("pe grazing an endpoint", true, v(1, 1), v(1, -1), A, B, A, B),
      pe("pe near miss past an endpoint", false, v(1 + s, 1), v(1 + s, -1), A, B, A, B),
      pe("pe parallel above", false, v(-2, s), v(2, s), A, B, A, B),
      pe("pe collinear through the edge", true, v(-2, 0), v(2, 0), A, B, A, B),
      pe("pe collinear beyond the edge", false, v(1 + s, 0), v(3, 0), A, B, A, B),
      pe("pe collinear reaching the endpoint", true, v(2, 0), v(1, 0), A, B, A, B),
      pe("pe zero-length edge hit", true, v(0, 1), v(0, -1), O, O, O, O),
      pe("pe zero-length edge missed", false, v(s, 1), v(s, -1), O, O, O, O),
      pe("pe no motion, on the edge", true, v(0.5, 0), v(0.5, 0), A, B, A, B),
      pe("pe no motion, apart", false, v(0.5, s), v(0.5, s), A, B, A, B),
      pe("pe edge moving onto a still point", true, O, O, v(-1, 1), v(1, 1), v(-1, -1), v(1, -1)),
      pe("pe rotating edge sweeps the point", true, v(0.5, 0.25), v(0.5, 0.25), A, v(1, 1), A, v(1, -1)),
      pe("pe rotating edge stops short", false, v(0.5, 1), v(0.5, 1), A, v(1, 1), A, v(1, -1)),
  };
}

std::vector<CcdCase> canonical(CcdKind kind, double s) {
  switch (kind) {
    case CcdKind::VertexFace: return canonical_vertex_face(s);
    case CcdKind::EdgeEdge: return canonical_edge_edge(s);
    case CcdKind::PointEdge2D: return canonical_point_edge(s);
  }
  return {};
}

bool is_parallel(const CcdCase& c) {
  return c.name.find("parallel") != std::string::npos || c.name.find("collinear") != std::string::npos ||
         c.name.find("coplanar") != std::string::npos || c.name.find("sliding") != std::string::npos;
}

}  // namespace

std::vector<CcdCase> ccd_constructed_cases(CcdKind kind, int variants, unsigned seed) {
  Rng rng(seed);
  std::vector<CcdCase> out;
  for (int r = 0; r < variants; ++r) {
    for (const CcdCase& c : canonical(kind, rng.gap(6, 14))) out.push_back(r == 0 ? c : mapped(c, rng));
    out.push_back(general_hit(kind, rng));
  }
  return out;
}

std::vector<CcdCase> ccd_random_cases(CcdKind kind, int count, double motion, unsigned seed, int* unknown) {
  Rng rng(seed);
  const bool planar = kind == CcdKind::PointEdge2D;
  std::vector<CcdCase> out;
  if (unknown) *unknown = 0;
  for (int q = 0; q < count; ++q) {
    CcdCase c;
    c.kind = kind;
    c.name = "random";
    for (int k = 0; k < 4; ++k) {
      c.x[k] = rng.vec(1.0, 10, planar);
      c.x[k + 4] = c.x[k] + motion * rng.vec(1.0, 10, planar);
    }
    const ExactVerdict verdict = exact_ccd(c);
    if (verdict == ExactVerdict::Unknown) {
      if (unknown) ++*unknown;
      continue;
    }
    c.truth = verdict == ExactVerdict::Hit;
    out.push_back(c);
  }
  return out;
}

std::vector<CcdCase> ccd_near_touching_cases(CcdKind kind, int count, unsigned seed) {
  Rng rng(seed);
  std::vector<CcdCase> out;
  while (static_cast<int>(out.size()) < count) {
    if (out.size() % 2 == 0) {
      out.push_back(general_hit(kind, rng));
      continue;
    }
    const std::vector<CcdCase> cases = canonical(kind, rng.gap(6, 20));
    std::vector<const CcdCase*> misses;
    for (const CcdCase& c : cases)
      if (!c.truth && c.name.find("apart") == std::string::npos) misses.push_back(&c);
    out.push_back(mapped(*misses[rng.integer(0, static_cast<long>(misses.size()) - 1)], rng));
  }
  return out;
}

std::vector<CcdCase> ccd_parallel_cases(CcdKind kind, int count, unsigned seed) {
  Rng rng(seed);
  std::vector<CcdCase> out;
  while (static_cast<int>(out.size()) < count) {
    const std::vector<CcdCase> cases = canonical(kind, rng.gap(6, 20));
    std::vector<const CcdCase*> parallel;
    for (const CcdCase& c : cases)
      if (is_parallel(c)) parallel.push_back(&c);
    out.push_back(mapped(*parallel[rng.integer(0, static_cast<long>(parallel.size()) - 1)], rng));
  }
  return out;
}

geometry::CcdResult run_ccd(const CcdCase& c, const geometry::CcdOptions& options) {
  const auto& x = c.x;
  switch (c.kind) {
    case CcdKind::VertexFace: return geometry::vertex_face_ccd(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], options);
    case CcdKind::EdgeEdge: return geometry::edge_edge_ccd(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], options);
    case CcdKind::PointEdge2D:
      return geometry::point_edge_ccd(x[0].head<2>(), x[1].head<2>(), x[2].head<2>(), x[4].head<2>(),
                                      x[5].head<2>(), x[6].head<2>(), options);
  }
  return {};
}

void write_ccd_query_file(const std::string& path, const std::vector<CcdCase>& cases) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error(path + ": cannot write");
  for (const CcdCase& c : cases) {
    if (c.kind == CcdKind::PointEdge2D) throw std::runtime_error("point-edge queries have no CCD-Query-IO form");
    for (int k = 0; k < 8; ++k) {
      for (int i = 0; i < 3; ++i) {
        const mpq_class q(c.x[k][i]);
        out << q.get_num().get_str() << ',' << q.get_den().get_str() << ',';
      }
      out << (c.truth ? 1 : 0) << '\n';
    }
  }
}

}  // namespace percussion::testing
