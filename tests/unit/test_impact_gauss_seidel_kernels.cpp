// Gauss–Seidel's fixed-size kernels (every body with D degrees of freedom: ball packs, 1D chains, rigid bodies) give
// bit for bit what the generic one gives: the same problem padded with one unconstrained body of D dofs runs the
// fixed-size path, padded with bodies of other sizes (same total) the generic one.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "percussion/physics/impact/gauss_seidel.hpp"

namespace test_impact_gauss_seidel_kernels {

using namespace percussion::impact;

namespace {

struct Row {
  int a, b;  // b = -1: one-sided
  std::vector<double> g_a, g_b;
};
struct Problem {
  int dofs;                               // of every body
  std::vector<std::vector<double>> mass;  // dofs × dofs blocks
  std::vector<Row> rows;
  std::vector<double> v0;
};

// Bodies on a jittered line (D = 1) or lattice, joined to their lattice neighbours and, every fifth, to a wall.
// Balls (D = 2, 3) get ∓ the unit centre-to-centre direction, which the fast path stores once; `general` gives them
// independent random blocks instead, as rigid bodies (D = 6, random SPD mass blocks) always have.
Problem lattice(int dofs, int side, bool general, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(0, 1);
  std::normal_distribution<double> normal;
  const int dim = dofs == 6 ? 3 : dofs;
  Problem p{dofs, {}, {}, {}};
  int n = 1;
  for (int d = 0; d < dim; ++d) n *= side;
  std::vector<std::vector<double>> centre(n, std::vector<double>(dim));
  for (int k = 0; k < n; ++k) {
    for (int d = 0, r = k; d < dim; ++d, r /= side) centre[k][d] = 2.0 * (r % side) + 0.3 * (unit(rng) - 0.5);
    std::vector<double> m(dofs * dofs, 0.0);
    const double mass = std::pow(10.0, 2 * unit(rng));
    for (int i = 0; i < dofs; ++i) m[i * dofs + i] = mass;
    if (dofs == 6) {
      for (int i = 3; i < 6; ++i)
        for (int j = 3; j < 6; ++j) m[i * 6 + j] += 0.1 * (i == j ? 1.0 + unit(rng) : 0.2 * (unit(rng) - 0.5));
      for (int i = 3; i < 6; ++i)
        for (int j = 3; j < i; ++j) m[i * 6 + j] = m[j * 6 + i];
    }
    p.mass.push_back(m);
  }
  const auto random_block = [&] {
    std::vector<double> g(dofs);
    for (double& x : g) x = normal(rng);
    return g;
  };
  for (int a = 0; a < n; ++a) {
    for (int d = 0, stride = 1; d < dim; ++d, stride *= side) {
      const int b = a + stride;
      if ((a / stride) % side == side - 1) continue;
      if (general || dofs == 6) {
        p.rows.push_back({a, b, random_block(), random_block()});
        continue;
      }
      std::vector<double> t(dofs);
      double len = 0.0;
      for (int i = 0; i < dofs; ++i) len += std::pow(t[i] = centre[b][i] - centre[a][i], 2);
      std::vector<double> g_a(dofs), g_b(dofs);
      for (int i = 0; i < dofs; ++i) g_b[i] = t[i] / std::sqrt(len), g_a[i] = -g_b[i];
      p.rows.push_back({a, b, g_a, g_b});
    }
    if (a % 5 == 0) p.rows.push_back({a, -1, random_block(), {}});
  }
  p.v0.resize(static_cast<std::size_t>(n * dofs));
  for (double& x : p.v0) x = normal(rng);
  return p;
}

// The problem's system, its bodies then padding bodies of the given sizes (no constraint, velocity 0).
ImpactSystem build(const Problem& p, const std::vector<int>& padding) {
  ImpactSystem s;
  for (const auto& m : p.mass) s.add_body(p.dofs, m);
  for (int d : padding) s.add_point_mass(d, 1.0);
  for (const Row& r : p.rows) s.add_constraint(r.a, r.g_a, r.b, r.g_b);
  s.finish();
  return s;
}

void expect_same_bits(const Problem& p, const std::vector<int>& uniform, const std::vector<int>& mixed,
                      const GaussSeidelOptions& o) {
  const ImpactSystem fast = build(p, uniform), generic = build(p, mixed);
  ASSERT_EQ(fast.dofs(), generic.dofs());
  std::vector<double> v_fast = p.v0, v_generic = p.v0;
  v_fast.resize(fast.dofs(), 0.0);
  v_generic.resize(generic.dofs(), 0.0);
  const Resolution a = gauss_seidel(fast, v_fast, o), b = gauss_seidel(generic, v_generic, o);
  EXPECT_GT(a.reflections, fast.constraints() / 4);  // many choices of the next constraint to agree on
  EXPECT_EQ(a.reflections, b.reflections);
  EXPECT_EQ(a.iterations, b.iterations);
  EXPECT_EQ(a.renormalisations, b.renormalisations);
  EXPECT_EQ(a.terminated, b.terminated);
  for (std::size_t i = 0; i < v_fast.size(); ++i) EXPECT_EQ(v_fast[i], v_generic[i]) << "dof " << i;
  for (std::size_t c = 0; c < a.impulses.size(); ++c) EXPECT_EQ(a.impulses[c], b.impulses[c]) << "constraint " << c;
}

}  // namespace

TEST(ImpactGaussSeidelKernels, FixedSizeMatchesGenericBitForBit) {
  std::mt19937_64 rng(23);
  struct Case {
    int dofs, side;
    bool general;
    std::vector<int> uniform, mixed;  // padding of equal total size
  };
  const Case cases[] = {{1, 60, false, {1, 1}, {2}},   {2, 8, false, {2}, {1, 1}},  {2, 8, true, {2}, {1, 1}},
                        {3, 4, false, {3}, {1, 2}},    {3, 4, true, {3}, {2, 1}},   {6, 3, true, {6}, {3, 3}}};
  for (const Case& k : cases) {
    for (int order = 0; order < 3; ++order) {
      for (double restitution : {1.0, 0.5}) {
        SCOPED_TRACE("dofs " + std::to_string(k.dofs) + (k.general ? " general" : " balls") + ", order " +
                     std::to_string(order) + ", restitution " + std::to_string(restitution));
        const Problem p = lattice(k.dofs, k.side, k.general, rng);
        GaussSeidelOptions o;
        o.order = static_cast<GaussSeidelOrder>(order);
        o.seed = 5;
        o.restitution = restitution;
        o.resolve.tolerance = 1e-10;
        o.resolve.max_reflections = 200000;  // random blocks may lock: both paths then stop at the same cap
        expect_same_bits(p, k.uniform, k.mixed, o);
      }
    }
  }
}

}  // namespace test_impact_gauss_seidel_kernels
