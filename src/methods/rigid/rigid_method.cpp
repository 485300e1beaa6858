// The rigid-impact method: state, stepping, frames and observables.
#include "percussion/methods/rigid/rigid_method.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "percussion/core/error.hpp"
#include "percussion/geometry/box.hpp"
#include "percussion/io/trajectory.hpp"
#include "percussion/methods/rigid/placement.hpp"
#include "percussion/parallel/slices.hpp"
#include "percussion/physics/quaternion.hpp"

namespace percussion::rigid {

RigidMethod::RigidMethod(RigidScene scene, MPI_Comm comm, const std::string& restart_file)
    : scene_(std::move(scene)),
      comm_(comm),
      items_(comm),
      position_(items_.add_field<Eigen::Vector3d>("position")),
      velocity_(items_.add_field<Eigen::Vector3d>("velocity")),
      mass_(items_.add_field<double>("mass", false)),
      radius_(items_.add_field<double>("radius", false)),
      fixed_(items_.add_field<int>("fixed", false)),
      has_boxes_(!scene_.boxes.empty()),
      orientation_(has_boxes_ ? items_.add_field<Eigen::Vector4d>("orientation") : ball_orientation_),
      angular_velocity_(has_boxes_ ? items_.add_field<Eigen::Vector3d>("angular_velocity") : ball_angular_velocity_),
      half_extents_(has_boxes_ ? items_.add_field<Eigen::Vector3d>("half_extents", false) : ball_half_extents_) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm_, &rank);
  MPI_Comm_size(comm_, &size);
  // The scene holds this rank's slice of the bodies (create.cpp parses it so); the placement is checked across ranks.
  bodies_ = scene_.body_count;
  const std::int64_t begin = parallel::share_begin(bodies_, rank, size);
  const std::int64_t end = parallel::share_begin(bodies_, rank + 1, size);
  if (scene_.first_body != begin || static_cast<std::int64_t>(scene_.balls.size()) != end - begin)
    throw std::logic_error("rigid: the scene holds bodies [" + std::to_string(scene_.first_body) + ", +" +
                           std::to_string(scene_.balls.size()) + "), not this rank's slice");
  std::vector<std::int64_t> ids(static_cast<std::size_t>(end - begin));
  for (std::int64_t k = begin; k < end; ++k) ids[k - begin] = k;
  items_.set_owned(std::move(ids));
  if (!has_boxes_) {
    ball_orientation_.assign(items_.owned(), Eigen::Vector4d(0, 0, 0, 1));
    ball_angular_velocity_.assign(items_.owned(), Eigen::Vector3d::Zero());
    ball_half_extents_.assign(items_.owned(), Eigen::Vector3d::Zero());
  }
  for (std::int64_t k = begin; k < end; ++k) {
    const Ball& b = scene_.balls[k - begin];
    const std::size_t s = static_cast<std::size_t>(k - begin);
    position_[s] = b.position;
    velocity_[s] = b.fixed ? Eigen::Vector3d::Zero() : b.velocity;
    mass_[s] = b.mass;
    radius_[s] = b.radius;
    fixed_[s] = b.fixed ? 1 : 0;
    orientation_[s] = b.orientation;
    angular_velocity_[s] = b.fixed ? Eigen::Vector3d::Zero() : b.angular_velocity;
    half_extents_[s] = b.half_extents;
  }
  scene_.balls.clear();  // the state lives in items_
  scene_.balls.shrink_to_fit();
  check_placement(comm_, scene_, items_, position_, radius_);
  contact_phase_ = timers_.phase("contacts");
  resolve_phase_ = timers_.phase("impact");
  if (!restart_file.empty()) read_checkpoint(restart_file);
}

std::string RigidMethod::variant() const {
  const std::string op = scene_.impact.op == Operator::gauss_seidel ? "Gauss-Seidel" : "Generalized Reflections";
  return scene_.mode + ", " + op;
}

bool RigidMethod::reached(double t) const {
  if (resolve_mode()) return resolved_;
  const double dt = scene_.time_step;
  return static_cast<double>(step_) >= std::ceil(t / dt - 1e-9);
}

