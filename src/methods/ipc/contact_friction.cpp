#include "percussion/methods/ipc/contact_friction.hpp"

#include <cmath>
#include <unordered_map>

namespace percussion::ipc {

void FrictionSet::freeze(const ContactSet& set, double kappa, double mu, double eta) {
  comm_ = set.comm();
  dim_ = set.dim();
  mu_ = mu;
  eta_ = eta;
  const double dhat2 = set.options().dhat * set.options().dhat;
  const ContactVertices& all = set.vertices();
  const auto d = static_cast<std::size_t>(dim_);
  std::vector<ContactVertices::Entry> entries;
  std::vector<double> positions;
  std::unordered_map<std::int32_t, std::int32_t> renumber;  // set's vertex → ours
  pairs_.clear();
  lagged_.clear();
  previous_.clear();
  for (const ContactPair& p : set.pairs()) {
    LaggedFriction<12, 2> f = pair_lagged_friction(p, dim_, all.positions(), set.options().planes, dhat2, kappa);
    if (f.normal_force == 0.0) continue;
    ContactPair q = p;
    for (int k = 0; k < stencil_size(p.type); ++k) {
      const std::int32_t v = p.vertex[std::size_t(k)];
      auto [it, fresh] = renumber.try_emplace(v, static_cast<std::int32_t>(entries.size()));
      if (fresh) {
        entries.push_back(all.entry(std::size_t(v)));
        positions.insert(positions.end(), all.positions().begin() + v * d, all.positions().begin() + (v + 1) * d);
      }
      q.vertex[std::size_t(k)] = it->second;
    }
    pairs_.push_back(q);
    lagged_.push_back(f);
  }
  vertices_.assign(comm_, dim_, std::move(entries), std::move(positions));
  for (std::size_t k = 0; k < pairs_.size(); ++k) previous_.push_back(stencil(k));
}

Vec<12> FrictionSet::stencil(std::size_t k) const {
  Vec<12> x = Vec<12>::Zero();
  const ContactPair& p = pairs_[k];
  const auto x_all = vertices_.positions();
  for (int i = 0; i < stencil_size(p.type); ++i)
    for (int c = 0; c < dim_; ++c)
      x[i * dim_ + c] = x_all[static_cast<std::size_t>(p.vertex[std::size_t(i)] * dim_ + c)];
  return x;
}

PairEnergy<12> FrictionSet::evaluate(std::size_t k) const {
  return friction_potential<12, 2>(lagged_[k], stencil(k), previous_[k], mu_, eta_);
}

double FrictionSet::energy() const {
  parallel::ExactSum sum;
  for (std::size_t k = 0; k < pairs_.size(); ++k) sum.add(evaluate(k).value);
  return global_energy(comm_, sum, false);
}

void FrictionSet::for_each_gradient(const ContactBlock& add) const {
  std::int64_t gid[4];
  PetscInt dof[4];
  for (std::size_t k = 0; k < pairs_.size(); ++k)
    add(stencil_ids(vertices_, pairs_[k], gid, dof), gid, dof, evaluate(k).gradient.data());
}

void FrictionSet::for_each_hessian(const ContactBlock& add) const {
  std::int64_t gid[4];
  PetscInt dof[4];
  double block[144];
  for (std::size_t k = 0; k < pairs_.size(); ++k) {
    const int n = stencil_ids(vertices_, pairs_[k], gid, dof);
    hessian_block(evaluate(k).hessian, n * dim_, false, block);
    add(n, gid, dof, block);
  }
}

PetscErrorCode FrictionSet::add_gradient(::Vec gradient) const {
  return add_blocks([&](const ContactBlock& add) { for_each_gradient(add); }, dim_, gradient);
}

PetscErrorCode FrictionSet::add_hessian(::Mat hessian) const {
  return add_blocks([&](const ContactBlock& add) { for_each_hessian(add); }, dim_, hessian);
}

}  // namespace percussion::ipc
