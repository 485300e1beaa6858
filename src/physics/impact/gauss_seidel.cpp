// Pairwise Gauss–Seidel with tolerance and renormalisation (notes 003 Alg. B, G, J1).
#include "percussion/physics/impact/gauss_seidel.hpp"

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <queue>
#include <random>
#include <string>
#include <utility>

#include "gauss_seidel_kernels.hpp"

namespace percussion::impact {

namespace {

using gauss_seidel_detail::FixedKernel;
using gauss_seidel_detail::GenericKernel;

// The iterate, its tracked norm and the bookkeeping shared by the three orders; Kernel does the per-constraint
// arithmetic (gauss_seidel_kernels.hpp).
template <class Kernel>
class Iterate {
 public:
  Iterate(const ImpactSystem& system, std::vector<double>& v, const GaussSeidelOptions& options)
      : sys_(system), kernel_(system), v_(v), opt_(options), elastic_(options.restitution >= 1.0) {
    energy_ = sys_.energy_norm_squared(v_.data());
    norm0_ = std::sqrt(energy_);
    // Renormalising costs O(d): once every d reflections keeps it O(1) per reflection and the drift between two
    // renormalisations at O(d u), which is what the termination proof needs (notes 003 Lemma A.1).
    period_ = std::max<std::int64_t>(16, system.dofs());
    result_.impulses.assign(system.constraints(), 0.0);
    result_.norm_before = norm0_;
    update_threshold();
  }

  double threshold() const { return threshold_; }
  double slope(int c) const { return kernel_.slope(c, v_.data()); }
  bool violated(int c) const { return slope(c) < threshold(); }
  // Whether c is violated, and its slope in `s` for the reflection that follows.
  bool violated(int c, double& s) const {
    s = slope(c);
    return s < threshold();
  }
  bool capped() const { return result_.reflections >= opt_.resolve.max_reflections; }

  void reflect(int c, double s) {
    kernel_.prefetch_neighbours(c);
    const double lambda = -(1.0 + opt_.restitution) * s;
    kernel_.apply(c, lambda, v_.data());
    result_.impulses[c] += lambda;
    ++result_.reflections;
    if (c <= last_) ++result_.iterations;  // a new pass through the constraint order begins
    last_ = c;
    // ‖v + λM⁻¹n‖²_M = ‖v‖²_M + 2λs + λ² with nᵀM⁻¹n = 1: zero change when elastic; settle() recomputes it exactly.
    const double energy = energy_;
    energy_ += lambda * (lambda + 2.0 * s);
    if (++since_ >= period_) settle();
    else if (energy_ != energy) update_threshold();  // an elastic reflection adds exactly 0: no sqrt to redo
  }

  // Exact norm; rescaled to the initial one when the operator is elastic and renormalisation is on.
  void settle() {
    since_ = 0;
    energy_ = sys_.energy_norm_squared(v_.data());
    if (elastic_ && opt_.resolve.renormalise && energy_ > 0.0) {
      const double scale = norm0_ / std::sqrt(energy_);
      for (double& x : v_) x *= scale;
      energy_ = sys_.energy_norm_squared(v_.data());
      ++result_.renormalisations;
    }
    update_threshold();
  }
  void update_threshold() { threshold_ = -opt_.resolve.tolerance * std::sqrt(std::max(energy_, 0.0)); }

  int first_violated() const {
    for (int c = 0; c < sys_.constraints(); ++c) {
      if (violated(c)) return c;
    }
    return -1;
  }

  Resolution finish(bool terminated) {
    result_.terminated = terminated;
    result_.reason = terminated ? "feasible"
                                : "diagnostic cap of " + std::to_string(opt_.resolve.max_reflections) +
                                      " reflections reached with constraints still violated";
    result_.norm_after = std::sqrt(sys_.energy_norm_squared(v_.data()));
    return std::move(result_);
  }

  template <class F>
  void for_each_neighbour(int c, F&& f) const {
    kernel_.for_each_neighbour(c, std::forward<F>(f));
  }

  const ImpactSystem& system() const { return sys_; }
  // What reflecting c will write: fetched when c is found violated, ahead of its turn.
  void prefetch(int c) const {
    kernel_.prefetch(c);
    __builtin_prefetch(result_.impulses.data() + c);
  }

 private:
  const ImpactSystem& sys_;
  Kernel kernel_;
  std::vector<double>& v_;
  const GaussSeidelOptions& opt_;
  bool elastic_;
  double energy_ = 0.0, norm0_ = 0.0, threshold_ = 0.0;
  std::int64_t period_ = 16, since_ = 0;
  int last_ = INT_MAX;
  Resolution result_;
};

// The lowest-index violated constraint in O(1): a two-level bitset of the violated set (reflecting c changes the
// status of its neighbours only), so a reflection far down the order costs no rescan of the feasible ones before.
template <class Iterate>
class LowestIndex {
 public:
  explicit LowestIndex(Iterate& it)
      : it_(it), words_((it.system().constraints() + 63) / 64, 0), summary_((words_.size() + 63) / 64, 0) {}
  void reset() {
    std::fill(words_.begin(), words_.end(), 0);
    std::fill(summary_.begin(), summary_.end(), 0);
    first_ = summary_.size();
    for (int c = 0, m = it_.system().constraints(); c < m; ++c)
      if (it_.violated(c)) set(c);
  }
  int next(double& slope) {
    for (std::size_t& s = first_; s < summary_.size(); ++s) {
      while (summary_[s] != 0) {
        const std::size_t w = 64 * s + static_cast<std::size_t>(std::countr_zero(summary_[s]));
        const int c = static_cast<int>(64 * w + static_cast<std::size_t>(std::countr_zero(words_[w])));
        if (it_.violated(c, slope)) return c;
        clear(c);  // feasible again under a threshold that moved with the norm
      }
    }
    return -1;
  }
  void reflected(int c) {
    it_.for_each_neighbour(c, [&](int j) {
      if (it_.violated(j)) {
        set(j);
        it_.prefetch(j);
      } else {
        clear(j);
      }
    });
  }

