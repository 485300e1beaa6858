// Implicit bonded DEM on 1, 2 and 3 ranks: unit quaternions, backward Euler's energy decay, momentum,
// agreement with a single-rank run, and restarts; the midpoint form's energy behaviour, order and restarts.
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

#include "percussion/methods/bdem/create.hpp"
#include "percussion/methods/bdem/scene.hpp"
#include "percussion/methods/bdem/checkpoint.hpp"
#include "percussion/methods/bdem/explicit_bdem.hpp"
#include "percussion/methods/bdem/implicit_bdem.hpp"
#include "percussion/methods/method.hpp"
#include "percussion/physics/manifold_bond.hpp"
#include "percussion/physics/quaternion.hpp"
#include "../support/bdem_test_support.hpp"

using namespace percussion;
using bdem::ImplicitBdem;
using namespace percussion::test;

namespace {

// A 12 r x 8 r x 8 r bonded block, 20 critical steps per step, tight Newton tolerance.
bdem::BdemScene block_scene(const std::string& extra, double strength = 1e12, const std::string& form = "backward_euler") {
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
bdem::BdemScene chain_scene(const std::string& form, double h) {
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
bdem::BdemScene pulled_block_scene(const std::string& form) {
  return block_scene(R"("boundary_conditions": [
      { "region": { "min": [-1, -1, -1], "max": [0.02, 1, 1] } },
      { "region": { "min": [0.172, -1, -1], "max": [1, 1, 1] }, "velocity": [0.5, 0, 0] } ])",
                     1e4, form);
}

// The weak block pulled at 0.05 m/s, its first bonds just over strength at the end of the first step, with
// implicit.fracture_transient 2.
bdem::BdemScene transient_block_scene() {
  bdem::BdemScene scene = block_scene(R"("boundary_conditions": [
      { "region": { "min": [-1, -1, -1], "max": [0.02, 1, 1] } },
      { "region": { "min": [0.172, -1, -1], "max": [1, 1, 1] }, "velocity": [0.05, 0, 0] } ])",
                            1e4, "bdf2");
  scene.implicit.fracture_transient = 2;
  return scene;
}

const char* kCantilever = R"("gravity": [0, 0, -9.81],
  "boundary_conditions": [ { "region": { "min": [-1, -1, -1], "max": [0.02, 1, 1] } } ])";

// A scene shipped in inputs/bdem/ (under $PERCUSSION_SOURCE_DIR, else the working directory).
bdem::BdemScene shipped_scene(const std::string& name) {
  const char* dir = std::getenv("PERCUSSION_SOURCE_DIR");
  return bdem::parse_scene_file(std::string(dir ? dir : ".") + "/inputs/bdem/" + name);
}

// What a run leaves: positions and broken bonds (gathered), counters and observables, and its time.
struct Outcome {
  std::vector<double> x;
  std::vector<std::int64_t> broken;
  std::map<std::string, double> counters;
  Observables final;
  double time = 0;
};

// Runs the scene for `steps` steps, or to its end time when steps < 0.
Outcome run(const bdem::BdemScene& scene, int steps = -1) {
  ImplicitBdem m(scene, MPI_COMM_WORLD, bdem::model_from_scene(scene));
  if (steps < 0)
    while (m.time() < scene.time.end - 1e-12) m.advance();
  for (int s = 0; s < steps; ++s) m.advance();
  return {positions(MPI_COMM_WORLD, m), broken_bonds(MPI_COMM_WORLD, m), m.counters(), m.totals(), m.time()};
}

// Two paths to the same minimisers: the same broken bonds (more than `broken`) and positions within 1e-7.
void expect_same_minimisers(const Outcome& a, const Outcome& b, std::size_t broken) {
  ASSERT_GT(b.broken.size(), broken);
  EXPECT_EQ(a.broken, b.broken);
  EXPECT_LE(max_rel_diff(a.x, b.x), 1e-7);
}

// Sizes of the pieces the intact bonds hold together (connected components over all particles), largest first,
// on every rank.
std::vector<int> pieces(MPI_Comm comm, const bdem::BdemMethod& m) {
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

}  // namespace

