// The impact problem's storage: mass blocks, normalised constraint gradients, body → constraint table.
#include "percussion/physics/impact/impact_system.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <cmath>
#include <stdexcept>
#include <string>

namespace percussion::impact {

namespace {

using MatX = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

}  // namespace

int ImpactSystem::add_body(int dofs, std::span<const double> mass_block) {
  if (dofs > 6) throw std::invalid_argument("impact: a body has 1 to 6 degrees of freedom");
  return store_body(dofs, mass_block);
}

int ImpactSystem::add_merged_body(int dofs, std::span<const double> mass_block) {
  return store_body(dofs, mass_block);
}

int ImpactSystem::store_body(int dofs, std::span<const double> mass_block) {
  if (dofs < 1 || mass_block.size() != static_cast<std::size_t>(dofs) * static_cast<std::size_t>(dofs)) {
    throw std::invalid_argument("impact: a body has at least 1 degree of freedom and a dofs x dofs mass block");
  }
  const Eigen::Map<const MatX> m(mass_block.data(), dofs, dofs);
  Eigen::LLT<MatX> llt(m);
  if (llt.info() != Eigen::Success) throw std::invalid_argument("impact: a mass block is not positive definite");
  const MatX inv = llt.solve(MatX::Identity(dofs, dofs));
  block_offset_.push_back(static_cast<int>(mass_.size()));
  mass_.insert(mass_.end(), mass_block.begin(), mass_block.end());
  inverse_mass_.insert(inverse_mass_.end(), inv.data(), inv.data() + dofs * dofs);
  body_dofs_.push_back(dofs);
  body_offset_.push_back(total_dofs_);
  total_dofs_ += dofs;
  return static_cast<int>(body_dofs_.size()) - 1;
}

int ImpactSystem::add_point_mass(int dofs, double mass) {
  std::vector<double> block(static_cast<std::size_t>(dofs * dofs), 0.0);
  for (int i = 0; i < dofs; ++i) block[i * dofs + i] = mass;
  return add_body(dofs, block);
}

int ImpactSystem::add_constraint(int a, std::span<const double> g_a, int b, std::span<const double> g_b) {
  const auto check_end = [&](int k, std::span<const double> g) {
    if (k < 0 || k >= bodies() || g.size() != static_cast<std::size_t>(body_dofs_[k])) {
      throw std::invalid_argument("impact: constraint end " + std::to_string(k) + " is not a body or its block has "
                                  "the wrong size");
    }
  };
  check_end(a, g_a);
  if (b >= 0) {
    check_end(b, g_b);
    if (b == a) throw std::invalid_argument("impact: a constraint joins a body to itself");
  }
  Ends e;
  const auto store = [&](int k, std::span<const double> g, int& off, int& len, int& n_at, int& w_at) -> double {
    const int dofs = body_dofs_[k];
    off = body_offset_[k];
    len = dofs;
    n_at = static_cast<int>(coef_.size());
    coef_.insert(coef_.end(), g.begin(), g.end());
    w_at = static_cast<int>(coef_.size());
    const Eigen::Map<const MatX> minv(inverse_mass_.data() + block_offset_[k], dofs, dofs);
    const Eigen::Map<const Eigen::VectorXd> gv(g.data(), dofs);
    const Eigen::VectorXd w = minv * gv;
    coef_.insert(coef_.end(), w.data(), w.data() + dofs);
    return gv.dot(w);
  };
  double metric = store(a, g_a, e.off_a, e.len_a, e.n_a, e.w_a);
  if (b >= 0) metric += store(b, g_b, e.off_b, e.len_b, e.n_b, e.w_b);
  if (!(metric > 0.0) || !std::isfinite(metric)) {
    throw std::invalid_argument("impact: a constraint gradient is zero or not finite");
  }
  const double scale = 1.0 / std::sqrt(metric);
  for (int i = 0; i < e.len_a; ++i) coef_[e.n_a + i] *= scale, coef_[e.w_a + i] *= scale;
  for (int i = 0; i < e.len_b; ++i) coef_[e.n_b + i] *= scale, coef_[e.w_b + i] *= scale;
  end_a_.push_back(a);
  end_b_.push_back(b);
  ends_.push_back(e);
  raw_metric_.push_back(metric);
  return static_cast<int>(end_a_.size()) - 1;
}

std::vector<double> ImpactSystem::gradient(int c) const {
  std::vector<double> g(total_dofs_, 0.0);
  const Ends& e = ends_[c];
  for (int i = 0; i < e.len_a; ++i) g[e.off_a + i] = coef_[e.n_a + i];
  for (int i = 0; i < e.len_b; ++i) g[e.off_b + i] = coef_[e.n_b + i];
  return g;
}

std::vector<double> ImpactSystem::impulse_direction(int c) const {
  std::vector<double> w(total_dofs_, 0.0);
  apply(c, 1.0, w.data());
  return w;
}

double ImpactSystem::coupling(int i, int j) const {
  const std::vector<double> w = impulse_direction(j);
  return slope(i, w.data());
}

double ImpactSystem::body_energy_squared(int k, const double* v) const {
  const int dofs = body_dofs_[k];
  const double* m = mass_.data() + block_offset_[k];
  const double* vk = v + body_offset_[k];
  double e = 0.0;
  for (int r = 0; r < dofs; ++r) {
    double row = 0.0;
    for (int c = 0; c < dofs; ++c) row += m[r * dofs + c] * vk[c];
    e += vk[r] * row;
  }
  return e;
}

double ImpactSystem::energy_norm_squared(const double* v) const { return inner(v, v); }

double ImpactSystem::inner(const double* v, const double* w) const {
  double s = 0.0;
  for (int k = 0; k < bodies(); ++k) {
    const int dofs = body_dofs_[k];
    const double* m = mass_.data() + block_offset_[k];
    const double* vk = v + body_offset_[k];
    const double* wk = w + body_offset_[k];
    for (int r = 0; r < dofs; ++r) {
      double row = 0.0;
      for (int c = 0; c < dofs; ++c) row += m[r * dofs + c] * wk[c];
      s += vk[r] * row;
    }
  }
  return s;
}

void ImpactSystem::apply_inverse_mass(const double* f, double* v) const {
  for (int k = 0; k < bodies(); ++k) {
    const int dofs = body_dofs_[k];
    const double* minv = inverse_mass_.data() + block_offset_[k];
    for (int r = 0; r < dofs; ++r) {
      double row = 0.0;
      for (int c = 0; c < dofs; ++c) row += minv[r * dofs + c] * f[body_offset_[k] + c];
      v[body_offset_[k] + r] = row;
    }
  }
}

void ImpactSystem::finish() {
  adjacency_start_.assign(body_dofs_.size() + 1, 0);
  for (int c = 0; c < constraints(); ++c) {
    ++adjacency_start_[end_a_[c] + 1];
    if (end_b_[c] >= 0) ++adjacency_start_[end_b_[c] + 1];
  }
  for (std::size_t k = 0; k < body_dofs_.size(); ++k) adjacency_start_[k + 1] += adjacency_start_[k];
  adjacency_.assign(adjacency_start_.back(), 0);
  std::vector<int> fill(adjacency_start_.begin(), adjacency_start_.end() - 1);
  for (int c = 0; c < constraints(); ++c) {  // ascending c, so each body's list is sorted
    adjacency_[fill[end_a_[c]]++] = c;
    if (end_b_[c] >= 0) adjacency_[fill[end_b_[c]]++] = c;
  }
}

}  // namespace percussion::impact
