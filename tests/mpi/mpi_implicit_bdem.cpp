// Implicit bonded DEM on 1, 2 and 3 ranks: unit quaternions, backward Euler's energy decay, momentum,
// agreement with a single-rank run, and restarts.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "percussion/core/scene.hpp"
#include "percussion/methods/bdem/checkpoint.hpp"
#include "percussion/methods/bdem/implicit_bdem.hpp"
#include "../support/bdem_test_support.hpp"

using namespace percussion;
using bdem::ImplicitBdem;
using namespace percussion::test;

namespace {

// A 12 r x 8 r x 8 r bonded block, 20 critical steps per step, tight Newton tolerance.
Scene block_scene(const std::string& extra, double strength = 1e12) {
  const std::string text = R"({ "method": "bdem", "integrator": "implicit",
    "materials": [ { "name": "m", "density": 1000, "youngs_modulus": 1e7, "tensile_strength": )" +
                           std::to_string(strength) + R"(, "friction": 0.3 } ],
    "bodies": [ { "material": "m", "particle_radius": 0.016,
                  "shape": { "type": "box", "min": [0, 0, 0], "max": [0.192, 0.128, 0.128] } } ],
    "implicit": { "tolerance": 1e-10, "step_factor": 20 },
    "time": { "end": 1.0 }, "output": { "frame_interval": 1.0 })" +
                           (extra.empty() ? "" : ", " + extra) + "}";
  return parse_scene_text(text, "implicit-test.json");
}





const char* kCantilever = R"("gravity": [0, 0, -9.81],
  "boundary_conditions": [ { "region": { "min": [-1, -1, -1], "max": [0.02, 1, 1] } } ])";

}  // namespace

// Free block, conservative forces only: backward Euler never adds energy; momenta are conserved to the
// solver tolerance; quaternions stay unit.
TEST(ImplicitBdem, FreeBlockLosesEnergyMonotonicallyAndKeepsMomentum) {
  const Scene scene = block_scene("");
  bdem::GlobalModel g = bdem::model_from_scene(scene);
  shake(g, 0.05);
  ImplicitBdem m(scene, MPI_COMM_WORLD, g);
  Observables before = m.observables();
  const Observables first = before;
  for (int s = 0; s < 30; ++s) {
    m.advance();
    const Observables now = m.observables();
    EXPECT_LE(now.total, before.total * (1 + 1e-10)) << "step " << s;
    EXPECT_LE(max_unit_error(MPI_COMM_WORLD, m), 1e-12) << "step " << s;
    before = now;
  }
  EXPECT_LT(before.total, first.total);  // backward Euler damps
  EXPECT_GT(before.total, 0.0);
  double p_scale = 0;
  for (int d = 0; d < 3; ++d) p_scale = std::max(p_scale, std::abs(first.momentum[d]));
  for (int d = 0; d < 3; ++d) EXPECT_NEAR(before.momentum[d], first.momentum[d], 1e-6 * p_scale + 1e-12) << d;
  EXPECT_EQ(before.bonds_broken, 0);
}

// A clamped cantilever sagging under gravity: the same positions on this communicator and on one rank.
TEST(ImplicitBdem, RanksAgreeWithSerialRun) {
  const Scene scene = block_scene(kCantilever);
  ImplicitBdem world(scene, MPI_COMM_WORLD, bdem::model_from_scene(scene));
  ImplicitBdem serial(scene, MPI_COMM_SELF, bdem::model_from_scene(scene));
  for (int s = 0; s < 15; ++s) {
    world.advance();
    serial.advance();
  }
  const auto xs = positions(MPI_COMM_SELF, serial), xw = positions(MPI_COMM_WORLD, world);
  EXPECT_LE(max_rel_diff(xs, xw), 1e-8);
  // The tip has sagged: the test would notice a solver that did nothing.
  double z_min = 1e9;
  for (std::size_t i = 2; i < xs.size(); i += 3) z_min = std::min(z_min, xs[i]);
  EXPECT_LT(z_min, 0.016 - 1e-5);
  EXPECT_LE(max_unit_error(MPI_COMM_WORLD, world), 1e-12);
}

// Checkpoint half-way: bit-identical on the same communicator, equal to the solver tolerance on one rank.
TEST(ImplicitBdem, RestartContinuesTheRun) {
  const Scene scene = block_scene(kCantilever);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string dir = shared_temp_dir(), path = dir + "/half.h5";
  ASSERT_FALSE(dir.empty());

  ImplicitBdem full(scene, MPI_COMM_WORLD, bdem::model_from_scene(scene));
  for (int s = 0; s < 6; ++s) full.advance();
  full.write_checkpoint(path);
  for (int s = 0; s < 6; ++s) full.advance();
  const auto x_full = positions(MPI_COMM_WORLD, full);

  ImplicitBdem same(scene, MPI_COMM_WORLD, bdem::model_from_checkpoint(path, MPI_COMM_WORLD));
  for (int s = 0; s < 6; ++s) same.advance();
  EXPECT_EQ(positions(MPI_COMM_WORLD, same), x_full);

  ImplicitBdem one(scene, MPI_COMM_SELF, bdem::model_from_checkpoint(path, MPI_COMM_SELF));
  for (int s = 0; s < 6; ++s) one.advance();
  EXPECT_LE(max_rel_diff(x_full, positions(MPI_COMM_SELF, one)), 1e-8);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::filesystem::remove_all(dir);
}

// Notes T8: a cantilever drape at one step per frame (1/60 s, ~160x the explicit step) stays stable: no
// blow-up (advance throws on non-finite state), no inversion, energy never grows, and the tip sags.
TEST(ImplicitBdem, DrapeIsStableAtOneStepPerFrame) {
  const Scene scene = parse_scene_text(R"({ "method": "bdem", "integrator": "implicit",
    "materials": [ { "name": "m", "density": 1000, "youngs_modulus": 1e7, "tensile_strength": 1e12 } ],
    "bodies": [ { "material": "m", "particle_radius": 0.016,
                  "shape": { "type": "box", "min": [0, 0, 0.5], "max": [0.6, 0.1, 0.6] } } ],
    "boundary_conditions": [ { "region": { "min": [-1, -1, -1], "max": [0.04, 1, 2] } } ],
    "gravity": [0, 0, -9.81], "time": { "end": 1.0, "step": 0.0166667 }, "output": { "frame_interval": 1 } })",
                                       "drape.json");
  ImplicitBdem m(scene, MPI_COMM_WORLD, bdem::model_from_scene(scene));
  double before = m.observables().total;
  for (int s = 0; s < 30; ++s) {
    m.advance();
    const double now = m.observables().total;
    EXPECT_LE(now, before + 1e-9 * std::abs(before)) << "step " << s;
    before = now;
  }
  EXPECT_LE(max_unit_error(MPI_COMM_WORLD, m), 1e-12);
  const auto x = positions(MPI_COMM_WORLD, m);
  double z_min = 1e9, x_max = 0;
  for (std::size_t i = 0; i < x.size(); i += 3) {
    x_max = std::max(x_max, x[i]);
    z_min = std::min(z_min, x[i + 2]);
  }
  EXPECT_LT(z_min, 0.516 - 5e-3);  // sagged by more than 5 mm ...
  EXPECT_GT(z_min, 0.45);          // ... but stays a bent beam
  EXPECT_NEAR(x_max, 0.576, 0.01);  // no inversion or stretching along the beam
}