 private:
  void set(int c) {
    const std::size_t w = static_cast<std::size_t>(c) / 64;
    words_[w] |= std::uint64_t{1} << (c % 64);
    summary_[w / 64] |= std::uint64_t{1} << (w % 64);
    first_ = std::min(first_, w / 64);
  }
  void clear(int c) {
    const std::size_t w = static_cast<std::size_t>(c) / 64;
    words_[w] &= ~(std::uint64_t{1} << (c % 64));
    if (words_[w] == 0) summary_[w / 64] &= ~(std::uint64_t{1} << (w % 64));
  }
  Iterate& it_;
  std::vector<std::uint64_t> words_, summary_;
  std::size_t first_ = 0;  // summary_ words before it are zero: next() scans from there
};

template <class Iterate>
class MostViolated {
 public:
  explicit MostViolated(Iterate& it) : it_(it), stamp_(it.system().constraints(), 0) {}
  void reset() {
    heap_ = {};
    for (int c = 0; c < it_.system().constraints(); ++c) push(c);
  }
  int next(double& slope) {
    while (!heap_.empty()) {
      const Entry e = heap_.top();
      heap_.pop();
      if (e.stamp != stamp_[e.c]) continue;  // superseded by a later push
      ++stamp_[e.c];
      if (it_.violated(e.c, slope)) return e.c;
    }
    return -1;
  }
  void reflected(int c) {
    it_.for_each_neighbour(c, [&](int j) { push(j); });
  }

 private:
  struct Entry {
    double slope;
    int c;
    unsigned stamp;
    bool operator<(const Entry& o) const {  // priority_queue pops the largest: most negative slope, then lowest c
      return slope != o.slope ? slope > o.slope : c > o.c;
    }
  };
  void push(int c) {
    ++stamp_[c];
    const double s = it_.slope(c);
    if (s < it_.threshold()) heap_.push({s, c, stamp_[c]});
  }
  Iterate& it_;
  std::vector<unsigned> stamp_;
  std::priority_queue<Entry> heap_;
};

template <class Iterate>
class Random {
 public:
  Random(Iterate& it, std::uint64_t seed) : it_(it), rng_(seed), where_(it.system().constraints(), -1) {}
  void reset() {
    for (int c : set_) where_[c] = -1;
    set_.clear();
    for (int c = 0; c < it_.system().constraints(); ++c) update(c);
  }
  int next(double& slope) {
    while (!set_.empty()) {
      // Modulo rather than std::uniform_int_distribution: the same sequence with every standard library.
      const int c = set_[static_cast<std::size_t>(rng_() % set_.size())];
      if (it_.violated(c, slope)) return c;
      remove(c);
    }
    return -1;
  }
  void reflected(int c) {
    it_.for_each_neighbour(c, [&](int j) { update(j); });
  }

 private:
  void update(int c) {
    const bool v = it_.violated(c);
    if (v && where_[c] < 0) {
      where_[c] = static_cast<int>(set_.size());
      set_.push_back(c);
    } else if (!v && where_[c] >= 0) {
      remove(c);
    }
  }
  void remove(int c) {
    const int at = where_[c], last = set_.back();
    set_[at] = last;
    where_[last] = at;
    set_.pop_back();
    where_[c] = -1;
  }
  Iterate& it_;
  std::mt19937_64 rng_;
  std::vector<int> set_, where_;
};

template <class Iterate, class Selector>
Resolution run(Iterate& it, Selector& select) {
  select.reset();
  for (;;) {
    double s = 0.0;
    for (int c = select.next(s); c >= 0; c = select.next(s)) {
      if (it.capped()) return it.finish(false);
      it.reflect(c, s);
      select.reflected(c);
    }
    // The threshold moved with the norm since some constraints were tested: settle the norm and check them all.
    it.settle();
    if (it.first_violated() < 0) return it.finish(true);
    select.reset();
  }
}

template <class Kernel>
Resolution run_order(const ImpactSystem& system, std::vector<double>& v, const GaussSeidelOptions& options) {
  Iterate<Kernel> it(system, v, options);
  switch (options.order) {
    case GaussSeidelOrder::most_violated: {
      MostViolated s(it);
      return run(it, s);
    }
    case GaussSeidelOrder::random: {
      Random s(it, options.seed);
      return run(it, s);
    }
    case GaussSeidelOrder::lowest_index:
    default: {
      LowestIndex s(it);
      return run(it, s);
    }
  }
}

}  // namespace

Resolution gauss_seidel(const ImpactSystem& system, std::vector<double>& v, const GaussSeidelOptions& options) {
  switch (gauss_seidel_detail::uniform_body_dofs(system)) {
    case 1: return run_order<FixedKernel<1, false>>(system, v, options);
    case 2:
      return FixedKernel<2, true>::applies(system) ? run_order<FixedKernel<2, true>>(system, v, options)
                                                   : run_order<FixedKernel<2, false>>(system, v, options);
    case 3:
      return FixedKernel<3, true>::applies(system) ? run_order<FixedKernel<3, true>>(system, v, options)
                                                   : run_order<FixedKernel<3, false>>(system, v, options);
    case 6: return run_order<FixedKernel<6, false>>(system, v, options);
    default: return run_order<GenericKernel>(system, v, options);
  }
}

}  // namespace percussion::impact
