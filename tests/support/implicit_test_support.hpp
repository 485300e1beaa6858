#pragma once
// Helpers shared by the implicit BDEM tests: small scenes (a bonded block, a chain, pulled and clamped variants),
// shipped scenes, a run to its end with what it leaves, and comparisons of two runs.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <numbers>
#include <string>
#include <vector>

#include "percussion/methods/bdem/scene.hpp"
#include "percussion/methods/bdem/checkpoint.hpp"
#include "percussion/methods/bdem/explicit_bdem.hpp"
#include "percussion/methods/bdem/implicit_bdem.hpp"
#include "percussion/methods/method.hpp"
#include "percussion/physics/manifold_bond.hpp"
#include "percussion/physics/quaternion.hpp"
#include "bdem_test_support.hpp"

namespace percussion::test {

using bdem::ImplicitBdem;

// A 12 r x 8 r x 8 r bonded block, 20 critical steps per step, tight Newton tolerance.
inline bdem::BdemScene block_scene(const std::string& extra, double strength = 1e12, const std::string& form = "backward_euler") {
  const std::string text = R"({ "method": "bdem", "integrator": "implicit",
    "materials": [ { "name": "m", "density": 1000, "youngs_modulus": 1e7, "tensile_strength": )" +
                           std::to_string(strength) + R"(, "friction": 0.3 } ],
    "bodies": [ { "material": "m", "particle_radius": 0.016,
                  "shape": { "type": "box", "min": [0, 0, 0], "max": [0.192, 0.128, 0.128] } } ],
    "implicit": { "tolerance": 1e-10, "step_factor": 20, "form": ")" + form + R"(" },
    "time": { "end": 1.0 }, "output": { "frame_interval": 1.0 })" +
                           (extra.empty() ? "" : ", " + extra) + "}";
  return bdem::parse_scene_text(text, "implicit-test.json");
}

// A chain of six spheres (r = 0.016, five bonds) along x, no gravity, time step h.
inline bdem::BdemScene chain_scene(const std::string& form, double h) {
  bdem::BdemScene scene = bdem::parse_scene_text(R"({ "method": "bdem", "integrator": "implicit",
    "materials": [ { "name": "m", "density": 1000, "youngs_modulus": 1e7, "tensile_strength": 1e12 } ],
    "bodies": [ { "material": "m", "particle_radius": 0.016,
                  "shape": { "type": "box", "min": [0, 0, 0], "max": [0.192, 0.032, 0.032] } } ],
    "implicit": { "tolerance": 1e-12, "form": ")" + form + R"(" },
    "time": { "end": 1.0 }, "output": { "frame_interval": 1.0 } })",
                                 "chain.json");
  scene.time.step = h;
  return scene;
}

// The block, weak (strength 1e4), clamped at one end and pulled at 0.5 m/s at the other: several times over its
// strength by the end of the first step.
inline bdem::BdemScene pulled_block_scene(const std::string& form) {
  return block_scene(R"("boundary_conditions": [
      { "region": { "min": [-1, -1, -1], "max": [0.02, 1, 1] } },
      { "region": { "min": [0.172, -1, -1], "max": [1, 1, 1] }, "velocity": [0.5, 0, 0] } ])",
                     1e4, form);
}

// The weak block pulled at 0.05 m/s, its first bonds just over strength at the end of the first step, with
// implicit.fracture_transient 2.
inline bdem::BdemScene transient_block_scene() {
  bdem::BdemScene scene = block_scene(R"("boundary_conditions": [
      { "region": { "min": [-1, -1, -1], "max": [0.02, 1, 1] } },
      { "region": { "min": [0.172, -1, -1], "max": [1, 1, 1] }, "velocity": [0.05, 0, 0] } ])",
                            1e4, "bdf2");
  scene.implicit.fracture_transient = 2;
  return scene;
}

inline const char* kCantilever = R"("gravity": [0, 0, -9.81],
  "boundary_conditions": [ { "region": { "min": [-1, -1, -1], "max": [0.02, 1, 1] } } ])";

// A scene shipped in inputs/bdem/ (under $PERCUSSION_SOURCE_DIR, else the working directory).
inline bdem::BdemScene shipped_scene(const std::string& name) {
  const char* dir = std::getenv("PERCUSSION_SOURCE_DIR");
  return bdem::parse_scene_file(std::string(dir ? dir : ".") + "/inputs/bdem/" + name);
}

