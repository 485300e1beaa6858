#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "percussion/core/error.hpp"
#include "percussion/geometry/bonding.hpp"
#include "percussion/geometry/hcp.hpp"
#include "percussion/methods/bdem/model.hpp"
#include "percussion/physics/critical_step.hpp"
#include "percussion/physics/quaternion.hpp"

namespace percussion::bdem {

double critical_step(const BdemScene& scene) {
  double t = std::numeric_limits<double>::infinity();
  for (const auto& body : scene.bodies) {
    const Material& m = scene.materials[body.material];
    t = std::min(t, physics::critical_time_step(body.generator.particle_radius, m.density, m.youngs_modulus));
  }
  return t;
}

double scene_time_step(const BdemScene& scene) {
  if (scene.time.step) return *scene.time.step;
  // Explicit: a fraction of the stability limit. Implicit: a multiple of it (the paper's 20-100 T rule, §2.10).
  return (scene.integrator == "implicit" ? scene.implicit.step_factor : scene.time.step_factor) * critical_step(scene);
}

GlobalModel model_from_scene(const BdemScene& scene) {
  GlobalModel g;
  for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
    const Body& body = scene.bodies[b];
    std::vector<Eigen::Vector3d> pts;
    try {
      pts = geometry::hcp_fill(body.generator);
    } catch (const InputError& e) {
      throw InputError(scene.path + ": /bodies/" + std::to_string(b) + "/shape: " + e.what());
    }
    const Material& mat = scene.materials[body.material];
    const double r = body.generator.particle_radius;
    const double m = mat.density * 4.0 / 3.0 * std::numbers::pi * r * r * r;
    Eigen::Vector3d centroid = Eigen::Vector3d::Zero();
    for (const auto& p : pts) centroid += p;
    centroid /= static_cast<double>(pts.size());

    const std::int64_t first = g.particles();
    for (const auto& p : pts) {
      g.x.push_back(p);
      g.q.push_back(quat::identity());
      g.v.push_back(body.velocity + body.angular_velocity.cross(p - centroid));
      g.w.push_back(body.angular_velocity);
      g.radius.push_back(r);
      g.mass.push_back(m);
      g.material.push_back(body.material);
      int c = -1;
      for (std::size_t k = 0; k < scene.boundary_conditions.size() && c < 0; ++k) {
        const auto& bc = scene.boundary_conditions[k];
        if ((p.array() >= bc.min.array()).all() && (p.array() <= bc.max.array()).all()) c = static_cast<int>(k);
      }
      g.constraint.push_back(c);
    }
    if (!body.bonded) continue;
    std::vector<double> radii(pts.size(), r);
    for (const auto& pr : geometry::touching_pairs(pts, radii, scene.bonds.tolerance)) {
      const std::int64_t i = first + pr[0], j = first + pr[1];
      g.pair.push_back({i, j});
      g.rest.push_back(physics::make_bond_rest(g.x[i], g.x[j], r, r, mat, mat, scene.bonds));
      g.strength.push_back({mat.tensile_strength, mat.shear_strength});
      g.intact.push_back(1);
    }
  }
  g.time_step = scene_time_step(scene);
  return g;
}

}  // namespace percussion::bdem