// Free block, conservative forces only: backward Euler never adds energy; momenta are conserved to the
// solver tolerance; quaternions stay unit.
TEST(ImplicitBdem, FreeBlockLosesEnergyMonotonicallyAndKeepsMomentum) {
  const bdem::BdemScene scene = block_scene("");
  bdem::GlobalModel g = bdem::model_from_scene(scene);
  shake(g, 0.05);
  ImplicitBdem m(scene, MPI_COMM_WORLD, g);
  Observables before = m.totals();
  const Observables first = before;
  for (int s = 0; s < 30; ++s) {
    m.advance();
    const Observables now = m.totals();
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
// With the default preconditioner (IC(0) blocks) and with D-ILU blocks applied by Eisenstat's trick, whose
// operator includes the blocks coupling the ranks.
TEST(ImplicitBdem, RanksAgreeWithSerialRun) {
  bdem::BdemScene dilu = block_scene(kCantilever);
  dilu.implicit.petsc_options = {{"-bdem_sub_pc_type", "dilu"}};
  for (const bdem::BdemScene& scene : {block_scene(kCantilever), dilu, block_scene(kCantilever, 1e12, "bdf2")}) {
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
}

// Loose spheres in touch (no bonds, no gravity), jostled, with friction and rolling friction: friction acts on
// the slips at the contact points, so momentum holds, a velocity common to every particle only carries the result
// along (the notes' post-process, capped against each particle's own velocity, braked it), and the ranks agree with
// one.
TEST(ImplicitBdem, FrictionActsOnSlipsAlone) {
  struct Run {
    std::vector<double> x, v;
    std::array<double, 3> p0, p;
    long contacts;
    double time;
  };
  const Eigen::Vector3d drift(3, -2, 1);
  double mass = 0;
  auto run_loose = [&](double friction, const Eigen::Vector3d& common, MPI_Comm comm) {
    const bdem::BdemScene scene = bdem::parse_scene_text(R"({ "method": "bdem", "integrator": "implicit",
      "materials": [ { "name": "m", "density": 1000, "youngs_modulus": 1e7, "tensile_strength": 1e12,
                       "friction": )" + std::to_string(friction) + R"(, "rolling_friction": )" +
                                             std::to_string(0.2 * friction) + R"( } ],
      "bodies": [ { "material": "m", "particle_radius": 0.016, "bonded": false,
                    "shape": { "type": "box", "min": [0, 0, 0], "max": [0.192, 0.128, 0.128] } } ],
      "implicit": { "tolerance": 1e-10, "step_factor": 20, "form": "bdf2" },
      "time": { "end": 1.0 }, "output": { "frame_interval": 1.0 } })",
                                         "loose.json");
    bdem::GlobalModel g = bdem::model_from_scene(scene);
    shake(g, 0.05);
    mass = 0;
    for (std::size_t i = 0; i < g.v.size(); ++i) {
      g.v[i] += common;
      mass += g.mass[i];
    }
    ImplicitBdem m(scene, comm, g);
    Run r;
    r.p0 = m.totals().momentum;
    long contacts = 0;
    for (int s = 0; s < 15; ++s) {
      m.advance();
      contacts = std::max(contacts, m.totals().contacts);
    }
    r.x = positions(comm, m);
    r.v = velocities(comm, m);
    r.p = m.totals().momentum;
    r.contacts = contacts;
    r.time = m.time();
    return r;
  };
  const Run a = run_loose(0.5, Eigen::Vector3d::Zero(), MPI_COMM_WORLD);
  const Run carried = run_loose(0.5, drift, MPI_COMM_WORLD);
  const Run serial = run_loose(0.5, Eigen::Vector3d::Zero(), MPI_COMM_SELF);
  const Run frictionless = run_loose(0.0, Eigen::Vector3d::Zero(), MPI_COMM_WORLD);
  EXPECT_GT(a.contacts, 20);
  EXPECT_GT(max_rel_diff(a.x, frictionless.x), 1e-6);  // friction acted
  for (int d = 0; d < 3; ++d) {
    EXPECT_NEAR(a.p[d], a.p0[d], 1e-6 * 0.05 * mass) << d;
    EXPECT_NEAR(carried.p[d], carried.p0[d], 1e-6 * drift.norm() * mass) << d;
  }
  std::vector<double> back_x = carried.x, back_v = carried.v;
  for (std::size_t i = 0; i < back_x.size(); ++i) {
    back_x[i] -= drift[static_cast<int>(i % 3)] * carried.time;
    back_v[i] -= drift[static_cast<int>(i % 3)];
  }
  EXPECT_LE(max_rel_diff(a.x, back_x), 1e-8);
  EXPECT_LE(max_rel_diff(a.v, back_v), 1e-6);
  EXPECT_LE(max_rel_diff(serial.x, a.x), 1e-8);
  EXPECT_LE(max_rel_diff(serial.v, a.v), 1e-6);
}

// A step cut (the minimisation did not converge in max_iterations) is taken again as two half steps from the
// step's start: the same state as a run at half the step, in both forms (the midpoint form's predictor carries
// ∇V from the last midpoint, which a failed attempt overwrites). A twisted, translating end (its rotation centre
// moves, so the second half must start at the right time) and a floor with friction; one Newton iteration per
// try, so every full step is cut once and every half step is left unconverged.
bdem::BdemScene cut_scene(const std::string& form) {
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

TEST(ImplicitBdem, CutStepIsTwoHalfSteps) {
  for (const std::string form : {"backward_euler", "midpoint", "bdf2"}) {
    const bdem::BdemScene cut = cut_scene(form);
    bdem::BdemScene halves = cut;
    halves.implicit.step_cuts = 0;
    halves.time.step = 0.5 * bdem::model_from_scene(cut).time_step;
    ImplicitBdem a(cut, MPI_COMM_WORLD, bdem::model_from_scene(cut));
    ImplicitBdem b(halves, MPI_COMM_WORLD, bdem::model_from_scene(halves));
    for (int s = 0; s < 4; ++s) {
      a.advance();
      b.advance();
      b.advance();
    }
    EXPECT_NEAR(a.time(), b.time(), 1e-12) << form;
    EXPECT_EQ(a.counters().at("step_cuts"), 4) << form;
    EXPECT_EQ(a.counters().at("unconverged_steps"), 8) << form;
    EXPECT_EQ(b.counters().at("unconverged_steps"), 8) << form;
    EXPECT_GT(a.totals().contacts, 0) << form;  // the floor carries the block, so friction acted
    EXPECT_LE(max_rel_diff(positions(MPI_COMM_WORLD, b), positions(MPI_COMM_WORLD, a)), 1e-12) << form;
    EXPECT_LE(max_rel_diff(velocities(MPI_COMM_WORLD, b), velocities(MPI_COMM_WORLD, a)), 1e-10) << form;
  }
}

// A converged step that leaves a bond far over its strength (implicit.fracture_cut_ratio) is undone and taken as
// two half steps: the same state and broken bonds as a run at half the step, in both forms. A weak block pulled
// apart at one end: the first step's end state is several times over strength, so it is cut once; without the
// ratio the same step breaks its bonds from a different state.
TEST(ImplicitBdem, FractureCutStepIsTwoHalfSteps) {
  for (const std::string form : {"backward_euler", "midpoint", "bdf2"}) {
    bdem::BdemScene cut = pulled_block_scene(form);
    cut.implicit.fracture_cut_ratio = 1.5;
    cut.implicit.step_cuts = 1;
    bdem::BdemScene plain = cut, halves = cut;
    plain.implicit.fracture_cut_ratio = 0;
    halves.implicit.fracture_cut_ratio = 0;
    halves.time.step = 0.5 * bdem::model_from_scene(cut).time_step;
    ImplicitBdem a(cut, MPI_COMM_WORLD, bdem::model_from_scene(cut));
    ImplicitBdem p(plain, MPI_COMM_WORLD, bdem::model_from_scene(plain));
    ImplicitBdem b(halves, MPI_COMM_WORLD, bdem::model_from_scene(halves));
    a.advance();
    p.advance();
    b.advance();
    b.advance();
    EXPECT_EQ(a.counters().at("fracture_cuts"), 1) << form;
    EXPECT_EQ(a.counters().at("step_cuts"), 0) << form;
    EXPECT_EQ(p.counters().at("fracture_cuts"), 0) << form;
    EXPECT_EQ(a.counters().at("unconverged_steps") + b.counters().at("unconverged_steps"), 0) << form;
    const long broken = b.totals().bonds_broken;
    EXPECT_GT(broken, 0) << form;
    EXPECT_EQ(a.totals().bonds_broken, broken) << form;
    EXPECT_LE(max_rel_diff(positions(MPI_COMM_WORLD, b), positions(MPI_COMM_WORLD, a)), 1e-12) << form;
    EXPECT_LE(max_rel_diff(velocities(MPI_COMM_WORLD, b), velocities(MPI_COMM_WORLD, a)), 1e-10) << form;
    EXPECT_GT(max_rel_diff(positions(MPI_COMM_WORLD, b), positions(MPI_COMM_WORLD, p)), 1e-6) << form;
  }
}

// implicit.fracture_rounds: a step whose bonds break breaks the most over-stressed first and minimises again, so
// the load redistributes before the rest are judged. A weak block clamped at one end and pulled at the other,
// several times past its strength within the first step: the paper's single check breaks every bond over strength
// in that state, all through the block; the rounds break where it parts first, and the pieces then carry no load.
// Every rank decides each round alike (the serial run's bonds and state).
TEST(ImplicitBdem, FractureRoundsLetTheLoadRedistribute) {
  bdem::BdemScene rounds = pulled_block_scene("bdf2");
  rounds.implicit.fracture_rounds = 50;
  bdem::BdemScene single = rounds;
  single.implicit.fracture_rounds = 1;
  ImplicitBdem world(rounds, MPI_COMM_WORLD, bdem::model_from_scene(rounds));
  ImplicitBdem serial(rounds, MPI_COMM_SELF, bdem::model_from_scene(rounds));
  ImplicitBdem plain(single, MPI_COMM_WORLD, bdem::model_from_scene(single));
  for (int s = 0; s < 3; ++s) {
    world.advance();
    serial.advance();
    plain.advance();
  }
  const auto broken = broken_bonds(MPI_COMM_WORLD, world), all_over = broken_bonds(MPI_COMM_WORLD, plain);
  const std::vector<int> parts = pieces(MPI_COMM_WORLD, world), shards = pieces(MPI_COMM_WORLD, plain);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)  // 100 bonds in 19 rounds, 6 pieces (the largest 80 particles); 320 bonds and 48 pieces
    std::printf("%zu bonds broken in %g rounds, %zu pieces (the largest %d); the single check: %zu bonds, %zu pieces\n",
                broken.size(), world.counters().at("fracture_rounds"), parts.size(), parts[0], all_over.size(),
                shards.size());
  EXPECT_GT(world.counters().at("fracture_rounds"), 1);
  EXPECT_EQ(plain.counters().at("fracture_rounds"), 0);
  EXPECT_GT(broken.size(), 0u);
  EXPECT_LT(2 * broken.size(), all_over.size());
  EXPECT_GE(parts.size(), 2u);  // it parted
  EXPECT_LT(2 * parts.size(), shards.size());
  EXPECT_EQ(broken, broken_bonds(MPI_COMM_SELF, serial));
  EXPECT_LE(max_rel_diff(positions(MPI_COMM_SELF, serial), positions(MPI_COMM_WORLD, world)), 1e-8);
}

// implicit.fracture_integrator "explicit": an interval whose minimisation would break bonds is undone and taken with
// the explicit integrator's steps, as are the explicit_window intervals after one that broke bonds. The weak pulled
// block breaks in its first interval: that interval is the explicit run's first N steps to the bit (the same
// state, forces and time), and with a long window every later interval is explicit too. Every rank count breaks
// the serial run's bonds; without a window the run goes back to minimising once the block has parted.
TEST(ImplicitBdem, ExplicitFractureTakesTheExplicitRunsSteps) {
  bdem::BdemScene hybrid = pulled_block_scene("bdf2");
  hybrid.implicit.fracture_integrator = "explicit";
  hybrid.implicit.explicit_window = 1000;
  const double h = bdem::model_from_scene(hybrid).time_step;
  const auto n = static_cast<int>(std::ceil(h / (hybrid.time.step_factor * bdem::critical_step(hybrid)) * (1 - 1e-12)));
  bdem::BdemScene expl = hybrid, closing = hybrid;
  expl.integrator = "explicit";
  expl.time.step = h / n;
  closing.implicit.explicit_window = 0;
  ImplicitBdem world(hybrid, MPI_COMM_WORLD, bdem::model_from_scene(hybrid));
  ImplicitBdem serial(hybrid, MPI_COMM_SELF, bdem::model_from_scene(hybrid));
  ImplicitBdem closed(closing, MPI_COMM_WORLD, bdem::model_from_scene(closing));
  bdem::ExplicitBdem reference(expl, MPI_COMM_WORLD, bdem::model_from_scene(expl));
  world.advance();
  for (int s = 0; s < n; ++s) reference.advance();
  ASSERT_GT(broken_bonds(MPI_COMM_WORLD, reference).size(), 0u);
  EXPECT_EQ(broken_bonds(MPI_COMM_WORLD, world), broken_bonds(MPI_COMM_WORLD, reference));
  EXPECT_EQ(positions(MPI_COMM_WORLD, world), positions(MPI_COMM_WORLD, reference));
  EXPECT_EQ(velocities(MPI_COMM_WORLD, world), velocities(MPI_COMM_WORLD, reference));
  for (int s = 1; s < 4; ++s) world.advance();
  for (int s = 0; s < 4; ++s) {
    serial.advance();
    closed.advance();
  }
  EXPECT_EQ(world.counters().at("explicit_intervals"), 4);
  EXPECT_EQ(world.counters().at("explicit_steps"), 4 * n);
  EXPECT_EQ(broken_bonds(MPI_COMM_WORLD, world), broken_bonds(MPI_COMM_SELF, serial));
  EXPECT_LE(max_rel_diff(positions(MPI_COMM_SELF, serial), positions(MPI_COMM_WORLD, world)), 1e-8);
  const std::size_t closed_broken = broken_bonds(MPI_COMM_WORLD, closed).size();
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)  // 100 steps; 1 of 4 intervals, 32 bonds
    std::printf("%d explicit steps per interval; without a window %g of 4 intervals explicit, %zu bonds broken\n", n,
                closed.counters().at("explicit_intervals"), closed_broken);
  EXPECT_GE(closed.counters().at("explicit_intervals"), 1);
  EXPECT_LT(closed.counters().at("explicit_intervals"), 4);
}

// implicit.fracture_transient: after a step's check breaks bonds, the release is followed with the explicit
// integrator's steps from the step's end state until no bond has broken for the window, and the state goes back to
// the step's end. The slowly pulled weak block (transient_block_scene): the step's state is the plain run's to the
// bit; the bonds broken are those an explicit run continued from the plain run's checkpoint has broken after as many
// steps; every rank count breaks the serial run's bonds.
TEST(ImplicitBdem, FractureTransientBreaksWhatTheExplicitReleaseBreaks) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string dir = shared_temp_dir(), path = dir + "/plain.h5";
  ASSERT_FALSE(dir.empty());
  bdem::BdemScene transient = transient_block_scene();
  bdem::BdemScene plain = transient, expl = transient;
  plain.implicit.fracture_transient = 0;
  expl.integrator = "explicit";
  ImplicitBdem world(transient, MPI_COMM_WORLD, bdem::model_from_scene(transient));
  ImplicitBdem serial(transient, MPI_COMM_SELF, bdem::model_from_scene(transient));
  ImplicitBdem checked(plain, MPI_COMM_WORLD, bdem::model_from_scene(plain));
  int first = 0;  // the step whose check breaks the first bonds
  while (broken_bonds(MPI_COMM_WORLD, checked).empty() && first < 20) {
    world.advance();
    checked.advance();
    checked.write_checkpoint(path);
    ++first;
  }
  if (rank == 0) std::printf("first break in step %d\n", first);
  const auto steps = static_cast<long>(world.counters().at("transient_steps"));
  ASSERT_GT(steps, 0);
  EXPECT_EQ(positions(MPI_COMM_WORLD, world), positions(MPI_COMM_WORLD, checked));
  EXPECT_EQ(velocities(MPI_COMM_WORLD, world), velocities(MPI_COMM_WORLD, checked));
  std::unique_ptr<bdem::BdemMethod> release = bdem::create_from(expl, MPI_COMM_WORLD, path);
  for (long s = 0; s < steps; ++s) release->advance();
  const auto broken = broken_bonds(MPI_COMM_WORLD, world), at_check = broken_bonds(MPI_COMM_WORLD, checked);
  EXPECT_EQ(broken, broken_bonds(MPI_COMM_WORLD, dynamic_cast<const bdem::BdemMethod&>(*release)));
  EXPECT_GT(broken.size(), at_check.size());
  for (int s = 0; s < 3; ++s) world.advance();
  for (int s = 0; s < first + 3; ++s) serial.advance();
  const auto later = broken_bonds(MPI_COMM_WORLD, world);
  const std::size_t parts = pieces(MPI_COMM_WORLD, world).size();
  EXPECT_EQ(later, broken_bonds(MPI_COMM_SELF, serial));
  EXPECT_LE(max_rel_diff(positions(MPI_COMM_SELF, serial), positions(MPI_COMM_WORLD, world)), 1e-8);
  if (rank == 0)
    std::printf("the step's check: %zu bonds; with %ld transient steps: %zu; after 4 steps: %zu bonds, %zu pieces\n",
                at_check.size(), steps, broken.size(), later.size(), parts);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::filesystem::remove_all(dir);
}

// implicit.fracture_transient_reach: only the particles near the transient's breaks take its steps. Reaching past
// the block it is the whole-body transient to the bit. A reach of 3 r moves part of the block and still breaks
// more than the step's check, and every rank count breaks the serial run's bonds.
TEST(ImplicitBdem, FractureTransientReachMovesTheParticlesNearTheBreaks) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const bdem::BdemScene whole = transient_block_scene();
  bdem::BdemScene far = whole, near = whole, plain = whole;
  far.implicit.fracture_transient_reach = 100;  // 1.6 m
  near.implicit.fracture_transient_reach = 3;
  plain.implicit.fracture_transient = 0;
  constexpr int kSteps = 5;
  const Outcome a = run(whole, kSteps), b = run(far, kSteps), c = run(near, kSteps), checked = run(plain, kSteps);
  ImplicitBdem serial(near, MPI_COMM_SELF, bdem::model_from_scene(near));
  for (int s = 0; s < kSteps; ++s) serial.advance();
  ASSERT_GT(a.counters.at("transient_steps"), 0);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.broken, b.broken);
  EXPECT_EQ(b.counters.at("transient_moving_share"), 1.0);
  const double share = c.counters.at("transient_moving_share");
  EXPECT_GT(share, 0.0);
  EXPECT_LT(share, 0.9);
  EXPECT_GT(c.broken.size(), checked.broken.size());
  EXPECT_EQ(c.broken, broken_bonds(MPI_COMM_SELF, serial));
  EXPECT_LE(max_rel_diff(positions(MPI_COMM_SELF, serial), c.x), 1e-8);
  if (rank == 0)
    std::printf("broken bonds: check %zu, whole-body transient %zu, reach 3 r %zu (moving share %.2f)\n",
                checked.broken.size(), a.broken.size(), c.broken.size(), share);
}

