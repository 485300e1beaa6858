// The rigid-impact method: state, stepping, frames and checkpoints.
#include "percussion/methods/rigid/rigid_method.hpp"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "percussion/core/error.hpp"
#include "percussion/io/h5file.hpp"
#include "percussion/io/trajectory.hpp"

namespace percussion::rigid {

RigidMethod::RigidMethod(RigidScene scene, MPI_Comm comm, const std::string& restart_file)
    : scene_(std::move(scene)), comm_(comm) {
  int size = 1;
  MPI_Comm_size(comm_, &size);
  if (size != 1) {
    throw InputError(scene_.path + ": the rigid method runs on one rank so far; run it with 1 rank (got " +
                     std::to_string(size) + ")");
  }
  const std::size_t n = scene_.balls.size();
  balls_.position.resize(n);
  balls_.velocity.resize(n);
  balls_.mass.resize(n);
  balls_.radius.resize(n);
  balls_.fixed.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    const Ball& b = scene_.balls[k];
    balls_.position[k] = b.position;
    balls_.velocity[k] = b.fixed ? Eigen::Vector3d::Zero() : b.velocity;
    balls_.mass[k] = b.mass;
    balls_.radius[k] = b.radius;
    balls_.fixed[k] = b.fixed;
  }
  scene_.balls.clear();  // the state lives in balls_
  scene_.balls.shrink_to_fit();
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
  return {{"bodies", static_cast<std::int64_t>(balls_.size())},
          {"walls", static_cast<std::int64_t>(scene_.walls.size())}};
}

double RigidMethod::kinetic_energy() const {
  double e = 0;
  for (std::size_t k = 0; k < balls_.size(); ++k) e += 0.5 * balls_.mass[k] * balls_.velocity[k].squaredNorm();
  return e;
}

Eigen::Vector3d RigidMethod::momentum() const {
  Eigen::Vector3d p = Eigen::Vector3d::Zero();
  for (std::size_t k = 0; k < balls_.size(); ++k) p += balls_.mass[k] * balls_.velocity[k];
  return p;
}

void RigidMethod::resolve_now(double dt, const Eigen::Vector3d& kick) {
  {
    ScopedPhase t(timers_, contact_phase_);
    contacts_ = finder_.find(balls_, scene_.walls, scene_.impact.contact_tolerance, dt, kick);
    components_ = contact_components(balls_, contacts_);
  }
  ScopedPhase t(timers_, resolve_phase_);
  last_ = resolve_contacts(balls_, scene_.dimension, contacts_, components_, scene_.impact);
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
    resolved_ = true;
    step_ = 1;
    resolve_now(0.0, Eigen::Vector3d::Zero());
    return;
  }
  const double dt = scene_.time_step;
  const bool verlet = scene_.integrator == "velocity_verlet";
  const Eigen::Vector3d kick = (verlet ? 0.5 * dt : dt) * scene_.gravity;
  const std::size_t n = balls_.size();
  resolve_now(dt, kick);
  if (kick.squaredNorm() > 0) {
    for (std::size_t k = 0; k < n; ++k)
      if (!balls_.fixed[k]) balls_.velocity[k] += kick;
    ScopedPhase t(timers_, resolve_phase_);
    std::string why;
    if (!project_onto_contacts(balls_, scene_.dimension, contacts_, components_, scene_.impact.resolve.tolerance, why))
      throw NumericalError("step " + std::to_string(step_) + ": " + why);
  }
  for (std::size_t k = 0; k < n; ++k)
    if (!balls_.fixed[k]) balls_.position[k] += dt * balls_.velocity[k];
  if (verlet)
    for (std::size_t k = 0; k < n; ++k)
      if (!balls_.fixed[k]) balls_.velocity[k] += kick;
  ++step_;
  time_ = static_cast<double>(step_) * dt;
}

ObservableSet RigidMethod::observables() {
  ObservableSet o;
  const double kinetic = kinetic_energy();
  double potential = 0;
  for (std::size_t k = 0; k < balls_.size(); ++k)
    if (!balls_.fixed[k]) potential -= balls_.mass[k] * scene_.gravity.dot(balls_.position[k]);
  const Eigen::Vector3d p = momentum();
  o.set("kinetic", kinetic);
  o.set("gravitational", potential);
  o.set("total_energy", kinetic + potential);
  o.set("momentum", {p[0], p[1], p[2]});
  o.set_count("contacts", static_cast<std::int64_t>(contacts_.size()));
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
  layout.particles = static_cast<std::int64_t>(balls_.size());
  return layout;
}

void RigidMethod::write_frame(io::TrajectoryWriter& writer) {
  const std::size_t n = balls_.size();
  std::vector<std::int64_t> id(n);
  std::vector<double> position(3 * n), quaternion(4 * n, 0.0), velocity(3 * n), angular(3 * n, 0.0);
  for (std::size_t k = 0; k < n; ++k) {
    id[k] = static_cast<std::int64_t>(k);
    for (int d = 0; d < 3; ++d) {
      position[3 * k + d] = balls_.position[k][d];
      velocity[3 * k + d] = balls_.velocity[k][d];
    }
    quaternion[4 * k + 3] = 1.0;
  }
  io::FrameFields f;
  f.id = id;
  f.position = position;
  f.quaternion = quaternion;
  f.velocity = velocity;
  f.angular_velocity = angular;
  f.radius = balls_.radius;
  io::FrameContent content;
  content.particles = &f;
  writer.write_frame(step_, time_, observables(), content);
}

std::map<std::string, double> RigidMethod::counters() const {
  return {{"reflections", static_cast<double>(reflections_)},
          {"impact_iterations", static_cast<double>(iterations_)}};
}

}  // namespace percussion::rigid
