// Friction end to end, with the explicit integrator (regularised forces) and the implicit one (velocity
// post-process at the contact point, eqs. 34-35). A sphere resting on a floor and spinning about the vertical
// slows at the rate its rolling-resistance torque μ_r m g r gives, dω/dt = −μ_r m g r / I = −2.5 μ_r g / r. A
// sphere sliding on a floor without spin slows at μ g while friction spins it up, and rolls on at 5/7 of its
// speed from t* = 2 v0 / (7 μ g).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <string>
#include <utility>

#include "percussion/core/scene_parts.hpp"
#include "percussion/methods/bdem/explicit_bdem.hpp"
#include "percussion/methods/bdem/implicit_bdem.hpp"

namespace test_friction {

using namespace percussion;

namespace {

constexpr double kRadius = 0.01, kSpin = 20.0, kMuRolling = 0.1, kG = 9.81;
constexpr double kSlide = 0.5, kMu = 0.2;  // sliding start speed (m/s) and Coulomb friction

// One sphere of radius 0.01 on the floor z = 0; `laws` are the friction keys of both the material and the floor,
// `motion` the body's initial velocity or spin.
bdem::BdemScene sphere_on_floor(const std::string& integrator, const std::string& laws, const std::string& motion) {
  return bdem::parse_scene_text(R"({ "method": "bdem", "integrator": ")" + integrator + R"(",
    "materials": [ { "name": "m", "density": 1000, "youngs_modulus": 1e7, "tensile_strength": 1e12, )" + laws + R"( } ],
    "bodies": [ { "material": "m", "particle_radius": 0.01, "bonded": false, )" + motion + R"(,
                  "shape": { "type": "box", "min": [0, 0, 0], "max": [0.02, 0.02, 0.02] } } ],
    "obstacles": [ { "type": "plane", "point": [0, 0, 0.0], "normal": [0, 0, 1], )" + laws + R"( } ],
    "gravity": [0, 0, -9.81], "time": { "end": 1.0 }, "output": { "frame_interval": 1.0 } })",
                          "sphere.json");
}

bdem::BdemScene spinning_sphere(const std::string& integrator) {
  return sphere_on_floor(integrator, R"("friction": 0.5, "rolling_friction": )" + std::to_string(kMuRolling),
                         R"("angular_velocity": [0, 0, 20])");
}

bdem::BdemScene sliding_sphere(const std::string& integrator) {
  return sphere_on_floor(integrator, R"("friction": )" + std::to_string(kMu), R"("velocity": [0.5, 0, 0])");
}

struct Motion {
  Eigen::Vector3d v, w;
  double t;
};

// Velocity and spin after the first step that reaches t_end, and the time it ended at.
template <class Method>
Motion motion_after(const bdem::BdemScene& scene, double t_end) {
  bdem::Model g = bdem::model_from_scene(scene);
  EXPECT_EQ(g.particles(), 1);
  // Start on the floor, sunk by the static overlap m g / k, so the normal force is m g throughout.
  const double k = scene.materials[0].youngs_modulus * kRadius;  // automatic contact stiffness E r_max
  g.x[0].z() = kRadius - g.mass[0] * kG / k;
  Method m(scene, MPI_COMM_SELF, g);
  while (m.time() < t_end - 1e-12) m.advance();
  return {m.owned_velocities()[0], m.owned_angular_velocities()[0], m.time()};
}

template <class Method>
std::pair<double, double> spin_after(const std::string& integrator, double t_end) {
  const Motion m = motion_after<Method>(spinning_sphere(integrator), t_end);
  return {m.w.z(), m.t};
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

TEST(Friction, SlidingSphereRollsOnAtFiveSevenths) {
  const double mu = kMu, t_roll = 2 * kSlide / (7 * mu * kG);  // 0.073 s
  for (const std::string run : {"explicit", "backward_euler", "bdf2", "midpoint"}) {
    const bool is_explicit = run == "explicit";
    bdem::BdemScene scene = sliding_sphere(is_explicit ? "explicit" : "implicit");
    if (!is_explicit) scene.implicit.form = run;
    auto motion = [&](double t) {
      return is_explicit ? motion_after<bdem::ExplicitBdem>(scene, t) : motion_after<bdem::ImplicitBdem>(scene, t);
    };
    // Sliding: v = v0 − μ g t, ω_y = 5 μ g t / (2 r) (torque μ m g r, I = 2/5 m r²).
    const Motion early = motion(0.4 * t_roll);
    EXPECT_NEAR(early.v.x(), kSlide - mu * kG * early.t, 0.01 * kSlide) << run;
    EXPECT_NEAR(early.w.y(), 2.5 * mu * kG * early.t / kRadius, 0.01 * kSlide / kRadius) << run;
    // Rolling: friction has nothing left to do, so the sphere keeps 5/7 of its speed with ω r = v.
    const Motion late = motion(2 * t_roll);
    EXPECT_NEAR(late.v.x(), 5.0 / 7.0 * kSlide, 0.01 * kSlide) << run;
    EXPECT_NEAR(late.w.y() * kRadius, late.v.x(), 0.01 * kSlide) << run;
    EXPECT_NEAR(late.v.y(), 0.0, 1e-9) << run;
  }
}

}  // namespace test_friction