// A contact refresh keeps the bonds' blocks of the step's last full assembly only while no particle has turned by
// 0.01 rad since. The small stretched beam's end pieces turn by 0.03-0.1 rad in a step as they come off; with
// their old blocks Newton took 27.4 iterations per step there (7.9 with the rule).
TEST(ImplicitBdem, ContactRefreshAssemblesTurnedBondsAgain) {
  bdem::BdemScene scene = shipped_scene("beam_stretch_small.json");
  scene.implicit.fracture_transient = 2;
  scene.implicit.fracture_transient_reach = 3;
  const Outcome o = run(scene);
  EXPECT_GT(o.counters.at("stale_bond_assemblies"), 0);
  EXPECT_GT(o.counters.at("contact_refreshes"), 0);
  EXPECT_LT(o.counters.at("newton_per_step"), 12);
}

// A bonded cluster of 7 spheres spinning freely at 6.3 rad/s, 0.1 rad per frame step: the straight-line guess
// x_n + h v_n starts each step stretched (by about (ωh)²/2), and the bonds' blocks of that guess are far too stiff
// for the spin. A contact refresh that kept them took 187 Newton iterations over the 6 steps; assembled again once
// the bonds' lengths move, 53 (37 without refreshes).
TEST(ImplicitBdem, ContactRefreshAssemblesStretchedBondsAgain) {
  bdem::BdemScene scene = bdem::parse_scene_text(R"({ "method": "bdem", "integrator": "implicit",
    "materials": [ { "name": "m", "density": 1000, "youngs_modulus": 1e7, "tensile_strength": 1e12 } ],
    "bodies": [ { "material": "m", "particle_radius": 0.016, "velocity": [0.5, 0, 0], "angular_velocity": [0, 1.8, 6],
                  "shape": { "type": "box", "min": [0, 0, 0], "max": [0.1, 0.06, 0.06] } } ],
    "implicit": { "form": "backward_euler", "split_above_iterations": 0 },
    "time": { "end": 0.1, "step": 0.0166667 }, "output": { "frame_interval": 1.0 } })",
                                 "spinning-cluster.json");
  const Outcome o = run(scene);
  ASSERT_EQ(o.x.size(), 3u * 7u);
  EXPECT_GT(o.counters.at("stale_bond_assemblies"), 0);
  EXPECT_LT(o.counters.at("newton_per_step"), 12);
  scene.implicit.contact_refresh = false;
  const Outcome fresh = run(scene);
  EXPECT_LE(max_rel_diff(o.x, fresh.x), 1e-5);
}

// The same cantilever with an algebraic multigrid (scene petsc_options, rigid-body near-nullspace) and with
// the preconditioner rebuilt every Newton iteration, and with D-ILU blocks: all solve to the Newton tolerance, so
// they agree with the default (block Jacobi, lagged within a step) to well below the sag. The multigrid needs
// fewer CG iterations.
TEST(ImplicitBdem, MultigridAndFreshPreconditionersAgreeWithDefault) {
  const bdem::BdemScene base = block_scene(kCantilever);
  bdem::BdemScene gamg = base, fresh = base, dilu = base;
  gamg.implicit.petsc_options = {{"-bdem_pc_type", "gamg"}};
  fresh.implicit.reuse_preconditioner = false;
  dilu.implicit.petsc_options = {{"-bdem_sub_pc_type", "dilu"}};
  std::vector<double> sag;
  std::vector<std::vector<double>> x;
  std::vector<double> krylov;
  for (const bdem::BdemScene* scene : std::vector<const bdem::BdemScene*>{&base, &gamg, &fresh, &dilu}) {
    ImplicitBdem m(*scene, MPI_COMM_WORLD, bdem::model_from_scene(*scene));
    for (int s = 0; s < 10; ++s) m.advance();
    x.push_back(positions(MPI_COMM_WORLD, m));
    krylov.push_back(m.counters().at("krylov_per_newton"));
  }
  double z_min = 1e9;
  for (std::size_t i = 2; i < x[0].size(); i += 3) z_min = std::min(z_min, x[0][i]);
  ASSERT_LT(z_min, 0.016 - 1e-5);  // it sagged
  EXPECT_LE(max_rel_diff(x[0], x[1]), 1e-7);
  EXPECT_LE(max_rel_diff(x[0], x[2]), 1e-7);
  EXPECT_LE(max_rel_diff(x[0], x[3]), 1e-7);
  EXPECT_LT(krylov[1], krylov[0]);
  // The scene's options left the database with the method.
  PetscBool set = PETSC_TRUE;
  PetscOptionsHasName(nullptr, nullptr, "-bdem_pc_type", &set);
  EXPECT_FALSE(set);
}

// Checkpoint half-way: bit-identical on the same communicator, equal to the solver tolerance on one rank.
void expect_restart_continues_the_run(const bdem::BdemScene& scene, int half = 6) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string dir = shared_temp_dir(), path = dir + "/half.h5";
  ASSERT_FALSE(dir.empty());

  ImplicitBdem full(scene, MPI_COMM_WORLD, bdem::model_from_scene(scene));
  for (int s = 0; s < half; ++s) full.advance();
  full.write_checkpoint(path);
  for (int s = 0; s < half; ++s) full.advance();
  const auto x_full = positions(MPI_COMM_WORLD, full);

  ImplicitBdem same(scene, MPI_COMM_WORLD, bdem::model_from_checkpoint(path, MPI_COMM_WORLD));
  for (int s = 0; s < half; ++s) same.advance();
  EXPECT_EQ(positions(MPI_COMM_WORLD, same), x_full);

  ImplicitBdem one(scene, MPI_COMM_SELF, bdem::model_from_checkpoint(path, MPI_COMM_SELF));
  for (int s = 0; s < half; ++s) one.advance();
  EXPECT_LE(max_rel_diff(x_full, positions(MPI_COMM_SELF, one)), 1e-8);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::filesystem::remove_all(dir);
}

TEST(ImplicitBdem, RestartContinuesTheRun) { expect_restart_continues_the_run(block_scene(kCantilever)); }

// The transient leaves nothing behind but broken bonds, so a checkpoint between breaking steps continues bit for bit.
TEST(ImplicitBdem, FractureTransientRestartContinuesTheRun) { expect_restart_continues_the_run(transient_block_scene(), 3); }
TEST(ImplicitBdem, FractureTransientReachRestartContinuesTheRun) {
  bdem::BdemScene scene = transient_block_scene();
  scene.implicit.fracture_transient_reach = 3;
  expect_restart_continues_the_run(scene, 3);
}

// A checkpoint continued by the other integrator: the run takes its own step from the checkpoint's time on (an
// explicit run at the implicit step would blow up at once). The pulled end follows its prescribed motion through
// both switches (with the time counted from step 0 at the new step, it would jump back to near its start), a
// restart of the continuation continues it bit for bit, and the way back to the implicit step keeps the time too.
TEST(ImplicitBdem, OtherIntegratorContinuesACheckpointAtItsOwnStep) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string dir = shared_temp_dir(), implicit_path = dir + "/implicit.h5", explicit_path = dir + "/explicit.h5";
  ASSERT_FALSE(dir.empty());
  bdem::BdemScene scene = pulled_block_scene("bdf2");
  for (auto& m : scene.materials) m.tensile_strength = m.shear_strength = 1e12;
  bdem::BdemScene explicit_scene = scene;
  explicit_scene.integrator = "explicit";
  const bdem::GlobalModel start = bdem::model_from_scene(scene);
  // The pulled end (boundary condition 1) at time t: where it started, moved by 0.5 m/s in x.
  auto expect_pulled_end_at = [&](const Method& m) {
    const auto& b = dynamic_cast<const bdem::BdemMethod&>(m);
    const std::vector<double> x = positions(MPI_COMM_WORLD, b);
    long pulled = 0;
    for (std::size_t i = 0; i < start.x.size(); ++i) {
      if (start.constraint[i] != 1) continue;
      ++pulled;
      EXPECT_NEAR(x[3 * i], start.x[i].x() + 0.5 * m.time(), 1e-12) << "particle " << i << " at t = " << m.time();
    }
    EXPECT_GT(pulled, 0);
  };

  ImplicitBdem implicit_run(scene, MPI_COMM_WORLD, start);
  for (int s = 0; s < 3; ++s) implicit_run.advance();
  implicit_run.write_checkpoint(implicit_path);
  const double t_switch = implicit_run.time(), h_explicit = bdem::scene_time_step(explicit_scene);
  ASSERT_LT(h_explicit * 50, implicit_run.time_step());

  std::unique_ptr<bdem::BdemMethod> continued = bdem::create_from(explicit_scene, MPI_COMM_WORLD, implicit_path);
  EXPECT_EQ(continued->step(), 3);
  EXPECT_EQ(continued->time(), t_switch);
  EXPECT_EQ(continued->time_step(), h_explicit);
  EXPECT_EQ(continued->step_at(t_switch + 100.5 * h_explicit), 3 + 101);
  for (int s = 0; s < 60; ++s) continued->advance();
  EXPECT_NEAR(continued->time(), t_switch + 60 * h_explicit, 1e-15);
  expect_pulled_end_at(*continued);
  EXPECT_LT(continued->totals().kinetic, 1.0);  // it did not blow up
  continued->write_checkpoint(explicit_path);
  for (int s = 0; s < 60; ++s) continued->advance();

  std::unique_ptr<bdem::BdemMethod> restarted = bdem::create_from(explicit_scene, MPI_COMM_WORLD, explicit_path);
  EXPECT_EQ(restarted->time(), t_switch + 60 * h_explicit);
  for (int s = 0; s < 60; ++s) restarted->advance();
  EXPECT_EQ(restarted->time(), continued->time());
  EXPECT_EQ(positions(MPI_COMM_WORLD, dynamic_cast<const bdem::BdemMethod&>(*restarted)),
            positions(MPI_COMM_WORLD, dynamic_cast<const bdem::BdemMethod&>(*continued)));

  std::unique_ptr<bdem::BdemMethod> back = bdem::create_from(scene, MPI_COMM_WORLD, explicit_path);
  EXPECT_EQ(back->time(), t_switch + 60 * h_explicit);
  EXPECT_EQ(back->time_step(), implicit_run.time_step());
  for (int s = 0; s < 2; ++s) back->advance();
  expect_pulled_end_at(*back);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::filesystem::remove_all(dir);
}

// A checkpoint inside an explicit window continues it: the restart takes the same explicit intervals.
TEST(ImplicitBdem, ExplicitFractureRestartContinuesTheRun) {
  bdem::BdemScene scene = pulled_block_scene("bdf2");
  scene.implicit.fracture_integrator = "explicit";
  scene.implicit.explicit_window = 2;
  expect_restart_continues_the_run(scene, 2);
}

