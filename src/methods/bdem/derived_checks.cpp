#include "percussion/methods/bdem/derived_checks.hpp"


#include <algorithm>
#include <cmath>
#include <numbers>
#include <iomanip>
#include <sstream>

#include "percussion/core/error.hpp"
#include "percussion/geometry/woven.hpp"
#include "percussion/methods/bdem/model.hpp"
#include "percussion/physics/critical_step.hpp"

namespace percussion::bdem {
namespace {

[[noreturn]] void fail(const BdemScene& scene, const std::string& pointer, const std::string& what) {
  throw InputError(scene.path + ": " + pointer + ": " + what);
}

std::string num(double v) {
  std::ostringstream o;
  o << std::setprecision(4) << v;
  return o.str();
}

bool usable(double v) { return std::isnormal(v) && v > 0; }  // finite, > 0 and not denormal

// Positions are resolved to 2^-52 of their magnitude: within 2^30 radii of the origin, to 2^-22 of a radius.
constexpr double kMaxReachInRadii = 1073741824.0;  // 2^30


}  // namespace

double estimated_particles(const BdemScene& scene, std::size_t b) {
  const Generator& g = scene.bodies[b].generator;
  const double r = g.particle_radius;
  const double per_sphere = 4 * std::numbers::sqrt2 * r * r * r;  // the HCP cell of one sphere
  switch (g.shape) {
    case Generator::Shape::Box: return (g.max - g.min).prod() / per_sphere;
    case Generator::Shape::Cylinder: return std::numbers::pi * g.radius * g.radius * g.height / per_sphere;
    case Generator::Shape::Sphere: return 4.0 / 3.0 * std::numbers::pi * std::pow(g.radius, 3) / per_sphere;
    case Generator::Shape::Woven:
      try {
        return static_cast<double>(geometry::woven_layout(g).particles());
      } catch (const InputError& e) {
        fail(scene, "/bodies/" + std::to_string(b) + "/shape", e.what());
      }
  }
  return 0;
}

void check_derived(const BdemScene& scene) {
  // Every body's particle mass and critical step.
  double critical = INFINITY;
  std::size_t critical_body = 0;
  for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
    const Body& body = scene.bodies[b];
    const Material& m = scene.materials[static_cast<std::size_t>(body.material)];
    const double r = body.generator.particle_radius;
    const std::string pointer = "/bodies/" + std::to_string(b);
    const std::string material = "/materials/" + std::to_string(body.material) + " ('" + m.name + "': density " +
                                 num(m.density) + ", youngs_modulus " + num(m.youngs_modulus) + ")";
    // Far from the origin, a double cannot tell neighbouring particles apart (their bonds would have no length).
    const Generator& g = body.generator;
    const double reach = std::max({g.min.cwiseAbs().maxCoeff(), g.max.cwiseAbs().maxCoeff(),
                                   g.center.cwiseAbs().maxCoeff() + g.radius + g.height,
                                   g.min.cwiseAbs().maxCoeff() + g.size.cwiseAbs().maxCoeff()});
    if (!(reach <= kMaxReachInRadii * r))
      fail(scene, pointer + "/shape", "reaches " + num(reach) + " m from the origin, too far to place particles of radius " +
                                          num(r) + " m apart in double precision (at most 2^30 radii)");
    const double mass = m.density * 4.0 / 3.0 * std::numbers::pi * r * r * r;
    if (!usable(mass))
      fail(scene, pointer, "particles of radius " + num(r) + " m of " + material + " have a mass of " + num(mass) +
                               " kg, not a positive finite number");
    const double t = physics::critical_time_step(r, m.density, m.youngs_modulus);
    if (!usable(t))
      fail(scene, pointer, "particles of radius " + num(r) + " m of " + material + " have a critical time step of " +
                               num(t) + " s, not a positive finite number");
    if (t < critical) critical = t, critical_body = b;
  }

  const double dt = scene_time_step(scene);
  const std::string step_pointer = scene.time.step ? "/time/step" : "/time/step_factor";
  if (!usable(dt)) fail(scene, step_pointer, "gives a time step of " + num(dt) + " s, not a positive finite number");
  if (scene.integrator == "explicit" && scene.time.step && dt > critical && !scene.time.allow_above_critical)
    fail(scene, "/time/step",
         num(dt) + " s is above the explicit integrator's critical step " + num(critical) + " s (of /bodies/" +
             std::to_string(critical_body) + "), where the run diverges; leave time.step out for step_factor x the "
             "critical step, or set time.allow_above_critical to run it anyway");

  auto count = [&](const char* pointer, double interval, const char* what) {
    const double n = scene.time.end / interval;
    if (!(n <= kMaxCount))
      fail(scene, pointer, "time.end / " + num(interval) + " s = " + num(n) + " " + what + "; at most 2^53 (" +
                               num(kMaxCount) + ")");
  };
  count(scene.time.step ? "/time/step" : "/time/end", dt, "steps");
  count("/output/frame_interval", scene.output.frame_interval, "frame times");
  if (scene.checkpoint.every_time > 0) count("/checkpoint/every_time", scene.checkpoint.every_time, "checkpoint times");
  // The step of each frame or checkpoint time is counted in 64 bits too (an interval beyond time.end is fine).
  auto steps_per = [&](const char* pointer, double interval) {
    const double n = interval / dt;
    if (!(n <= kMaxCount))
      fail(scene, pointer, num(interval) + " s is " + num(n) + " time steps of " + num(dt) + " s; at most 2^53");
  };
  steps_per("/output/frame_interval", scene.output.frame_interval);
  if (scene.checkpoint.every_time > 0) steps_per("/checkpoint/every_time", scene.checkpoint.every_time);

  // Particles. (Memory is not bounded here: each rank holds its share, and the rank count is not known yet.)
  double particles = 0;
  for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
    const double n = estimated_particles(scene, b);
    if (!(n <= kMaxCount))
      fail(scene, "/bodies/" + std::to_string(b), "would hold about " + num(n) + " particles; at most 2^53");
    particles += n;
  }
  if (!(particles <= kMaxCount))
    fail(scene, "/bodies", "would hold about " + num(particles) + " particles; at most 2^53");
}

}  // namespace percussion::bdem
