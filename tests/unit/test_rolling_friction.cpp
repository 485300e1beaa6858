// Rolling friction end to end: a sphere resting on a floor and spinning about the vertical slows at the
// rate its rolling-resistance torque μ_r m g r gives, dω/dt = −μ_r m g r / I = −2.5 μ_r g / r, with the
// explicit integrator (regularised torque) and the implicit one (velocity post-process, eq. 35 with r).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <string>
#include <utility>

#include "percussion/core/scene.hpp"
#include "percussion/methods/bdem/explicit_bdem.hpp"
#include "percussion/methods/bdem/implicit_bdem.hpp"

using namespace percussion;

namespace {

constexpr double kRadius = 0.01, kSpin = 20.0, kMuRolling = 0.1, kG = 9.81;

Scene spinning_sphere(const std::string& integrator) {
  return parse_scene_text(R"({ "method": "bdem", "integrator": ")" + integrator + R"(",
    "materials": [ { "name": "m", "density": 1000, "youngs_modulus": 1e7, "tensile_strength": 1e12,
                     "friction": 0.5, "rolling_friction": )" + std::to_string(kMuRolling) + R"( } ],
    "bodies": [ { "material": "m", "particle_radius": 0.01, "bonded": false, "angular_velocity": [0, 0, 20],
                  "shape": { "type": "box", "min": [0, 0, 0], "max": [0.02, 0.02, 0.02] } } ],
    "obstacles": [ { "type": "plane", "point": [0, 0, 0.0], "normal": [0, 0, 1], "rolling_friction": )" +
                              std::to_string(kMuRolling) + R"( } ],
    "gravity": [0, 0, -9.81], "time": { "end": 1.0 }, "output": { "frame_interval": 1.0 } })",
                          "spin.json");
}

// Spin after the first step that reaches t_end, and the time it ended at.
template <class Method>
std::pair<double, double> spin_after(const std::string& integrator, double t_end) {
  const Scene scene = spinning_sphere(integrator);
  bdem::GlobalModel g = bdem::model_from_scene(scene);
  EXPECT_EQ(g.particles(), 1);
  // Start at rest on the floor, sunk by the static overlap m g / k, so the normal force is m g throughout.
  const double k = scene.materials[0].youngs_modulus * kRadius;  // automatic contact stiffness E r_max
  g.x[0].z() = kRadius - g.mass[0] * kG / k;
  Method m(scene, MPI_COMM_SELF, g);
  while (m.time() < t_end - 1e-12) m.advance();
  return {m.owned_angular_velocities()[0].z(), m.time()};
}

}  // namespace

TEST(RollingFriction, SpinningSphereSlowsAtTheRollingResistanceRate) {
  auto expected = [](double t) { return kSpin - 2.5 * kMuRolling * kG / kRadius * t; };  // ~10 rad/s at 0.04 s
  const auto [explicit_spin, te] = spin_after<bdem::ExplicitBdem>("explicit", 0.04);
  const auto [implicit_spin, ti] = spin_after<bdem::ImplicitBdem>("implicit", 0.04);
  EXPECT_NEAR(explicit_spin, expected(te), 0.005 * kSpin);
  EXPECT_NEAR(implicit_spin, expected(ti), 0.005 * kSpin);
  // Long enough to stop: friction stops the spin and never reverses it.
  EXPECT_NEAR(spin_after<bdem::ExplicitBdem>("explicit", 0.12).first, 0.0, 1e-3 * kSpin);
  EXPECT_EQ(spin_after<bdem::ImplicitBdem>("implicit", 0.12).first, 0.0);
}