// Three loose spheres resting on the cantilever: the matrix carried into the step after the checkpoint holds
// contact blocks along normals taken at a predictor, which the checkpoint keeps (particles/newton_matrix_state),
// so the restart assembles the same matrix and continues bit for bit.
TEST(ImplicitBdem, ContactRestartContinuesTheRun) {
  std::string loose;
  for (const char* xy : {"0.128, 0.0252376", "0.16, 0.08066323", "0.096, 0.08066323"})  // above top-layer particles
    loose += std::string(R"(, { "material": "m", "particle_radius": 0.016, "shape": { "type": "sphere", "center": [)") +
             xy + R"(, 0.12638267], "radius": 0.016 } })";
  const bdem::BdemScene scene = bdem::parse_scene_text(R"({ "method": "bdem", "integrator": "implicit",
    "materials": [ { "name": "m", "density": 1000, "youngs_modulus": 1e7, "tensile_strength": 1e12 } ],
    "bodies": [ { "material": "m", "particle_radius": 0.016,
                  "shape": { "type": "box", "min": [0, 0, 0], "max": [0.192, 0.128, 0.128] } })" + loose + R"( ],
    "implicit": { "tolerance": 1e-10, "step_factor": 20 },
    "time": { "end": 1.0 }, "output": { "frame_interval": 1.0 }, )" + std::string(kCantilever) + "}",
                                       "contact-restart.json");
  ASSERT_EQ(scene.implicit.contact_normal, "predicted");
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string dir = shared_temp_dir(), path = dir + "/probe.h5";
  ASSERT_FALSE(dir.empty());
  // Checkpoint after a step whose matrix the next step keeps (contacts neither open nor close); which steps
  // those are depends on the rounding, so on the rank count.
  int half = 0;
  {
    ImplicitBdem probe(scene, MPI_COMM_WORLD, bdem::model_from_scene(scene));
    double carried = 0;
    for (int s = 1; s <= 16 && half == 0; ++s) {
      probe.advance();
      const double now = probe.counters().at("carried_hessians");
      if (s > 6 && now > carried) half = s - 1;
      carried = now;
    }
  }
  ASSERT_GT(half, 0);
  {
    ImplicitBdem probe(scene, MPI_COMM_WORLD, bdem::model_from_scene(scene));
    for (int s = 0; s < half; ++s) probe.advance();
    EXPECT_EQ(probe.totals().contacts, 3);
    probe.write_checkpoint(path);
    const bdem::GlobalModel model = bdem::model_from_checkpoint(path, MPI_COMM_WORLD);
    EXPECT_EQ(model.newton_state.size(), 21 * model.radius.size());  // a matrix to carry
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::filesystem::remove_all(dir);
  expect_restart_continues_the_run(scene, half);
}

// An unbreakable plate bouncing on its rim: its steps refresh their contacts (contact refreshes, active-set
// rounds), and the next step keeps that refreshed matrix with its contacts brought up to date again. The restart
// assembles the matrix at the state its kept blocks are from and refreshes the contacts as the interrupted run
// does: bit for bit, the refreshes in between notwithstanding. (Before 2026-11-28 a refreshed matrix never carried;
// its refreshes added changes, which a restart could not repeat.)
TEST(ImplicitBdem, RefreshedMatrixCarriesAcrossARestart) {
  bdem::BdemScene scene = shipped_scene("plate_drop_small.json");
  for (Material& m : scene.materials) m.tensile_strength = m.shear_strength = 1e12;
  scene.implicit.tolerance = 1e-10;
  // The first step after one that refreshed its contacts and that keeps that step's matrix.
  int half = 0;
  {
    ImplicitBdem probe(scene, MPI_COMM_WORLD, bdem::model_from_scene(scene));
    auto refreshes = [&] { return probe.counters().at("contact_refreshes") + probe.counters().at("active_set_rounds"); };
    double carried = 0, refreshed = 0;
    bool refreshed_last = false;
    for (int s = 1; s <= 40 && half == 0; ++s) {
      probe.advance();
      const double c = probe.counters().at("carried_hessians"), r = refreshes();
      if (s > 2 && c > carried && refreshed_last) half = s - 1;
      refreshed_last = r > refreshed;  // (the carried step's own refresh counts too: the matrix it leaves is refreshed)
      carried = c;
      refreshed = r;
    }
  }
  ASSERT_GT(half, 0);
  expect_restart_continues_the_run(scene, half);
}

TEST(ImplicitBdem, DiluRestartContinuesTheRun) {
  bdem::BdemScene scene = block_scene(kCantilever);
  scene.implicit.petsc_options = {{"-bdem_sub_pc_type", "dilu"}};
  expect_restart_continues_the_run(scene);
}

// The midpoint form carries ∇V at the last midpoint through the checkpoint.
TEST(ImplicitBdem, MidpointRestartContinuesTheRun) {
  expect_restart_continues_the_run(block_scene(kCantilever, 1e12, "midpoint"));
}

// BDF2 carries x, q, v, ω of the last step's start (particles/bdf2_history) through the checkpoint.
TEST(ImplicitBdem, Bdf2RestartContinuesTheRun) {
  expect_restart_continues_the_run(block_scene(kCantilever, 1e12, "bdf2"));
}

// Runs whose every step is cut (cut_scene) restart bit-identically on the same ranks: a failed try's rebuilds
// and the half steps leave nothing behind that a checkpoint at the step's end does not carry.
TEST(ImplicitBdem, CutRestartContinuesTheRun) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string dir = shared_temp_dir(), path = dir + "/half.h5";
  ASSERT_FALSE(dir.empty());
  for (const std::string form : {"backward_euler", "midpoint", "bdf2"}) {
    const bdem::BdemScene scene = cut_scene(form);
    ImplicitBdem full(scene, MPI_COMM_WORLD, bdem::model_from_scene(scene));
    for (int s = 0; s < 3; ++s) full.advance();
    full.write_checkpoint(path);
    for (int s = 0; s < 3; ++s) full.advance();
    ImplicitBdem same(scene, MPI_COMM_WORLD, bdem::model_from_checkpoint(path, MPI_COMM_WORLD));
    for (int s = 0; s < 3; ++s) same.advance();
    EXPECT_EQ(same.counters().at("step_cuts"), 3) << form;
    EXPECT_EQ(positions(MPI_COMM_WORLD, same), positions(MPI_COMM_WORLD, full)) << form;
    EXPECT_EQ(velocities(MPI_COMM_WORLD, same), velocities(MPI_COMM_WORLD, full)) << form;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::filesystem::remove_all(dir);
}

