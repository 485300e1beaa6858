#pragma once
// The per-constraint arithmetic of pairwise Gauss–Seidel: the slope n_cᵀv, the update v += λM⁻¹n_c and the
// constraints sharing a body with c. Generic over ImpactSystem's variable-length blocks, or fixed-size when every
// body has the same D degrees of freedom (ball packs), where the blocks unroll and one compact record per constraint
// replaces three lookups. Both do the same floating-point operations in the same order: results are bit-identical.
#include <cmath>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "percussion/physics/impact/impact_system.hpp"

namespace percussion::impact::gauss_seidel_detail {

class GenericKernel {
 public:
  explicit GenericKernel(const ImpactSystem& system) : sys_(system) {}
  double slope(int c, const double* v) const { return sys_.slope(c, v); }
  void apply(int c, double lambda, double* v) const { sys_.apply(c, lambda, v); }
  void prefetch(int) const {}
  void prefetch_neighbours(int) const {}
  // c itself, the constraints on its body a, then those on its body b that do not touch a (each once).
  template <class F>
  void for_each_neighbour(int c, F&& f) const {
    const int a = sys_.end_a(c), b = sys_.end_b(c);
    for (int j : sys_.constraints_of(a)) f(j);
    if (b >= 0) {
      for (int j : sys_.constraints_of(b)) {
        if (sys_.end_a(j) != a && sys_.end_b(j) != a) f(j);
      }
    }
  }

 private:
  const ImpactSystem& sys_;
};

// Every body of `system` has D degrees of freedom, so body k's block starts at k·D. Antisymmetric: every two-sided
// constraint has n_b = −n_a exactly (two balls), so a record keeps n_a only and subtracts n_aᵀv_b, which rounds as
// adding (−n_a)ᵀv_b does.
template <int D, bool Antisymmetric>
class FixedKernel {
 public:
  explicit FixedKernel(const ImpactSystem& system) : sys_(system), rows_(system.constraints()) {
    const std::size_t m = rows_.size();
    impulse_.resize(2 * D * m, 0.0);
    for (std::size_t c = 0; c < m; ++c) {
      Row& r = rows_[c];
      const int ci = static_cast<int>(c);
      r.a = system.end_a(ci);
      r.b = system.end_b(ci);
      double* w = impulse_.data() + 2 * D * c;
      for (int end = 0; end < (r.b >= 0 ? 2 : 1); ++end) {
        const auto n = system.gradient_block(ci, end);
        const auto m_inv_n = system.impulse_block(ci, end);
        for (int i = 0; i < D; ++i) {
          if (end == 0) r.n_a[i] = n[i];
          else if constexpr (!Antisymmetric) r.n_b[i] = n[i];
          w[end * D + i] = m_inv_n[i];
        }
      }
    }
  }
  // Whether every two-sided constraint of `system` has n_b = −n_a bit for bit.
  static bool applies(const ImpactSystem& system) {
    for (int c = 0; c < system.constraints(); ++c) {
      if (system.end_b(c) < 0) continue;
      const auto n_a = system.gradient_block(c, 0), n_b = system.gradient_block(c, 1);
      for (int i = 0; i < D; ++i)
        if (!(n_b[i] == -n_a[i]) || std::signbit(n_b[i]) == std::signbit(n_a[i])) return false;
    }
    return true;
  }

  // Sums in the order of ImpactSystem::slope: body a's entries, then body b's.
  double slope(int c, const double* v) const {
    const Row& r = rows_[c];
    const double* va = v + static_cast<std::ptrdiff_t>(r.a) * D;
    double s = 0.0;
    for (int i = 0; i < D; ++i) s += r.n_a[i] * va[i];
    if (r.b >= 0) {
      const double* vb = v + static_cast<std::ptrdiff_t>(r.b) * D;
      if constexpr (Antisymmetric) {
        for (int i = 0; i < D; ++i) s -= r.n_a[i] * vb[i];
      } else {
        for (int i = 0; i < D; ++i) s += r.n_b[i] * vb[i];
      }
    }
    return s;
  }
  void apply(int c, double lambda, double* v) const {
    const Row& r = rows_[c];
    const double* w = impulse_.data() + 2 * D * static_cast<std::size_t>(c);
    double* va = v + static_cast<std::ptrdiff_t>(r.a) * D;
    for (int i = 0; i < D; ++i) va[i] += lambda * w[i];
    if (r.b >= 0) {
      double* vb = v + static_cast<std::ptrdiff_t>(r.b) * D;
      for (int i = 0; i < D; ++i) vb[i] += lambda * w[D + i];
    }
  }
  // c is violated and likely reflected soon: its M⁻¹n_c, which no slope test reads, is fetched meanwhile.
  void prefetch(int c) const { __builtin_prefetch(impulse_.data() + 2 * D * static_cast<std::size_t>(c)); }
  // The records that the neighbour tests after reflecting c read: requested together, before the update of v.
  void prefetch_neighbours(int c) const {
    const int a = rows_[c].a, b = rows_[c].b;
    for (int j : sys_.constraints_of(a)) __builtin_prefetch(&rows_[j]);
    if (b >= 0)
      for (int j : sys_.constraints_of(b)) __builtin_prefetch(&rows_[j]);
  }
  template <class F>
  void for_each_neighbour(int c, F&& f) const {
    const int a = rows_[c].a, b = rows_[c].b;
    for (int j : sys_.constraints_of(a)) f(j);
    if (b >= 0) {
      for (int j : sys_.constraints_of(b)) {
        if (rows_[j].a != a && rows_[j].b != a) f(j);
      }
    }
  }

 private:
  // What a slope test reads, in one small record: the neighbour tests after each reflection dominate the loop, and
  // the records behind the lowest-index front must stay in cache.
  struct TwoBlocks {
    int a = 0, b = -1;  // bodies (b = -1: one-sided)
    double n_a[D] = {}, n_b[D] = {};
  };
  struct OneBlock {
    int a = 0, b = -1;
    double n_a[D] = {};
  };
  using Row = std::conditional_t<Antisymmetric, OneBlock, TwoBlocks>;
  const ImpactSystem& sys_;
  std::vector<Row> rows_;
  std::vector<double> impulse_;  // M⁻¹n_c on a then on b, 2D entries per constraint
};

// The common number of degrees of freedom of every body, or 0 when they differ (or there is no body).
inline int uniform_body_dofs(const ImpactSystem& system) {
  if (system.bodies() == 0) return 0;
  const int d = system.body_dofs(0);
  for (int k = 1; k < system.bodies(); ++k)
    if (system.body_dofs(k) != d) return 0;
  return d;
}

}  // namespace percussion::impact::gauss_seidel_detail
