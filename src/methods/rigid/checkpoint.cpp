// The rigid method's checkpoint: bodies' positions and velocities, step, time and totals, with the scene.
#include <cmath>

#include "percussion/core/error.hpp"
#include "percussion/io/h5file.hpp"
#include "percussion/methods/rigid/rigid_method.hpp"

namespace percussion::rigid {

void RigidMethod::write_checkpoint(const std::string& path) {
  io::H5File file = io::H5File::create(comm_, path);
  const hid_t root = file.id();
  const std::int64_t n = static_cast<std::int64_t>(balls_.size());
  io::write_attribute(root, "kind", std::string("checkpoint"));
  io::write_attribute(root, "method", std::string("rigid"));
  io::write_attribute(root, "format_version", std::int64_t{1});
  io::write_attribute(root, "step", std::int64_t{step_});
  io::write_attribute(root, "time", time_);
  io::write_attribute(root, "bodies", n);
  io::write_attribute(root, "reflections", reflections_);
  io::write_attribute(root, "impact_iterations", iterations_);
  io::write_attribute(root, "scene_path", scene_.path);
  io::write_string(root, "scene", scene_.source);
  std::vector<std::int64_t> rows(n);
  std::vector<double> position(3 * n), velocity(3 * n);
  for (std::int64_t k = 0; k < n; ++k) {
    rows[k] = k;
    for (int d = 0; d < 3; ++d) position[3 * k + d] = balls_.position[k][d], velocity[3 * k + d] = balls_.velocity[k][d];
  }
  io::H5Group bodies = io::H5Group::create(root, "bodies");
  io::write_rows(bodies.id(), "position", rows, n, position, 3);
  io::write_rows(bodies.id(), "velocity", rows, n, velocity, 3);
  file.close();
}

void RigidMethod::read_checkpoint(const std::string& path) {
  io::H5File file = io::H5File::open_read(comm_, path);
  const hid_t root = file.id();
  const auto refuse = [&](const std::string& what) { throw InputError(path + ": " + what); };
  if (!io::has_attribute(root, "method") || io::read_attribute_string(root, "method") != "rigid")
    refuse("not a checkpoint of the rigid method");
  const std::int64_t n = static_cast<std::int64_t>(balls_.size());
  if (io::read_attribute_int(root, "bodies") != n)
    refuse("holds " + std::to_string(io::read_attribute_int(root, "bodies")) + " bodies, the scene " +
           scene_.path + " has " + std::to_string(n));
  const std::int64_t step = io::read_attribute_int(root, "step");
  if (step < 0) refuse("/@step: negative (" + std::to_string(step) + ")");
  const auto table = [&](const char* name) {
    int components = 0;
    const std::vector<double> v = io::read_all_double(root, std::string("bodies/") + name, &components);
    if (components != 3 || static_cast<std::int64_t>(v.size()) != 3 * n)
      refuse(std::string("/bodies/") + name + ": expected " + std::to_string(n) + " rows of 3");
    for (double x : v)
      if (!std::isfinite(x)) refuse(std::string("/bodies/") + name + ": a value is not finite");
    return v;
  };
  const std::vector<double> position = table("position"), velocity = table("velocity");
  for (std::int64_t k = 0; k < n; ++k) {
    balls_.position[k] = Eigen::Vector3d(position[3 * k], position[3 * k + 1], position[3 * k + 2]);
    balls_.velocity[k] = Eigen::Vector3d(velocity[3 * k], velocity[3 * k + 1], velocity[3 * k + 2]);
  }
  step_ = static_cast<long>(step);
  time_ = io::read_attribute_double(root, "time");
  reflections_ = io::read_attribute_int(root, "reflections");
  iterations_ = io::read_attribute_int(root, "impact_iterations");
  resolved_ = resolve_mode() && step_ >= 1;
  file.close();
}

}  // namespace percussion::rigid