// Notes T8: a cantilever drape at one step per frame (1/60 s, ~160x the explicit step) stays stable: no
// blow-up (advance throws on non-finite state), no inversion, energy never grows, and the tip sags.
TEST(ImplicitBdem, DrapeIsStableAtOneStepPerFrame) {
  const bdem::BdemScene scene = bdem::parse_scene_text(R"({ "method": "bdem", "integrator": "implicit",
    "materials": [ { "name": "m", "density": 1000, "youngs_modulus": 1e7, "tensile_strength": 1e12 } ],
    "bodies": [ { "material": "m", "particle_radius": 0.016,
                  "shape": { "type": "box", "min": [0, 0, 0.5], "max": [0.6, 0.1, 0.6] } } ],
    "boundary_conditions": [ { "region": { "min": [-1, -1, -1], "max": [0.04, 1, 2] } } ],
    "gravity": [0, 0, -9.81], "time": { "end": 1.0, "step": 0.0166667 }, "output": { "frame_interval": 1 } })",
                                       "drape.json");
  ImplicitBdem m(scene, MPI_COMM_WORLD, bdem::model_from_scene(scene));
  double before = m.totals().total;
  for (int s = 0; s < 30; ++s) {
    m.advance();
    const double now = m.totals().total;
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

// The energy the midpoint form conserves (exactly for quadratic V): ½vᵀMv + V((x_n + x_{n+1})/2), the velocity
// v = (x_{n+1} − x_n)/h being the mid-step one. Bonds only (no gravity, no contacts in these scenes).
double midpoint_energy(ImplicitBdem& m, const std::vector<double>& x0, const std::vector<double>& q0) {
  const auto x1 = positions(MPI_COMM_WORLD, m);
  const auto q1 = gather<4>(MPI_COMM_WORLD, m.owned_ids(), m.owned_quaternions(), m.global_particles());
  auto p_mid = [&](std::int64_t id) -> Eigen::Vector3d {
    return 0.5 * (Eigen::Map<const Eigen::Vector3d>(&x0[3 * id]) + Eigen::Map<const Eigen::Vector3d>(&x1[3 * id]));
  };
  auto q_mid = [&](std::int64_t id) -> Eigen::Vector4d {
    return 0.5 * (Eigen::Map<const Eigen::Vector4d>(&q0[4 * id]) + Eigen::Map<const Eigen::Vector4d>(&q1[4 * id]));
  };
  double local = 0, bonds = 0;
  for (const auto& b : m.bonds())
    if (b.intact) local += physics::bond_energy(p_mid(b.a), q_mid(b.a), p_mid(b.b), q_mid(b.b), b.rest);
  MPI_Allreduce(&local, &bonds, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return bonds + m.totals().kinetic;
}

// Free block, conservative forces only, 200 steps of 20 critical steps, which resolve none of its elastic modes.
// The first step projects the random velocities onto what the step can carry (both forms drop most of the
// energy of modes with ωh ≫ 1); from there the midpoint form keeps its discrete energy, backward Euler damps.
TEST(ImplicitBdem, MidpointKeepsTheEnergyThatBackwardEulerDamps) {
  struct Run { double loss, worst; };  // relative to the energy after the first step: final loss, largest deviation
  auto run = [](const std::string& form) {
    const bdem::BdemScene scene = block_scene("", 1e12, form);
    bdem::GlobalModel g = bdem::model_from_scene(scene);
    shake(g, 0.05);
    ImplicitBdem m(scene, MPI_COMM_WORLD, g);
    const Observables start = m.totals();
    auto x0 = positions(MPI_COMM_WORLD, m);
    auto q0 = gather<4>(MPI_COMM_WORLD, m.owned_ids(), m.owned_quaternions(), m.global_particles());
    double first = 0, energy = 0;
    Run r{0, 0};
    for (int s = 0; s < 200; ++s) {
      m.advance();
      energy = midpoint_energy(m, x0, q0);
      if (s == 0) first = energy;
      r.worst = std::max(r.worst, std::abs(energy / first - 1));
      x0 = positions(MPI_COMM_WORLD, m);
      q0 = gather<4>(MPI_COMM_WORLD, m.owned_ids(), m.owned_quaternions(), m.global_particles());
    }
    r.loss = 1 - energy / first;
    EXPECT_GT(first, 0.01 * start.total) << form;  // the block still moves
    const Observables last = m.totals();
    EXPECT_LE(max_unit_error(MPI_COMM_WORLD, m), 1e-12) << form;
    double p_scale = 0;
    for (int d = 0; d < 3; ++d) p_scale = std::max(p_scale, std::abs(start.momentum[d]));
    for (int d = 0; d < 3; ++d) EXPECT_NEAR(last.momentum[d], start.momentum[d], 1e-6 * p_scale + 1e-12) << form;
    return r;
  };
  const Run be = run("backward_euler"), mid = run("midpoint");
  EXPECT_LT(mid.worst, 0.03) << "midpoint loss " << mid.loss;
  EXPECT_GT(be.loss, 10 * std::abs(mid.loss)) << "midpoint largest deviation " << mid.worst;
}

// The midpoint form takes the contacts at the step's end (backward Euler's form). Seen at the midpoint, a contact's
// penalty pushes a pair apart by what it overlapped half a step before: the small plate's fragments, jostling in
// contact without friction at 10 T, gained energy at every step (3.4 J at the start, 10.2 J at 4.6 ms, 48 J at
// 6.2 ms, 578 J at 25 ms, every bond broken). Now they lose it, while the bonded plate still keeps what backward
// Euler would damp (MidpointKeepsTheEnergyThatBackwardEulerDamps).
TEST(ImplicitBdem, MidpointFragmentsInContactGainNoEnergy) {
  bdem::BdemScene scene = shipped_scene("plate_drop_small.json");
  scene.implicit.form = "midpoint";
  scene.implicit.step_factor = 10;
  for (Material& m : scene.materials) m.friction = 0;
  for (Obstacle& o : scene.obstacles) o.friction = 0;
  scene.time.end = 0.0065;
  const Observables start = ImplicitBdem(scene, MPI_COMM_WORLD, bdem::model_from_scene(scene)).totals();
  const Outcome o = run(scene);
  ASSERT_GT(o.final.bonds_broken, 300);  // fragments
  EXPECT_LT(o.final.total, start.total);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    std::printf("plate_drop_small, midpoint form at 10 T, no friction: %.4g J at the start, %.4g J at %.4g s, %ld "
                "bonds broken\n", start.total, o.final.total, o.time, static_cast<long>(o.final.bonds_broken));
}

// Chain ringing in its lowest axial mode and a bending mode, at rest shape (so ∇V(x_0) = 0); fixed end time.
std::vector<double> ring_chain(const std::string& form, double end, int steps) {
  const bdem::BdemScene scene = chain_scene(form, end / steps);
  bdem::GlobalModel g = bdem::model_from_scene(scene);
  for (std::size_t i = 0; i < g.x.size(); ++i) {
    const double xi = std::numbers::pi * g.x[i].x() / 0.192;  // (i + ½)π/6 for the i-th sphere along the chain
    g.v[i] = Eigen::Vector3d(0.2 * std::cos(xi), 0, 0.2 * std::cos(2 * xi));
  }
  ImplicitBdem m(scene, MPI_COMM_WORLD, g);
  for (int s = 0; s < steps; ++s) m.advance();
  return positions(MPI_COMM_WORLD, m);
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double e = 0;
  for (std::size_t i = 0; i < a.size(); ++i) e = std::max(e, std::abs(a[i] - b[i]));
  return e;
}

// Order of accuracy at h ≈ 0.4 critical steps (ωh ≈ 0.1 for the axial mode): the position error against a
// midpoint run with an 8x smaller step falls ~4x per halving of h with the midpoint form and BDF2 (whose first,
// backward-Euler step adds an error of order h² only), ~2x with backward Euler.
// (At twice that h the modes' errors still partly cancel: ratios 5.7 for the midpoint form, 1.9 for backward
// Euler, against a 32x smaller step; at this h 4.0 and 1.95.)
TEST(ImplicitBdem, MidpointAndBdf2AreSecondOrderBackwardEulerFirst) {
  const double end = 0.002;
  const int n = 40;
  const auto reference = ring_chain("midpoint", end, 8 * n);
  for (const std::string form : {"midpoint", "bdf2", "backward_euler"}) {
    const double coarse = max_abs_diff(ring_chain(form, end, n), reference);
    const double fine = max_abs_diff(ring_chain(form, end, 2 * n), reference);
    EXPECT_GT(fine, 1e-9) << form;  // far above the solver tolerance
    if (form != "backward_euler") {
      EXPECT_GT(coarse / fine, 3.0) << form << ": " << coarse << " at h, " << fine << " at h/2";
      EXPECT_LT(coarse / fine, 5.0) << form << ": " << coarse << " at h, " << fine << " at h/2";
    } else {
      EXPECT_GT(coarse / fine, 1.6) << coarse << " at h, " << fine << " at h/2";
      EXPECT_LT(coarse / fine, 2.5) << coarse << " at h, " << fine << " at h/2";
    }
  }
}

// Free fall from rest: the midpoint form is exact for a constant force from the first step on (x = x_0 + ½gt²);
// backward Euler is off by ½ g h t. Each step converges to the chain's tight tolerance in a few iterations.
TEST(ImplicitBdem, MidpointFallsExactly) {
  const int steps = 10;
  const double h = 2e-3, t = steps * h;
  for (const std::string form : {"midpoint", "backward_euler"}) {
    bdem::BdemScene scene = chain_scene(form, h);
    scene.gravity = Eigen::Vector3d(0, 0, -9.81);
    const bdem::GlobalModel g = bdem::model_from_scene(scene);
    ImplicitBdem m(scene, MPI_COMM_WORLD, g);
    for (int s = 0; s < steps; ++s) m.advance();
    const auto x = positions(MPI_COMM_WORLD, m);
    double error = 0;
    for (std::size_t i = 0; i < g.x.size(); ++i) {
      const Eigen::Vector3d exact = g.x[i] + 0.5 * t * t * scene.gravity;
      error = std::max(error, (Eigen::Map<const Eigen::Vector3d>(&x[3 * i]) - exact).norm());
    }
    if (form == "midpoint") EXPECT_LT(error, 1e-10);
    else EXPECT_NEAR(error, 0.5 * 9.81 * h * t, 1e-3 * 9.81 * h * t);
    // Tolerance 1e-12 is near round-off: the line search takes the Newton steps whose energy change is within
    // Φ's round-off instead of halving them until the iteration limit (which then cut the steps). (Three or four
    // Newton iterations: IC(0) of a chain is its exact Cholesky factor, and with its factor in floats CG's third
    // iterate happened to be 1e3 times below the forcing term, saving one; read as halves it is not.)
    EXPECT_EQ(m.counters().at("unconverged_steps"), 0) << form;
    EXPECT_EQ(m.counters().at("step_cuts"), 0) << form;
    EXPECT_LE(m.counters().at("newton_per_step"), 4) << form;
  }
}

// Free fall from an exact BDF2 history (the state a step before, on the parabola x_0 + ½gt²): BDF2 is exact for it,
// also when the last step was shorter or longer, as its coefficients follow the ratio of the two (variable-step
// BDF2). Backward Euler there would leave ½ g h² = 2e-5 m after one step, as it does once the ratio is above 2.
// Last, a run whose every try fails and is halved (one Newton iteration each, step_cuts 1) starts from a history
// over a full step: its first half step has the ratio ½. The spheres are apart and unbonded, so each Newton
// iteration is exact.
TEST(ImplicitBdem, Bdf2FallsExactlyAcrossStepChanges) {
  const double h = 2e-3;
  bdem::BdemScene scene = chain_scene("bdf2", h);
  scene.bodies[0].bonded = false;
  scene.gravity = Eigen::Vector3d(0, 0, -9.81);
  auto run = [&](const bdem::BdemScene& s, double last_step, int steps) {
    bdem::GlobalModel g = bdem::model_from_scene(s);
    constexpr std::size_t w = bdem::GlobalModel::kBdf2HistoryWidth;
    g.bdf2_history.assign(w * g.x.size(), 0.0);
    for (std::size_t i = 0; i < g.x.size(); ++i) {
      g.x[i] *= 2.0;  // apart: no contacts
      double* past = &g.bdf2_history[w * i];  // at t = −last_step: x_0 + ½ g last_step², v = −g last_step, no spin
      Eigen::Map<Eigen::Vector3d>(past + 0) = g.x[i] + 0.5 * last_step * last_step * s.gravity;
      Eigen::Map<Eigen::Vector4d>(past + 3) = g.q[i];
      Eigen::Map<Eigen::Vector3d>(past + 7) = -last_step * s.gravity;
    }
    g.bdf2_history_step = last_step;
    g.written_by_form = "bdf2";  // as a BDF2 checkpoint would hold it
    ImplicitBdem m(s, MPI_COMM_WORLD, g);
    for (int k = 0; k < steps; ++k) m.advance();
    const auto x = positions(MPI_COMM_WORLD, m);
    const double t = m.time();
    double error = 0;
    for (std::size_t i = 0; i < g.x.size(); ++i)
      error = std::max(error, (Eigen::Map<const Eigen::Vector3d>(&x[3 * i]) - (g.x[i] + 0.5 * t * t * s.gravity)).norm());
    return std::make_pair(error, m.counters());
  };
  for (const double last : {h, 0.5 * h, 2.0 * h}) EXPECT_LT(run(scene, last, 3).first, 1e-10) << "last step " << last;
  EXPECT_NEAR(run(scene, h / 3, 1).first, 0.5 * 9.81 * h * h, 1e-9);  // ratio 3: backward Euler
  bdem::BdemScene cut = scene;
  cut.implicit.max_iterations = 1;
  cut.implicit.step_cuts = 1;
  const auto [error, counters] = run(cut, h, 3);
  EXPECT_EQ(counters.at("step_cuts"), 3);
  EXPECT_LT(error, 1e-10);
}

// Free fall across a change of step: a midpoint run restarted from its checkpoint with another time step kicks by
// ½ h h_prev ∇V (the variable-step midpoint rule), exact for a constant force; ½ h² (the rule for equal steps) is
// off by ½ g h (h − h_prev) after one step: 1.5e-4 m at 8x. The checkpoint records the step its gradient is from.
// A cut's half steps after a whole one, and the undone try's gradient restored, likewise.
TEST(ImplicitBdem, MidpointFallsExactlyAcrossStepChanges) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string dir = shared_temp_dir(), path = dir + "/midpoint.h5";
  ASSERT_FALSE(dir.empty());
  const double h = 2e-3;
  bdem::BdemScene scene = chain_scene("midpoint", h);
  scene.bodies[0].bonded = false;
  scene.gravity = Eigen::Vector3d(0, 0, -9.81);
  bdem::GlobalModel g = bdem::model_from_scene(scene);
  for (auto& x : g.x) x *= 2.0;  // apart: no contacts
  {
    ImplicitBdem m(scene, MPI_COMM_WORLD, g);
    for (int s = 0; s < 3; ++s) m.advance();
    m.write_checkpoint(path);
  }
  const bdem::GlobalModel ck = bdem::model_from_checkpoint(path, MPI_COMM_WORLD);
  EXPECT_EQ(ck.gradient_step, h);
  // Restarted on the scene's step with every try failing (one Newton iteration, which is exact here) and halved:
  // the half steps follow a gradient of a whole one, as after a cut inside a run.
  bdem::BdemScene cut = scene;
  cut.implicit.max_iterations = 1;
  cut.implicit.step_cuts = 1;
  for (const double next : {0.5 * h, 2.0 * h, 8.0 * h, h}) {
    bdem::BdemScene changed = next == h ? cut : scene;
    changed.time.step = next;
    bdem::GlobalModel restart = ck;
    restart.time_step = next;
    ImplicitBdem m(changed, MPI_COMM_WORLD, restart);
    for (int s = 0; s < 3; ++s) m.advance();
    const double t = 3 * h + 3 * next;
    const auto x = positions(MPI_COMM_WORLD, m);
    double error = 0;
    for (std::size_t i = 0; i < g.x.size(); ++i)
      error = std::max(error, (Eigen::Map<const Eigen::Vector3d>(&x[3 * i]) - (g.x[i] + 0.5 * t * t * scene.gravity)).norm());
    EXPECT_LT(error, 1e-10) << "steps " << h << " then " << next;
    if (next == h) {
      EXPECT_EQ(m.counters().at("step_cuts"), 3);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::filesystem::remove_all(dir);
}

// Free spheres spinning about different axes at ωh = 0.5: a free spin is a geodesic on S³, which the midpoint
// form's predictor (q̂ = exp(ωh) ⊗ q_n) and velocity recovery (ω = 2 log(q_{n+1} ⊗ q̄_n)/h) follow exactly.
// The chord predictor q_n + h q̇_n lost (ωh)²/8 of ω a step (3% here).
TEST(ImplicitBdem, MidpointKeepsAFreeSpin) {
  const double h = 1e-3, omega_h = 0.5;
  const int steps = 50;
  bdem::BdemScene scene = chain_scene("midpoint", h);
  scene.bodies[0].bonded = false;
  bdem::GlobalModel g = bdem::model_from_scene(scene);
  ASSERT_TRUE(g.pair.empty());
  for (std::size_t i = 0; i < g.x.size(); ++i) {
    g.x[i] *= 2.0;  // apart: no contacts
    const double a = 1.3 * static_cast<double>(i);
    g.w[i] = (omega_h / h) * Eigen::Vector3d(std::cos(a), std::sin(a), 0.4 - 0.2 * static_cast<double>(i)).normalized();
  }
  ImplicitBdem m(scene, MPI_COMM_WORLD, g);
  for (int s = 0; s < steps; ++s) m.advance();
  const auto w = gather<3>(MPI_COMM_WORLD, m.owned_ids(), m.owned_angular_velocities(), m.global_particles());
  const auto q = gather<4>(MPI_COMM_WORLD, m.owned_ids(), m.owned_quaternions(), m.global_particles());
  for (std::size_t i = 0; i < g.x.size(); ++i) {
    const Eigen::Vector3d wi = Eigen::Map<const Eigen::Vector3d>(&w[3 * i]);
    EXPECT_LE((wi - g.w[i]).norm(), 1e-8 * g.w[i].norm()) << "sphere " << i << ": |w| " << wi.norm();
    // And it turned by ωh every step: q = exp(50 ωh) ⊗ q_0, q_0 = identity.
    const Eigen::Vector4d exact = quat::from_rotation_vector(steps * h * g.w[i]);
    EXPECT_LE((Eigen::Map<const Eigen::Vector4d>(&q[4 * i]) - exact).norm(), 1e-8) << "sphere " << i;
  }
}

// The gradient a midpoint run carries into its first step, as its checkpoint records it (force, torque).
std::vector<Eigen::Vector3d> carried_gradient(ImplicitBdem& m, const std::string& path) {
  m.write_checkpoint(path);
  const bdem::GlobalModel c = bdem::model_from_checkpoint(path, MPI_COMM_WORLD);
  std::vector<Eigen::Vector3d> g = c.force;
  g.insert(g.end(), c.torque.begin(), c.torque.end());
  return g;
}

double largest_norm(const std::vector<Eigen::Vector3d>& v) {
  double n = 0;
  for (const auto& e : v) n = std::max(n, e.norm());
  return n;
}

// Advances both runs `steps` steps: bit-identical positions and velocities.
void expect_same_steps(ImplicitBdem& a, ImplicitBdem& b, int steps) {
  for (int s = 0; s < steps; ++s) {
    a.advance();
    b.advance();
  }
  EXPECT_EQ(positions(MPI_COMM_WORLD, a), positions(MPI_COMM_WORLD, b));
  EXPECT_EQ(velocities(MPI_COMM_WORLD, a), velocities(MPI_COMM_WORLD, b));
}

// After a fracture cut the next step starts at the cut's depth without trying the whole step first: the weak block's
// second step is two half steps at once (one fracture cut in all, the states of a run at half the step), and its
// third tries the whole step again. A checkpoint carries the depth: a run restarted after the first step takes the
// same second step bit for bit.
TEST(ImplicitBdem, FractureCutDepthCarriesToTheNextStep) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string dir = shared_temp_dir(), path = dir + "/cut.h5";
  ASSERT_FALSE(dir.empty());
  bdem::BdemScene cut = block_scene(R"("boundary_conditions": [
      { "region": { "min": [-1, -1, -1], "max": [0.02, 1, 1] } },
      { "region": { "min": [0.172, -1, -1], "max": [1, 1, 1] }, "velocity": [0.5, 0, 0] } ])",
                          1e4, "bdf2");
  cut.implicit.fracture_cut_ratio = 1.5;
  cut.implicit.step_cuts = 1;
  cut.implicit.split_above_iterations = 0;  // the depth of the cuts alone
  bdem::BdemScene halves = cut;
  halves.implicit.fracture_cut_ratio = 0;
  halves.time.step = 0.5 * bdem::model_from_scene(cut).time_step;
  ImplicitBdem a(cut, MPI_COMM_WORLD, bdem::model_from_scene(cut));
  ImplicitBdem b(halves, MPI_COMM_WORLD, bdem::model_from_scene(halves));
  a.advance();
  a.write_checkpoint(path);
  const bdem::GlobalModel ck = bdem::model_from_checkpoint(path, MPI_COMM_WORLD);
  EXPECT_EQ(ck.schedule.fracture_depth, 1);
  ImplicitBdem restarted(cut, MPI_COMM_WORLD, ck);
  expect_same_steps(a, restarted, 1);
  for (int s = 0; s < 4; ++s) b.advance();
  EXPECT_EQ(a.counters().at("fracture_cuts"), 1);
  EXPECT_EQ(a.counters().at("unconverged_steps") + b.counters().at("unconverged_steps"), 0);
  EXPECT_EQ(a.totals().bonds_broken, b.totals().bonds_broken);
  EXPECT_LE(max_rel_diff(positions(MPI_COMM_WORLD, b), positions(MPI_COMM_WORLD, a)), 1e-12);
  a.write_checkpoint(path);
  EXPECT_EQ(bdem::model_from_checkpoint(path, MPI_COMM_WORLD).schedule.fracture_depth, 0);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::filesystem::remove_all(dir);
}

