// Implicit bonded DEM with fracture on 1, 2 and 3 ranks: step cuts, fracture cuts and rounds, the transient
// release, and the depth of a cut or an iteration split carried to the next step and across a restart.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "percussion/methods/bdem/create.hpp"
#include "percussion/methods/bdem/checkpoint.hpp"
#include "percussion/methods/bdem/explicit_bdem.hpp"
#include "../support/implicit_test_support.hpp"

namespace mpi_implicit_fracture {

using namespace percussion;
using bdem::ImplicitBdem;
using namespace percussion::test;

// A step cut (the minimisation did not converge in max_iterations) is taken again as two half steps from the
// step's start: the same state as a run at half the step, in both forms (the midpoint form's predictor carries
// ∇V from the last midpoint, which a failed attempt overwrites). A twisted, translating end (its rotation centre
// moves, so the second half must start at the right time) and a floor with friction; one Newton iteration per
// try (cut_scene), so every full step is cut once and every half step is left unconverged.
TEST(ImplicitFracture, CutStepIsTwoHalfSteps) {
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
TEST(ImplicitFracture, FractureCutStepIsTwoHalfSteps) {
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
TEST(ImplicitFracture, FractureRoundsLetTheLoadRedistribute) {
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
TEST(ImplicitFracture, ExplicitFractureTakesTheExplicitRunsSteps) {
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
TEST(ImplicitFracture, FractureTransientBreaksWhatTheExplicitReleaseBreaks) {
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
TEST(ImplicitFracture, FractureTransientReachMovesTheParticlesNearTheBreaks) {
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

// After a fracture cut the next step starts at the cut's depth without trying the whole step first: the weak block's
// second step is two half steps at once (one fracture cut in all, the states of a run at half the step), and its
// third tries the whole step again. A checkpoint carries the depth: a run restarted after the first step takes the
// same second step bit for bit.
TEST(ImplicitFracture, FractureCutDepthCarriesToTheNextStep) {
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
  const bdem::Model ck = bdem::model_from_checkpoint(path, MPI_COMM_WORLD);
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
// their halves 6-7 each: the run breaks the same bonds within 2 % and keeps the same energy within 5 % (the Newton
// iterations it saves are a benchmark figure: scripts/bench/newton_settings.sh). A checkpoint carries the depth: a run restarted after the impact step takes
// the same halves bit for bit.
TEST(ImplicitFracture, NewtonEffortSplitsTheNextStep) {
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
  ASSERT_GT(b.final.bonds_broken, 5000);
  EXPECT_NEAR(static_cast<double>(a.final.bonds_broken), static_cast<double>(b.final.bonds_broken),
              0.02 * static_cast<double>(b.final.bonds_broken));
  EXPECT_NEAR(a.final.total, b.final.total, 0.05 * b.final.total);

  const std::string dir = shared_temp_dir(), path = dir + "/split.h5";
  ASSERT_FALSE(dir.empty());
  ImplicitBdem m(adaptive, MPI_COMM_WORLD, bdem::model_from_scene(adaptive));
  while (m.counters().at("iteration_splits") < 1 && m.time() < adaptive.time.end - 1e-12) m.advance();  // the impact
  m.write_checkpoint(path);
  const bdem::Model ck = bdem::model_from_checkpoint(path, MPI_COMM_WORLD);
  EXPECT_EQ(ck.schedule.fracture_depth, 1);
  ImplicitBdem restarted(adaptive, MPI_COMM_WORLD, ck);
  expect_same_steps(m, restarted, 2);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::filesystem::remove_all(dir);
}

}  // namespace mpi_implicit_fracture
