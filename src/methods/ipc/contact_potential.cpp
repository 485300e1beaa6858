#include "percussion/methods/ipc/contact_potential.hpp"

#include <algorithm>
#include <limits>

#include "percussion/methods/ipc/contact_step_bound.hpp"
#include "percussion/methods/ipc/contact_stiffness.hpp"

namespace percussion::ipc {

ContactPotential::ContactPotential(const ElasticSystem& system, const IpcScene& scene, ::Vec rows)
    : system_(system), assembly_(system.comm(), rows, system.dim()) {
  enabled_ = !scene.planes.empty() || scene.bodies.size() > 1 || scene.contact.self_contact;
  mu_ = scene.contact.friction;
  friction_velocity_ = scene.contact.friction_velocity;
  kappa_ = scene.contact.barrier_stiffness.value_or(0.0);
  adaptive_ = !scene.contact.barrier_stiffness;
  options_.dhat = scene.contact.dhat.value_or(1e-3 * system.bounding_diagonal());
  options_.self_contact = scene.contact.self_contact;
  for (const Plane& p : scene.planes) options_.planes.push_back({p.point, p.normal});
  if (!enabled_) return;
  surface_ = build_contact_surface(system.comm(), system.mesh());
  // κ_min needs the average nodal mass: ½ vᵀMv with v = e_x everywhere is half the total mass.
  std::vector<double> zero(system.rest().size(), 0.0), unit(system.rest().size(), 0.0);
  for (std::size_t k = 0; k < unit.size(); k += static_cast<std::size_t>(system.dim())) unit[k] = 1.0;
  const double mass = 2.0 * system.totals(zero, unit).kinetic;
  const double average_mass = mass / (static_cast<double>(system.global_dofs()) / system.dim());
  kappa_min_ = min_barrier_stiffness(system.bounding_diagonal(), options_.dhat * options_.dhat, average_mass);
  const PetscInt nv = system.mesh().local_vertex_count();
  vertex_dof_.resize(static_cast<std::size_t>(nv));
  for (PetscInt v = 0; v < nv; ++v)
    vertex_dof_[static_cast<std::size_t>(v)] = system.node_prescribed(v) ? -1 : system.node_dof(v);
}

void ContactPotential::vertex_values(const std::vector<double>& u, bool add_rest, std::vector<double>& out) const {
  const std::size_t n = static_cast<std::size_t>(system_.mesh().local_vertex_count() * system_.dim());
  out.resize(n);
  const std::vector<double>& rest = system_.rest();
  for (std::size_t k = 0; k < n; ++k) out[k] = u[k] + (add_rest ? rest[k] : 0.0);
}

void ContactPotential::build(const std::vector<double>& u, const std::vector<double>* step) {
  vertex_values(u, true, x_);
  if (step) vertex_values(*step, false, step_);
  else step_.clear();
  set_.build(system_.comm(), surface_, x_, step_, vertex_dof_, options_);
}

void ContactPotential::update(const std::vector<double>& u) {
  vertex_values(u, true, x_);
  set_.update_positions(x_);
  if (friction_) friction_->update_positions(x_);
}

void ContactPotential::initialise_kappa(::Vec other_gradient) {
  kappa_ = initial_contact_stiffness(set_, other_gradient, kappa_min_).kappa;
}

void ContactPotential::adapt_kappa() {
  if (!enabled_ || !adaptive_) return;
  const double d = min_distance();
  const double diagonal = system_.bounding_diagonal();
  if (d * d < 1e-9 * diagonal * diagonal && d < previous_min_distance_)
    kappa_ = std::min(2.0 * kappa_, 100.0 * kappa_min_);
  previous_min_distance_ = d;
}

void ContactPotential::freeze_friction(const std::vector<double>& u_prev, double dt) {
  friction_.reset();
  if (mu_ <= 0.0 || dt <= 0.0 || !enabled_) return;
  build(u_prev, nullptr);
  friction_ = std::make_unique<FrictionSet>();
  friction_->freeze(set_, kappa_, mu_, friction_velocity_ * dt);
}

ContactParts ContactPotential::energy() const {
  ContactParts parts;
  if (!enabled_) return parts;
  parts.barrier = set_.energy(kappa_);
  if (friction_) parts.friction = friction_->energy();
  return parts;
}

void ContactPotential::add_gradient(::Vec gradient) {
  if (!enabled_) return;
  assembly_.add([&](const ContactBlock& add) {
    set_.for_each_gradient(kappa_, add);
    if (friction_) friction_->for_each_gradient(add);
  }, gradient);
}

void ContactPotential::add_hessian(::Mat hessian) {
  if (!enabled_) return;
  assembly_.add([&](const ContactBlock& add) {
    set_.for_each_hessian(kappa_, true, add);
    if (friction_) friction_->for_each_hessian(add);
  }, hessian);
}

double ContactPotential::max_step(const std::vector<double>& step) const {
  if (!enabled_) return 1.0;
  std::vector<double> s;
  vertex_values(step, false, s);
  // Each pair keeps a tenth of its gap: the barrier stays finite at every trial of the line search.
  return ipc::max_step(set_, s, geometry::CcdOptions{}, 0.1);
}

std::int64_t ContactPotential::active_pairs() const {
  std::int64_t n = 0;
  const double dhat2 = options_.dhat * options_.dhat;
  if (enabled_)
    for (const ContactPair& p : set_.pairs())
      n += pair_distance2(p, set_.dim(), set_.vertices().positions(), options_.planes) < dhat2;
  MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_INT64_T, MPI_SUM, system_.comm());
  return n;
}

IntersectionReport ContactPotential::intersections(const std::vector<double>& u) const {
  std::vector<double> x;
  vertex_values(u, true, x);
  return find_intersections(system_.comm(), surface_, x, options_.planes);
}

std::int64_t ContactPotential::friction_pairs() const {
  std::int64_t n = friction_ ? static_cast<std::int64_t>(friction_->size()) : 0;
  MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_INT64_T, MPI_SUM, system_.comm());
  return n;
}

}  // namespace percussion::ipc