// A step whose minimisations took more than implicit.split_above_iterations (10) Newton iterations each starts the
// next one a halving deeper, as MOOSE's IterationAdaptiveDT cuts its step, and the depth stays while the halves take
// at least merge_below_iterations (5) each. drop_small's impact step takes 11 and its later whole steps 14-27 each,
// their halves 6-7 each: the run takes about two thirds of the Newton iterations, breaks the same bonds within 2 %
// and keeps the same energy within 5 %. A checkpoint carries the depth: a run restarted after the impact step takes
// the same halves bit for bit.
TEST(ImplicitBdem, NewtonEffortSplitsTheNextStep) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  bdem::BdemScene adaptive = shipped_scene("drop_small.json");
  adaptive.integrator = "implicit";
  ASSERT_EQ(adaptive.implicit.split_above_iterations, 10);  // the defaults
  ASSERT_EQ(adaptive.implicit.merge_below_iterations, 5);
  bdem::BdemScene whole = adaptive;
  whole.implicit.split_above_iterations = 0;
  const Outcome a = run(adaptive), b = run(whole);
  EXPECT_GE(a.counters.at("iteration_splits"), 1);
  EXPECT_EQ(b.counters.at("iteration_splits"), 0);
  EXPECT_EQ(a.counters.at("unconverged_steps") + b.counters.at("unconverged_steps"), 0);
  EXPECT_NEAR(a.time, b.time, 1e-12);
  EXPECT_LT(a.counters.at("newton_iterations"), 0.8 * b.counters.at("newton_iterations"));
  ASSERT_GT(b.final.bonds_broken, 5000);
  EXPECT_NEAR(static_cast<double>(a.final.bonds_broken), static_cast<double>(b.final.bonds_broken),
              0.02 * static_cast<double>(b.final.bonds_broken));
  EXPECT_NEAR(a.final.total, b.final.total, 0.05 * b.final.total);
  if (rank == 0)
    std::printf("drop_small: Newton iterations %g (%g splits) against %g at whole steps; broken bonds %ld against %ld; "
                "energy %g against %g\n",
                a.counters.at("newton_iterations"), a.counters.at("iteration_splits"),
                b.counters.at("newton_iterations"), static_cast<long>(a.final.bonds_broken),
                static_cast<long>(b.final.bonds_broken), a.final.total, b.final.total);

  const std::string dir = shared_temp_dir(), path = dir + "/split.h5";
  ASSERT_FALSE(dir.empty());
  ImplicitBdem m(adaptive, MPI_COMM_WORLD, bdem::model_from_scene(adaptive));
  while (m.counters().at("iteration_splits") < 1 && m.time() < adaptive.time.end - 1e-12) m.advance();  // the impact
  m.write_checkpoint(path);
  const bdem::GlobalModel ck = bdem::model_from_checkpoint(path, MPI_COMM_WORLD);
  EXPECT_EQ(ck.schedule.fracture_depth, 1);
  ImplicitBdem restarted(adaptive, MPI_COMM_WORLD, ck);
  expect_same_steps(m, restarted, 2);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::filesystem::remove_all(dir);
}

// An explicit checkpoint's force/torque are its forces, not ∇V at a midpoint: the midpoint form restarted from
// one carries no gradient and takes the same steps as a fresh start from the checkpoint's state. So does a file
// that does not record its form (written before the "form" attribute); a midpoint checkpoint keeps its gradient.
TEST(ImplicitBdem, MidpointRestartFromExplicitCheckpointStartsFresh) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string dir = shared_temp_dir(), path = dir + "/explicit.h5", carried = dir + "/carried.h5";
  ASSERT_FALSE(dir.empty());
  const bdem::BdemScene scene = block_scene(kCantilever, 1e12, "midpoint");
  bdem::BdemScene explicit_scene = scene;
  explicit_scene.integrator = "explicit";
  {
    bdem::ExplicitBdem ex(explicit_scene, MPI_COMM_WORLD, bdem::model_from_scene(explicit_scene));
    for (int s = 0; s < 20; ++s) ex.advance();
    ex.write_checkpoint(path);
  }
  const bdem::GlobalModel ck = bdem::model_from_checkpoint(path, MPI_COMM_WORLD);
  EXPECT_EQ(ck.written_by_integrator, "explicit");
  EXPECT_EQ(ck.written_by_form, "velocity_verlet");
  ASSERT_GT(largest_norm(ck.force), 0.0);  // there is something to misread (gravity, bonds)

  ImplicitBdem restarted(scene, MPI_COMM_WORLD, ck);
  EXPECT_EQ(largest_norm(carried_gradient(restarted, carried)), 0.0);
  // The same state, partition and pair lists, started fresh: bit-identical steps.
  bdem::GlobalModel same_state = ck;
  same_state.from_checkpoint = false;
  ImplicitBdem fresh(scene, MPI_COMM_WORLD, same_state);
  expect_same_steps(restarted, fresh, 3);

  // A midpoint checkpoint (restarted's, after its steps) carries a gradient ...
  restarted.write_checkpoint(path);
  bdem::GlobalModel mid = bdem::model_from_checkpoint(path, MPI_COMM_WORLD);
  EXPECT_EQ(mid.written_by_integrator, "implicit");
  EXPECT_EQ(mid.written_by_form, "midpoint");
  ImplicitBdem kept(scene, MPI_COMM_WORLD, mid);
  EXPECT_GT(largest_norm(carried_gradient(kept, carried)), 0.0);
  // ... unless the file does not say that the midpoint form wrote it.
  mid.written_by_form.clear();
  ImplicitBdem unknown(scene, MPI_COMM_WORLD, mid);
  EXPECT_EQ(largest_norm(carried_gradient(unknown, carried)), 0.0);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::filesystem::remove_all(dir);
}

