#pragma once
// Small impact problems of notes 003 §5 shared by the operator tests, and the invariants every resolution keeps.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "percussion/physics/impact/impact_system.hpp"
#include "percussion/physics/impact/resolution.hpp"

namespace percussion::impact::testing {

// A 1D chain of touching balls with the given masses: constraint k joins balls k and k+1 (ball k on the left).
inline ImpactSystem chain(const std::vector<double>& masses) {
  ImpactSystem s;
  for (double m : masses) s.add_point_mass(1, m);
  const double left[] = {-1.0}, right[] = {1.0};
  for (int k = 0; k + 1 < static_cast<int>(masses.size()); ++k) s.add_constraint(k, left, k + 1, right);
  s.finish();
  return s;
}

// 2D balls at `centres` (x, y pairs) with masses; a constraint for every pair (a < b) closer than 2 radius + 1e-9,
// in (a, b) order, then the walls: each wall (point px, py, normal nx, ny) constrains every ball within reach.
struct Wall2 {
  double px, py, nx, ny;
};
inline ImpactSystem balls2d(const std::vector<double>& centres, const std::vector<double>& masses, double radius,
                            const std::vector<Wall2>& walls = {}) {
  ImpactSystem s;
  const int n = static_cast<int>(masses.size());
  for (double m : masses) s.add_point_mass(2, m);
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      const double dx = centres[2 * b] - centres[2 * a], dy = centres[2 * b + 1] - centres[2 * a + 1];
      const double d = std::hypot(dx, dy);
      if (d > 2 * radius + 1e-9) continue;
      const double ga[] = {-dx / d, -dy / d}, gb[] = {dx / d, dy / d};
      s.add_constraint(a, ga, b, gb);
    }
    for (const Wall2& w : walls) {
      const double gap = (centres[2 * a] - w.px) * w.nx + (centres[2 * a + 1] - w.py) * w.ny - radius;
      if (gap > 1e-9) continue;
      const double g[] = {w.nx, w.ny};
      s.add_constraint(a, g);
    }
  }
  s.finish();
  return s;
}

// Notes 003 §5 case 18's random packings: a side × side hexagonal patch of touching unit balls (up to six contacts
// each), masses 10^(3U) for U uniform in [0, 1) (ratios up to 1e3), then standard normal velocities.
struct Packing {
  ImpactSystem system;
  std::vector<double> v0;
};
inline Packing random_hex_patch(int side, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(0, 1);
  std::normal_distribution<double> normal;
  std::vector<double> centres, masses;
  for (int i = 0; i < side; ++i)
    for (int j = 0; j < side; ++j) {
      centres.push_back(2.0 * i + (j % 2));
      centres.push_back(std::sqrt(3.0) * j);
      masses.push_back(std::pow(10.0, 3 * unit(rng)));
    }
  Packing p{balls2d(centres, masses, 1.0), {}};
  p.v0.resize(static_cast<std::size_t>(p.system.dofs()));
  for (double& x : p.v0) x = normal(rng);
  return p;
}

// Notes 003 §5 invariants: terminated, eps-feasible, elastic energy to 1e-14, impulses ≥ 0.
inline void expect_resolved(const ImpactSystem& s, const std::vector<double>& v0, const std::vector<double>& v,
                            const Resolution& r, double eps, bool elastic = true) {
  EXPECT_TRUE(r.terminated) << r.reason;
  const double norm = std::sqrt(s.energy_norm_squared(v.data()));
  for (int c = 0; c < s.constraints(); ++c) {
    EXPECT_GE(s.slope(c, v.data()), -eps * norm - 1e-300) << "constraint " << c;
    EXPECT_GE(r.impulses[c], 0.0) << "constraint " << c;
  }
  if (elastic) {
    const double e0 = s.energy_norm_squared(v0.data()), e1 = s.energy_norm_squared(v.data());
    EXPECT_LE(std::abs(e1 - e0), 1e-14 * e0) << "energy " << e0 << " -> " << e1;
  }
}

// Linear momentum Σ m v per axis for point masses of `dim` components.
inline std::vector<double> momentum(const ImpactSystem& s, const std::vector<double>& v, int dim) {
  std::vector<double> p(dim, 0.0);
  for (int k = 0; k < s.bodies(); ++k) {
    for (int i = 0; i < dim; ++i) {
      std::vector<double> e(s.dofs(), 0.0);
      e[s.body_offset(k) + i] = 1.0;
      p[i] += s.inner(e.data(), v.data());
    }
  }
  return p;
}

}  // namespace percussion::impact::testing