std::map<std::string, std::int64_t> RigidMethod::sizes() const {
  return {{"bodies", bodies_}, {"walls", static_cast<std::int64_t>(scene_.walls.size())}};
}

double RigidMethod::kinetic_energy() const {
  double e = 0;
  for (std::size_t k = 0; k < items_.owned(); ++k) {
    e += 0.5 * mass_[k] * velocity_[k].squaredNorm();
    if (half_extents_[k][0] > 0) {
      const Eigen::Matrix3d r = quat::rotation_matrix(orientation_[k]);
      const Eigen::Vector3d w = r.transpose() * angular_velocity_[k];  // body frame
      e += 0.5 * w.dot(geometry::box_inertia(mass_[k], half_extents_[k]).cwiseProduct(w));
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &e, 1, MPI_DOUBLE, MPI_SUM, comm_);
  return e;
}

Eigen::Vector3d RigidMethod::momentum() const {
  Eigen::Vector3d p = Eigen::Vector3d::Zero();
  for (std::size_t k = 0; k < items_.owned(); ++k)
    if (!fixed_[k]) p += mass_[k] * velocity_[k];
  MPI_Allreduce(MPI_IN_PLACE, p.data(), 3, MPI_DOUBLE, MPI_SUM, comm_);
  return p;
}

Eigen::Vector3d RigidMethod::angular_momentum() const {
  Eigen::Vector3d l = Eigen::Vector3d::Zero();
  for (std::size_t k = 0; k < items_.owned(); ++k) {
    if (fixed_[k]) continue;
    l += mass_[k] * position_[k].cross(velocity_[k]);
    if (half_extents_[k][0] > 0) {
      const Eigen::Matrix3d r = quat::rotation_matrix(orientation_[k]);
      l += r * geometry::box_inertia(mass_[k], half_extents_[k]).asDiagonal() * r.transpose() * angular_velocity_[k];
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, l.data(), 3, MPI_DOUBLE, MPI_SUM, comm_);
  return l;
}

void RigidMethod::rotate_boxes(double dt) {
  for (std::size_t k = 0; k < items_.owned(); ++k) {
    if (fixed_[k] || half_extents_[k][0] <= 0) continue;
    const Eigen::Vector3d inertia = geometry::box_inertia(mass_[k], half_extents_[k]);
    const Eigen::Matrix3d r0 = quat::rotation_matrix(orientation_[k]);
    const Eigen::Vector3d l = r0 * inertia.cwiseProduct(r0.transpose() * angular_velocity_[k]);
    orientation_[k] = quat::advance_world(orientation_[k], angular_velocity_[k], dt);
    const Eigen::Matrix3d r1 = quat::rotation_matrix(orientation_[k]);
    angular_velocity_[k] = r1 * (r1.transpose() * l).cwiseQuotient(inertia);
  }
}

void RigidMethod::fill_local() {
  const std::size_t n = items_.size();
  local_.position.assign(position_.begin(), position_.begin() + static_cast<std::ptrdiff_t>(n));
  local_.velocity.assign(velocity_.begin(), velocity_.begin() + static_cast<std::ptrdiff_t>(n));
  local_.mass.assign(mass_.begin(), mass_.begin() + static_cast<std::ptrdiff_t>(n));
  local_.radius.assign(radius_.begin(), radius_.begin() + static_cast<std::ptrdiff_t>(n));
  local_.fixed.assign(n, 0);
  for (std::size_t k = 0; k < n; ++k) local_.fixed[k] = static_cast<char>(fixed_[k]);
  local_.id = items_.gids();
  if (has_boxes_) {
    local_.orientation.assign(orientation_.begin(), orientation_.begin() + static_cast<std::ptrdiff_t>(n));
    local_.angular_velocity.assign(angular_velocity_.begin(),
                                   angular_velocity_.begin() + static_cast<std::ptrdiff_t>(n));
    local_.half_extents.assign(half_extents_.begin(), half_extents_.begin() + static_cast<std::ptrdiff_t>(n));
  }
  ghost_owner_.resize(items_.ghosts());
  for (std::size_t g = 0; g < items_.ghosts(); ++g) ghost_owner_[g] = items_.ghost_owner(g);
}

void RigidMethod::resolve_now(double dt, const Eigen::Vector3d& kick) {
  {
    ScopedPhase t(timers_, contact_phase_);
    // Ghosts: every body that can touch an owned one within the step (pairs within the sum of their reaches).
    const std::size_t owned = items_.owned();
    std::vector<double> reach(owned);
    for (std::size_t k = 0; k < owned; ++k)
      reach[k] = radius_[k] * (1.0 + scene_.impact.contact_tolerance) +
                 dt * (fixed_[k] ? 0.0 : velocity_[k].norm() + angular_velocity_[k].norm() * radius_[k] + kick.norm());
    items_.build_ghosts(std::span<const Eigen::Vector3d>(position_.data(), owned), reach);
    fill_local();
    contacts_ = finder_.find(local_, scene_.walls, scene_.impact.contact_tolerance, dt, kick, bodies_);
  }
  ScopedPhase t(timers_, resolve_phase_);
  const ComponentSolver solver = [&](BallState& balls, std::span<const Contact> contacts, const Components& c) {
    return resolve_contacts(balls, scene_.dimension, contacts, c, scene_.impact);
  };
  const ImpactSettings& s = scene_.impact;
  BatchSettings batches;
  const bool pairwise = s.restitution >= 1.0 || s.restitution_model == "pairwise";
  // Batches take ball contacts only: a scene with boxes gathers every component.
  batches.gather_limit =
      s.op == Operator::gauss_seidel && pairwise && s.friction == 0.0 && !has_boxes_ ? s.gather_limit : -1;
  batches.resolve = s.resolve;
  batches.restitution = s.restitution_model == "pairwise" ? s.restitution : 1.0;
  batches.hand_back = s.anti_locking;
  last_ = solve_components(comm_, local_, items_.owned(), ghost_owner_, bodies_, contacts_, solver,
                           resolve_mode() ? &gathered_ : nullptr, &batches);
  for (std::size_t k = 0; k < items_.owned(); ++k) velocity_[k] = local_.velocity[k];
  if (has_boxes_)
    for (std::size_t k = 0; k < items_.owned(); ++k) angular_velocity_[k] = local_.angular_velocity[k];
  reflections_ += last_.reflections;
  iterations_ += last_.iterations;
  if (!last_.terminated) {
    ++unterminated_;
    throw NumericalError("step " + std::to_string(step_) + ": impact resolution stopped: " + last_.reason);
  }
}

// Impacts act on the velocities the bodies arrive with; the body force's kick is then projected inelastically onto
// the contacts (a resting contact takes exactly what gravity adds: no bounce, no creep), and positions drift.
// Velocity Verlet splits the kick in halves around the drift.
void RigidMethod::advance(double /*limit*/) {
  if (resolve_mode()) {
    energy_before_ = kinetic_energy();
    momentum_before_ = momentum();
    angular_momentum_before_ = angular_momentum();
    resolved_ = true;
    step_ = 1;
    resolve_now(0.0, Eigen::Vector3d::Zero());
    return;
  }
  const double dt = scene_.time_step;
  const bool verlet = scene_.integrator == "velocity_verlet";
  const Eigen::Vector3d kick = (verlet ? 0.5 * dt : dt) * scene_.gravity;
  const std::size_t owned = items_.owned();
  resolve_now(dt, kick);
  if (kick.squaredNorm() > 0) {
    for (std::size_t k = 0; k < owned; ++k)
      if (!fixed_[k]) velocity_[k] += kick;
    ScopedPhase t(timers_, resolve_phase_);
    if (has_boxes_) items_.forward(velocity_, angular_velocity_);
    else items_.forward(velocity_);
    for (std::size_t k = 0; k < items_.size(); ++k) local_.velocity[k] = velocity_[k];
    if (has_boxes_)
      for (std::size_t k = 0; k < items_.size(); ++k) local_.angular_velocity[k] = angular_velocity_[k];
    const double tolerance = scene_.impact.resolve.tolerance;
    const ComponentSolver project = [&](BallState& balls, std::span<const Contact> contacts, const Components& c) {
      InstantResult r;
      r.terminated = project_onto_contacts(balls, scene_.dimension, contacts, c, tolerance, r.reason);
      return r;
    };
    const InstantResult r = solve_components(comm_, local_, owned, ghost_owner_, bodies_, contacts_, project);
    if (!r.terminated) throw NumericalError("step " + std::to_string(step_) + ": " + r.reason);
    for (std::size_t k = 0; k < owned; ++k) velocity_[k] = local_.velocity[k];
    if (has_boxes_)
      for (std::size_t k = 0; k < owned; ++k) angular_velocity_[k] = local_.angular_velocity[k];
  }
  for (std::size_t k = 0; k < owned; ++k)
    if (!fixed_[k]) position_[k] += dt * velocity_[k];
  if (has_boxes_) rotate_boxes(dt);
  if (verlet)
    for (std::size_t k = 0; k < owned; ++k)
      if (!fixed_[k]) velocity_[k] += kick;
  ++step_;
  time_ = static_cast<double>(step_) * dt;
}

ObservableSet RigidMethod::observables() {
  ObservableSet o;
  const double kinetic = kinetic_energy();
  double potential = 0;
  for (std::size_t k = 0; k < items_.owned(); ++k)
    if (!fixed_[k]) potential -= mass_[k] * scene_.gravity.dot(position_[k]);
  MPI_Allreduce(MPI_IN_PLACE, &potential, 1, MPI_DOUBLE, MPI_SUM, comm_);
  const Eigen::Vector3d p = momentum();
  o.set("kinetic", kinetic);
  o.set("gravitational", potential);
  o.set("total_energy", kinetic + potential);
  o.set("momentum", {p[0], p[1], p[2]});
  o.set_count("contacts", last_.contacts);
  o.set_count("components", last_.components);
  o.set_count("largest_component", last_.largest_component);
  o.set_count("reflections", reflections_);
  o.set_count("iterations", iterations_);
  return o;
}

std::string RigidMethod::implausible_change(const ObservableSet& before, const ObservableSet& now) const {
  // Impacts never add energy (elastic ones keep it, to the renormalisation's round-off): total mechanical energy
  // rising by more than the kinetic energy itself means the state is broken, not merely integrated coarsely.
  const double e0 = before.scalar_or("total_energy", 0), e1 = now.scalar_or("total_energy", 0);
  const double scale = std::max(before.scalar_or("kinetic", 0), now.scalar_or("kinetic", 0));
  if (e1 - e0 > scale + 1e-12 * std::abs(e0) && e1 - e0 > 1e-300) {
    return "total energy grew from " + std::to_string(e0) + " J to " + std::to_string(e1) + " J";
  }
  return {};
}

io::TrajectoryLayout RigidMethod::trajectory_layout() const {
  io::TrajectoryLayout layout;
  layout.particles = bodies_;
  return layout;
}

void RigidMethod::write_frame(io::TrajectoryWriter& writer) {
  const std::size_t n = items_.owned();
  std::vector<std::int64_t> id(items_.gids().begin(), items_.gids().begin() + static_cast<std::ptrdiff_t>(n));
  std::vector<double> position(3 * n), quaternion(4 * n, 0.0), velocity(3 * n), angular(3 * n, 0.0);
  for (std::size_t k = 0; k < n; ++k) {
    for (int d = 0; d < 3; ++d) {
      position[3 * k + d] = position_[k][d];
      velocity[3 * k + d] = velocity_[k][d];
      angular[3 * k + d] = angular_velocity_[k][d];
    }
    for (int d = 0; d < 4; ++d) quaternion[4 * k + d] = orientation_[k][d];
  }
  io::FrameFields f;
  f.id = id;
  f.position = position;
  f.quaternion = quaternion;
  f.velocity = velocity;
  f.angular_velocity = angular;
  f.radius = std::span<const double>(radius_.data(), n);
  io::FrameContent content;
  content.particles = &f;
  const ObservableSet obs = observables();
  writer.write_frame(step_, time_, obs, content);
}

std::map<std::string, double> RigidMethod::counters() const {
  return {{"reflections", static_cast<double>(reflections_)},
          {"impact_iterations", static_cast<double>(iterations_)}};
}

}  // namespace percussion::rigid