// BDF2 restarted from a backward-Euler checkpoint has no x_{n−1}: it takes the same steps as a fresh start from the
// checkpoint's state (a backward-Euler step first). A BDF2 checkpoint carries one, with the step it spans, and a
// run restarted from it takes a BDF2 step at once: other states than a fresh start's.
TEST(ImplicitBdem, Bdf2RestartFromBackwardEulerCheckpointStartsFresh) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string dir = shared_temp_dir(), path = dir + "/be.h5";
  ASSERT_FALSE(dir.empty());
  const bdem::BdemScene be_scene = block_scene(kCantilever), scene = block_scene(kCantilever, 1e12, "bdf2");
  {
    ImplicitBdem be(be_scene, MPI_COMM_WORLD, bdem::model_from_scene(be_scene));
    for (int s = 0; s < 5; ++s) be.advance();
    be.write_checkpoint(path);
  }
  const bdem::GlobalModel ck = bdem::model_from_checkpoint(path, MPI_COMM_WORLD);
  EXPECT_EQ(ck.written_by_form, "backward_euler");
  EXPECT_TRUE(ck.bdf2_history.empty());
  bdem::GlobalModel same_state = ck;
  same_state.from_checkpoint = false;
  same_state.written_by_form.clear();
  ImplicitBdem restarted(scene, MPI_COMM_WORLD, ck), fresh(scene, MPI_COMM_WORLD, same_state);
  expect_same_steps(restarted, fresh, 3);

  restarted.write_checkpoint(path);
  const bdem::GlobalModel bdf2 = bdem::model_from_checkpoint(path, MPI_COMM_WORLD);
  EXPECT_EQ(bdf2.written_by_form, "bdf2");
  ASSERT_EQ(bdf2.bdf2_history.size(), bdf2.x.size() * bdem::GlobalModel::kBdf2HistoryWidth);
  EXPECT_EQ(bdf2.bdf2_history_step, bdf2.time_step);
  bdem::GlobalModel no_history = bdf2;
  no_history.bdf2_history.clear();
  no_history.bdf2_history_step = 0;
  ImplicitBdem kept(scene, MPI_COMM_WORLD, bdf2), forgot(scene, MPI_COMM_WORLD, no_history);
  kept.advance();
  forgot.advance();
  EXPECT_GT(max_rel_diff(velocities(MPI_COMM_WORLD, kept), velocities(MPI_COMM_WORLD, forgot)), 1e-6);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::filesystem::remove_all(dir);
}

// The other way round: the explicit integrator restarted from a midpoint checkpoint must not take its ∇V
// (opposite sign, no gravity) as forces; it continues as a fresh explicit start from the same state.
TEST(ImplicitBdem, ExplicitRestartFromImplicitCheckpointRecomputesForces) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string dir = shared_temp_dir(), path = dir + "/midpoint.h5";
  ASSERT_FALSE(dir.empty());
  const bdem::BdemScene scene = block_scene(kCantilever, 1e12, "midpoint");
  bdem::BdemScene explicit_scene = scene;
  explicit_scene.integrator = "explicit";
  {
    ImplicitBdem im(scene, MPI_COMM_WORLD, bdem::model_from_scene(scene));
    for (int s = 0; s < 3; ++s) im.advance();
    im.write_checkpoint(path);
  }
  bdem::GlobalModel ck = bdem::model_from_checkpoint(path, MPI_COMM_WORLD);
  ASSERT_GT(largest_norm(ck.force), 0.0);
  ck.time_step = bdem::scene_time_step(explicit_scene);  // the implicit step is far beyond explicit stability
  bdem::GlobalModel same_state = ck;
  same_state.from_checkpoint = false;
  bdem::ExplicitBdem restarted(explicit_scene, MPI_COMM_WORLD, ck), fresh(explicit_scene, MPI_COMM_WORLD, same_state);
  for (int s = 0; s < 5; ++s) {
    restarted.advance();
    fresh.advance();
  }
  EXPECT_EQ(positions(MPI_COMM_WORLD, restarted), positions(MPI_COMM_WORLD, fresh));
  EXPECT_EQ(velocities(MPI_COMM_WORLD, restarted), velocities(MPI_COMM_WORLD, fresh));
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::filesystem::remove_all(dir);
}

// A contact-heavy drop on which IC(0) meets indefinite pivots: the Newton steps solved by the fallback (the rest of
// a time step after a shifted factorisation), block symmetric Gauss–Seidel or point-block Jacobi, reach the
// minimisers that scalar Jacobi reaches, and so do D-ILU's, rebuilt whenever a contact opens or closes, and
// Gauss–Seidel's as the default preconditioner's blocks, set up again after every assembly.
TEST(ImplicitBdem, FallbacksReachTheSameMinimisers) {
  bdem::BdemScene base = shipped_scene("plate_drop_small.json");
  base.implicit.form = "bdf2";  // the steps of 20 T on which IC(0) meets indefinite pivots
  base.implicit.fracture_transient = 0;  // (and the paper's fracture check, whose trajectory meets them)
  base.implicit.step_factor = 20;
  base.implicit.tolerance = 1e-8;
  base.implicit.petsc_options = {{"-bdem_sub_pc_type", "icc"}};  // IC(0), which shifts as the rim hits
  bdem::BdemScene jacobi = base, dilu = base, point_block = base, gauss_seidel = base, halves = base;
  jacobi.implicit.petsc_options = {{"-bdem_pc_type", "jacobi"}};
  dilu.implicit.petsc_options = {{"-bdem_sub_pc_type", "dilu"}};
  point_block.implicit.petsc_options = {{"-bdem_sub_pc_type", "icc"}, {"-bdem_gauss_seidel_fallback", "0"}};
  gauss_seidel.implicit.petsc_options = {};  // the default
  halves.implicit.petsc_options = {{"-bdem_half_precision_split", "1"}};  // its sweeps read halves
  const Outcome a = run(base), b = run(jacobi), c = run(dilu), d = run(point_block), e = run(gauss_seidel),
                f = run(halves);
  EXPECT_GT(a.counters.at("fallback_solves"), 0);  // the fallback ran
  EXPECT_EQ(b.counters.at("fallback_solves"), 0);
  expect_same_minimisers(b, a, 100);  // the rim chipped
  EXPECT_EQ(c.counters.at("fallback_solves"), 0);  // D-ILU never shifts, and slow solves stay on it
  expect_same_minimisers(c, a, 100);
  EXPECT_GT(d.counters.at("fallback_solves"), 0);
  expect_same_minimisers(d, a, 100);
  EXPECT_EQ(e.counters.at("fallback_solves"), 0);  // Gauss–Seidel's pivots are A's SPD diagonal blocks
  EXPECT_EQ(e.counters.at("block_factorisations"), 0);
  EXPECT_GT(e.counters.at("gauss_seidel_partial_set_ups"), 0);  // contact refreshes set up only their rows
  expect_same_minimisers(e, a, 100);
  // CG solves a system whose blocks are rounded to halves, but the gradient and the convergence test stay exact.
  EXPECT_EQ(f.counters.at("fallback_solves"), 0);
  EXPECT_NE(f.counters.at("krylov_iterations"), e.counters.at("krylov_iterations"));  // (the halves were read)
  expect_same_minimisers(f, a, 100);
}


// After a step whose IC(0) had to shift, the next steps start on point-block Jacobi (1, 2, 4, 8 of them while it
// keeps shifting) instead of factoring IC(0) only to drop it. The checkpoint carries how many are left, so a
// restart takes the same path, bit for bit; and the run reaches the minimisers of one that always tries IC(0).
TEST(ImplicitBdem, PointBlockJacobiStepsCarryThroughARestart) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string dir = shared_temp_dir(), path = dir + "/shifted.h5";
  ASSERT_FALSE(dir.empty());
  bdem::BdemScene scene = shipped_scene("plate_drop_small.json");
  scene.implicit.form = "bdf2";  // the steps of 20 T on which IC(0) meets indefinite pivots
  scene.implicit.fracture_transient = 0;  // (and the paper's fracture check, whose trajectory meets them)
  scene.implicit.step_factor = 20;
  scene.implicit.tolerance = 1e-8;
  scene.implicit.petsc_options = {{"-bdem_sub_pc_type", "icc"}};  // IC(0), which shifts as the rim hits
  {  // (a run's scene options stay in PETSc's database while it lives)
    ImplicitBdem full(scene, MPI_COMM_WORLD, bdem::model_from_scene(scene));
    bdem::StepSchedule schedule;
    for (int s = 0; s < 12 && schedule.block_jacobi_steps == 0; ++s) {
      full.advance();
      full.write_checkpoint(path);
      schedule = bdem::model_from_checkpoint(path, MPI_COMM_WORLD).schedule;
    }
    ASSERT_GT(schedule.block_jacobi_steps, 0);
    EXPECT_EQ(schedule.block_jacobi_backoff, schedule.block_jacobi_steps);  // (the checkpoint follows the shift)
    const double before = full.counters().at("fallback_steps");
    for (int s = 0; s < 2; ++s) full.advance();
    EXPECT_GT(full.counters().at("fallback_steps"), before);
    ImplicitBdem restarted(scene, MPI_COMM_WORLD, bdem::model_from_checkpoint(path, MPI_COMM_WORLD));
    for (int s = 0; s < 2; ++s) restarted.advance();
    EXPECT_GT(restarted.counters().at("fallback_steps"), 0);
    EXPECT_EQ(positions(MPI_COMM_WORLD, restarted), positions(MPI_COMM_WORLD, full));
    EXPECT_EQ(velocities(MPI_COMM_WORLD, restarted), velocities(MPI_COMM_WORLD, full));
  }
  // Restarted with Gauss–Seidel blocks, which never shift, the scheduled steps do not go to point-block Jacobi.
  bdem::BdemScene gauss_seidel = scene;
  gauss_seidel.implicit.petsc_options = {};
  ImplicitBdem switched(gauss_seidel, MPI_COMM_WORLD, bdem::model_from_checkpoint(path, MPI_COMM_WORLD));
  for (int s = 0; s < 2; ++s) switched.advance();
  EXPECT_EQ(switched.counters().at("fallback_steps"), 0);
  EXPECT_EQ(switched.counters().at("fallback_solves"), 0);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::filesystem::remove_all(dir);
}

// A lagged Hessian (the matrix of an earlier Newton iteration kept while Newton contracts fast with it) only
// changes the path: three-point bending through its crack reaches the same minimisers and breaks the same bonds
// as assembling at every iteration, with fewer assemblies.
TEST(ImplicitBdem, LaggedHessianReachesTheSameMinimisers) {
  bdem::BdemScene lagged = shipped_scene("three_point_bending_small.json");
  lagged.implicit.tolerance = 1e-8;
  lagged.time.end = 14 * *lagged.time.step;  // past the crack's start at step 9
  bdem::BdemScene fresh = lagged;
  fresh.implicit.hessian_lag_contraction = 0;
  fresh.implicit.contact_refresh = false;
  const Outcome a = run(lagged), b = run(fresh);
  EXPECT_GT(a.counters.at("lagged_hessians"), 0);
  EXPECT_EQ(b.counters.at("lagged_hessians"), 0);
  EXPECT_LT(a.counters.at("hessian_assemblies"), 0.6 * b.counters.at("hessian_assemblies"));
  expect_same_minimisers(a, b, 5);  // the crack started
}