// What a run leaves: positions and broken bonds (gathered), counters and observables, and its time.
struct Outcome {
  std::vector<double> x;
  std::vector<std::int64_t> broken;
  std::map<std::string, double> counters;
  bdem::Totals final;
  double time = 0;
};

// Runs the scene for `steps` steps, or to its end time when steps < 0.
inline Outcome run(const bdem::BdemScene& scene, int steps = -1) {
  ImplicitBdem m(scene, MPI_COMM_WORLD, bdem::model_from_scene(scene));
  if (steps < 0)
    while (m.time() < scene.time.end - 1e-12) m.advance();
  for (int s = 0; s < steps; ++s) m.advance();
  return {positions(MPI_COMM_WORLD, m), broken_bonds(MPI_COMM_WORLD, m), m.counters(), m.totals(), m.time()};
}

// Two paths to the same minimisers: the same broken bonds (more than `broken`) and positions within 1e-7.
inline void expect_same_minimisers(const Outcome& a, const Outcome& b, std::size_t broken) {
  ASSERT_GT(b.broken.size(), broken);
  EXPECT_EQ(a.broken, b.broken);
  EXPECT_LE(max_rel_diff(a.x, b.x), 1e-7);
}

// Sizes of the pieces the intact bonds hold together (connected components over all particles), largest first,
// on every rank.
inline std::vector<int> pieces(MPI_Comm comm, const bdem::BdemMethod& m) {
  const std::int64_t nb = m.global_bonds();
  std::vector<std::int64_t> local(2 * nb, -1), ends(2 * nb);
  for (const auto& b : m.bonds())
    if (b.intact) {
      local[2 * b.id] = b.a;
      local[2 * b.id + 1] = b.b;
    }
  MPI_Allreduce(local.data(), ends.data(), static_cast<int>(ends.size()), MPI_INT64_T, MPI_MAX, comm);
  std::vector<std::int64_t> root(m.global_particles());
  for (std::size_t i = 0; i < root.size(); ++i) root[i] = static_cast<std::int64_t>(i);
  auto find = [&](std::int64_t i) {
    while (root[i] != i) i = root[i] = root[root[i]];
    return i;
  };
  for (std::int64_t k = 0; k < nb; ++k)
    if (ends[2 * k] >= 0) root[find(ends[2 * k])] = find(ends[2 * k + 1]);
  std::map<std::int64_t, int> size;
  for (std::size_t i = 0; i < root.size(); ++i) ++size[find(static_cast<std::int64_t>(i))];
  std::vector<int> sizes;
  for (const auto& [r, n] : size) sizes.push_back(n);
  std::sort(sizes.rbegin(), sizes.rend());
  return sizes;
}


// Advances both runs `steps` steps: bit-identical positions and velocities.
inline void expect_same_steps(ImplicitBdem& a, ImplicitBdem& b, int steps) {
  for (int s = 0; s < steps; ++s) {
    a.advance();
    b.advance();
  }
  EXPECT_EQ(positions(MPI_COMM_WORLD, a), positions(MPI_COMM_WORLD, b));
  EXPECT_EQ(velocities(MPI_COMM_WORLD, a), velocities(MPI_COMM_WORLD, b));
}

// The block with a twisted, translating end (its rotation centre moves) and a floor with friction, one Newton
// iteration per try and one cut: every full step is cut once and every half step is left unconverged.
inline bdem::BdemScene cut_scene(const std::string& form) {
  bdem::BdemScene cut = block_scene(R"("gravity": [0, 0, -9.81],
    "obstacles": [ { "type": "plane", "point": [0, 0, 0.002], "normal": [0, 0, 1] } ],
    "boundary_conditions": [ { "region": { "min": [-1, -1, -1], "max": [0.02, 1, 1] },
                               "velocity": [0.2, 0, 0], "angular_velocity": [0, 0, 5],
                               "center": [0, 0.064, 0.064] } ])",
                          1e12, form);
  cut.implicit.max_iterations = 1;
  cut.implicit.step_cuts = 1;
  // One Newton iteration per try makes the state depend on the matrix used: no matrix carried from step to step
  // (a half step would carry another one than the run at half the step does).
  cut.implicit.hessian_lag_contraction = 0;
  return cut;
}

}  // namespace percussion::test