// A contact refresh (the later Newton matrices of a step update only the contacts' blocks and keep the bonds'
// and the inertia's) only changes the path: the plate drop, whose contacts open and close at every iteration,
// reaches the same minimisers and breaks the same bonds as assembling in full, with fewer full assemblies. On 2
// and 3 ranks the pairs across ranks send their blocks' changes to the owners as the full assembly sends blocks.
TEST(ImplicitBdem, ContactRefreshReachesTheSameMinimisers) {
  bdem::BdemScene refreshed = shipped_scene("plate_drop_small.json");
  refreshed.implicit.form = "bdf2";  // steps of 20 T, over which many contacts open and close
  refreshed.implicit.step_factor = 20;
  refreshed.implicit.tolerance = 1e-8;
  refreshed.implicit.active_set_rounds = 0;  // (whose rounds update the contacts' blocks alone in either case)
  bdem::BdemScene full = refreshed;
  full.implicit.contact_refresh = false;
  const Outcome a = run(refreshed), b = run(full);
  EXPECT_GT(a.counters.at("contact_refreshes"), 10);
  EXPECT_EQ(b.counters.at("contact_refreshes"), 0);
  EXPECT_LT(a.counters.at("hessian_assemblies"), 0.5 * b.counters.at("hessian_assemblies"));
  // Lagging the bonds' blocks costs a few Newton iterations (65 against 59 on one rank). A refresh that reused the
  // line search's bond gradients at another state than the current one would mislead its iteration: 99.
  EXPECT_LE(a.counters.at("newton_iterations"), 1.25 * b.counters.at("newton_iterations"));
  expect_same_minimisers(a, b, 100);  // the rim chipped
}

// Semismooth active-set rounds (implicit.active_set_rounds): the contacts a Newton step would close or open switch
// branch in its model, which is solved again before the line search. On the plate drop, whose contacts open and
// close within its steps, that takes fewer Newton iterations to the same minimisers and broken bonds. On 2 and 3
// ranks the pairs across ranks send their gradient changes to the owners: without them the model is wrong at
// those particles and the saved iterations come back.
TEST(ImplicitBdem, ActiveSetRoundsSaveNewtonIterations) {
  bdem::BdemScene rounds = shipped_scene("plate_drop_small.json");
  rounds.implicit.form = "bdf2";
  rounds.implicit.step_factor = 20;
  rounds.implicit.tolerance = 1e-8;
  rounds.implicit.active_set_rounds = 1;
  bdem::BdemScene plain = rounds;
  plain.implicit.active_set_rounds = 0;
  const Outcome a = run(rounds), b = run(plain);
  EXPECT_GT(a.counters.at("active_set_rounds"), 5);
  EXPECT_GT(a.counters.at("branch_switches"), a.counters.at("active_set_rounds"));
  EXPECT_EQ(b.counters.at("active_set_rounds"), 0);
  EXPECT_LT(a.counters.at("newton_iterations"), 0.85 * b.counters.at("newton_iterations"));
  expect_same_minimisers(a, b, 100);  // the rim chipped
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    std::printf("plate_drop_small: Newton iterations %g with active-set rounds (%g rounds, %g switches) against %g\n",
                a.counters.at("newton_iterations"), a.counters.at("active_set_rounds"),
                a.counters.at("branch_switches"), b.counters.at("newton_iterations"));
}

// A Newton matrix carried into the next step (its first iteration keeps the last step's matrix while no contact
// opened or closed) only changes the path: the sagging cantilever reaches the same minimisers as assembling at
// every iteration, with fewer assemblies than steps, in both forms. (Restarts with a carried matrix are bit for
// bit: RestartContinuesTheRun and its variants write their checkpoints mid-carry.)
TEST(ImplicitBdem, CarriedMatrixReachesTheSameMinimisers) {
  for (const std::string form : {"backward_euler", "midpoint", "bdf2"}) {
    const bdem::BdemScene carried = block_scene(kCantilever, 1e12, form);
    bdem::BdemScene fresh = carried;
    fresh.implicit.hessian_lag_contraction = 0;
    ImplicitBdem a(carried, MPI_COMM_WORLD, bdem::model_from_scene(carried));
    ImplicitBdem b(fresh, MPI_COMM_WORLD, bdem::model_from_scene(fresh));
    constexpr int kSteps = 12;
    for (int s = 0; s < kSteps; ++s) {
      a.advance();
      b.advance();
    }
    EXPECT_GT(a.counters().at("carried_hessians"), 0) << form;
    EXPECT_EQ(b.counters().at("carried_hessians"), 0) << form;
    EXPECT_LT(a.counters().at("hessian_assemblies"), kSteps) << form;
    EXPECT_GE(b.counters().at("hessian_assemblies"), kSteps) << form;
    const auto xa = positions(MPI_COMM_WORLD, a), xb = positions(MPI_COMM_WORLD, b);
    double z_min = 1e9;
    for (std::size_t i = 2; i < xb.size(); i += 3) z_min = std::min(z_min, xb[i]);
    EXPECT_LT(z_min, 0.016 - 1e-5) << form;  // it sagged
    EXPECT_LE(max_rel_diff(xa, xb), 1e-8) << form;
  }
}

// Line-search extrapolation: where a full Newton step lowered the energy far less than its quadratic model
// predicted (the shattering ball's squeezed fragments, with contact normals that follow the iterate), the
// parabola's minimiser is tried and kept when it is lower. Over drop_small's first 8 steps (7,900+ bonds break)
// it is taken, saves Newton iterations, and leaves the same physics: broken bonds within 1 % and energy within 2 % of plain backtracking. (The two runs cut
// different steps in half, 4 and 5 on one rank, so their time steps differ there and the states agree only that
// far: 1.7 % in energy on one rank.)
TEST(ImplicitBdem, LineSearchExtrapolationSavesNewtonIterations) {
  bdem::BdemScene extrapolating = shipped_scene("drop_small.json");
  extrapolating.integrator = "implicit";
  extrapolating.implicit.contact_normal = "current";  // the penalty whose projected Hessian is too stiff
  bdem::BdemScene plain = extrapolating;
  plain.implicit.line_search_extrapolation = false;
  const Outcome a = run(extrapolating, 8), b = run(plain, 8);
  EXPECT_GT(a.counters.at("line_search_extrapolations"), 10);
  // Some parabola minimisers would raise Φ (the line is not a parabola beyond the full step): they are refused.
  EXPECT_LT(a.counters.at("line_search_extrapolations"), a.counters.at("line_search_extrapolations_tried"));
  EXPECT_EQ(b.counters.at("line_search_extrapolations_tried"), 0);
  EXPECT_LT(a.counters.at("newton_iterations"), 0.95 * b.counters.at("newton_iterations"));
  ASSERT_GT(b.final.bonds_broken, 5000);
  EXPECT_NEAR(static_cast<double>(a.final.bonds_broken), static_cast<double>(b.final.bonds_broken),
              0.01 * static_cast<double>(b.final.bonds_broken));
  EXPECT_NEAR(a.final.total, b.final.total, 0.02 * b.final.total);
}

// The line search's contact model (implicit.line_search_contacts): where a Newton step runs into contacts its model
// did not hold, the first trial goes to the minimiser of the line with those contacts taken exactly, instead of the
// full step and its halvings. Over drop_small's first 8 steps (the shattering ball's fragments driven into the floor
// and each other) it shortens the first trial of many iterations and takes fewer energy evaluations per Newton
// iteration, with the same physics: broken bonds within 1 % and energy within 2 % of plain backtracking (the two paths
// through the non-convex landscape reach other minimisers, which backward Euler damps alike).
TEST(ImplicitBdem, ContactLineModelSavesLineSearchTrials) {
  bdem::BdemScene modelled = shipped_scene("drop_small.json");
  modelled.integrator = "implicit";
  modelled.implicit.split_above_iterations = 0;  // both at the same steps
  ASSERT_TRUE(modelled.implicit.line_search_contacts);  // the default
  bdem::BdemScene plain = modelled;
  plain.implicit.line_search_contacts = false;
  constexpr int kSteps = 8;
  const Outcome a = run(modelled, kSteps), b = run(plain, kSteps);
  EXPECT_GT(a.counters.at("contact_line_steps"), 5);
  EXPECT_EQ(b.counters.at("contact_line_steps"), 0);
  const double trials_a = a.counters.at("line_search_trials") / a.counters.at("newton_iterations");
  const double trials_b = b.counters.at("line_search_trials") / b.counters.at("newton_iterations");
  EXPECT_LT(trials_a, 0.9 * trials_b);
  ASSERT_GT(b.final.bonds_broken, 5000);
  EXPECT_NEAR(static_cast<double>(a.final.bonds_broken), static_cast<double>(b.final.bonds_broken),
              0.01 * static_cast<double>(b.final.bonds_broken));
  EXPECT_NEAR(a.final.total, b.final.total, 0.02 * b.final.total);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    std::printf("drop_small, %d steps: line-search trials per Newton iteration %.3g with the contact model (%g of "
                "%g Newton iterations shortened) against %.3g; Newton iterations %g against %g; broken bonds %ld "
                "against %ld; energy %.6g against %.6g\n",
                kSteps, trials_a, a.counters.at("contact_line_steps"), a.counters.at("newton_iterations"), trials_b,
                a.counters.at("newton_iterations"), b.counters.at("newton_iterations"),
                static_cast<long>(a.final.bonds_broken), static_cast<long>(b.final.bonds_broken), a.final.total,
                b.final.total);
}

// Contact normals fixed at the predictor (taken again once a particle drifted a tenth of its radius): the contact
// energy is convex and Newton's model exact for it. Over drop_small's first 8 steps (the shattering ball's
// fragments squeezed into the floor) that takes far fewer Newton iterations than normals following the iterate,
// with the same broken bonds within 2 %. The incremental potential is not convex there, and the two runs reach
// different minimisers, which backward Euler damped alike: their energies within 2 % of each other, both below the
// explicit run's over the same time. (Which of the two kept more changed with friction at the contact point:
// 81.5 against 80.4 before, 85.8 against 86.2 since.)
TEST(ImplicitBdem, PredictedContactNormalsSaveNewtonIterations) {
  bdem::BdemScene predicted = shipped_scene("drop_small.json");
  predicted.integrator = "implicit";
  ASSERT_EQ(predicted.implicit.contact_normal, "predicted");  // the default
  predicted.implicit.split_above_iterations = 0;  // both at the same steps (the current normals' would be split)
  bdem::BdemScene current = predicted;
  current.implicit.contact_normal = "current";
  constexpr int kSteps = 8;
  const Outcome a = run(predicted, kSteps), b = run(current, kSteps);
  bdem::BdemScene explicit_scene = predicted;
  explicit_scene.integrator = "explicit";
  bdem::ExplicitBdem reference(explicit_scene, MPI_COMM_WORLD, bdem::model_from_scene(explicit_scene));
  while (reference.time() < a.time - 1e-12) reference.advance();
  const Observables expected = reference.totals();

  EXPECT_GT(a.counters.at("contact_normal_updates"), 0);
  EXPECT_EQ(b.counters.at("contact_normal_updates"), 0);
  EXPECT_LT(a.counters.at("newton_iterations"), 0.7 * b.counters.at("newton_iterations"));
  ASSERT_GT(b.final.bonds_broken, 5000);
  EXPECT_NEAR(static_cast<double>(a.final.bonds_broken), static_cast<double>(b.final.bonds_broken),
              0.02 * static_cast<double>(b.final.bonds_broken));
  EXPECT_LT(a.final.total, expected.total);
  EXPECT_LT(b.final.total, expected.total);
  EXPECT_NEAR(a.final.total, b.final.total, 0.02 * b.final.total);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    std::printf("drop_small, %d steps: Newton iterations %g (predicted normals) against %g; energy %.6g against %.6g "
                "(explicit %.6g); broken bonds %ld against %ld (explicit %ld)\n",
                kSteps, a.counters.at("newton_iterations"), b.counters.at("newton_iterations"), a.final.total,
                b.final.total, expected.total, static_cast<long>(a.final.bonds_broken),
                static_cast<long>(b.final.bonds_broken), static_cast<long>(expected.bonds_broken));
}
