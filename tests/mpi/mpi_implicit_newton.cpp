// The implicit Newton iteration's options on 1, 2 and 3 ranks: fallback preconditioners, lagged and carried
// matrices, contact refreshes, active-set rounds, the line search's extrapolation and contact model, and
// predicted contact normals each reach the minimisers (or the physics) of the plain iteration.
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "percussion/methods/bdem/explicit_bdem.hpp"
#include "../support/implicit_test_support.hpp"

namespace mpi_implicit_newton {

using namespace percussion;
using bdem::ImplicitBdem;
using namespace percussion::test;

// A contact-heavy drop on which IC(0) meets indefinite pivots: the Newton steps solved by the fallback (the rest of
// a time step after a shifted factorisation), block symmetric Gauss–Seidel or point-block Jacobi, reach the
// minimisers that scalar Jacobi reaches, and so do D-ILU's, rebuilt whenever a contact opens or closes, and
// Gauss–Seidel's as the default preconditioner's blocks, set up again after every assembly.
TEST(ImplicitNewton, FallbacksReachTheSameMinimisers) {
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

// A lagged Hessian (the matrix of an earlier Newton iteration kept while Newton contracts fast with it) only
// changes the path: three-point bending through its crack reaches the same minimisers and breaks the same bonds
// as assembling at every iteration, with fewer assemblies. (How many fewer is a benchmark figure:
// scripts/bench/newton_settings.sh.)
TEST(ImplicitNewton, LaggedHessianReachesTheSameMinimisers) {
  bdem::BdemScene lagged = shipped_scene("three_point_bending_small.json");
  lagged.implicit.tolerance = 1e-8;
  lagged.time.end = 14 * *lagged.time.step;  // past the crack's start at step 9
  bdem::BdemScene fresh = lagged;
  fresh.implicit.hessian_lag_contraction = 0;
  fresh.implicit.contact_refresh = false;
  const Outcome a = run(lagged), b = run(fresh);
  EXPECT_GT(a.counters.at("lagged_hessians"), 0);
  EXPECT_EQ(b.counters.at("lagged_hessians"), 0);
  EXPECT_LT(a.counters.at("hessian_assemblies"), b.counters.at("hessian_assemblies"));
  expect_same_minimisers(a, b, 5);  // the crack started
}

// A contact refresh (the later Newton matrices of a step update only the contacts' blocks and keep the bonds'
// and the inertia's) only changes the path: the plate drop, whose contacts open and close at every iteration,
// reaches the same minimisers and breaks the same bonds as assembling in full, with fewer full assemblies (the
// Newton iterations either way are a benchmark figure: scripts/bench/newton_settings.sh). On 2
// and 3 ranks the pairs across ranks send their blocks' changes to the owners as the full assembly sends blocks.
TEST(ImplicitNewton, ContactRefreshReachesTheSameMinimisers) {
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
  EXPECT_LT(a.counters.at("hessian_assemblies"), b.counters.at("hessian_assemblies"));
  expect_same_minimisers(a, b, 100);  // the rim chipped
}

// Semismooth active-set rounds (implicit.active_set_rounds): the contacts a Newton step would close or open switch
// branch in its model, which is solved again before the line search. On the plate drop, whose contacts open and
// close within its steps, the rounds switch branches and reach the same minimisers and broken bonds as the plain
// iteration. (The Newton iterations they save are a benchmark figure: scripts/bench/newton_settings.sh.)
TEST(ImplicitNewton, ActiveSetRoundsReachTheSameMinimisers) {
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
  expect_same_minimisers(a, b, 100);  // the rim chipped
}

// A Newton matrix carried into the next step (its first iteration keeps the last step's matrix while no contact
// opened or closed) only changes the path: the sagging cantilever reaches the same minimisers as assembling at
// every iteration, with fewer assemblies than steps, in both forms. (Restarts with a carried matrix are bit for
// bit: RestartContinuesTheRun and its variants write their checkpoints mid-carry.)
TEST(ImplicitNewton, CarriedMatrixReachesTheSameMinimisers) {
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
// it is taken and leaves the same physics: broken bonds within 1 % and energy within 2 % of plain backtracking. (The
// two runs cut different steps in half, so their time steps differ there and the states agree only that far. The
// Newton iterations it saves are a benchmark figure: scripts/bench/newton_settings.sh.)
TEST(ImplicitNewton, LineSearchExtrapolationKeepsThePhysics) {
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
  ASSERT_GT(b.final.bonds_broken, 5000);
  EXPECT_NEAR(static_cast<double>(a.final.bonds_broken), static_cast<double>(b.final.bonds_broken),
              0.01 * static_cast<double>(b.final.bonds_broken));
  EXPECT_NEAR(a.final.total, b.final.total, 0.02 * b.final.total);
}

// The line search's contact model (implicit.line_search_contacts): where a Newton step runs into contacts its model
// did not hold, the first trial goes to the minimiser of the line with those contacts taken exactly, instead of the
// full step and its halvings. Over drop_small's first 8 steps (the shattering ball's fragments driven into the floor
// and each other) it shortens the first trial of many iterations, with the same physics: broken bonds within 1 % and
// energy within 2 % of plain backtracking (the two paths through the non-convex landscape reach other minimisers,
// which backward Euler damps alike). (The trials it saves are a benchmark figure: scripts/bench/newton_settings.sh.)
TEST(ImplicitNewton, ContactLineModelKeepsThePhysics) {
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
  ASSERT_GT(b.final.bonds_broken, 5000);
  EXPECT_NEAR(static_cast<double>(a.final.bonds_broken), static_cast<double>(b.final.bonds_broken),
              0.01 * static_cast<double>(b.final.bonds_broken));
  EXPECT_NEAR(a.final.total, b.final.total, 0.02 * b.final.total);
}

// Contact normals fixed at the predictor (taken again once a particle drifted a tenth of its radius): the contact
// energy is convex and Newton's model exact for it. Over drop_small's first 8 steps (the shattering ball's
// fragments squeezed into the floor) the normals are taken again and the run breaks the same bonds within 2 % as
// normals following the iterate. The incremental potential is not convex there, and the two runs reach different
// minimisers, which backward Euler damped alike: their energies within 2 % of each other, both below the explicit
// run's over the same time. (The Newton iterations they save are a benchmark figure: scripts/bench/newton_settings.sh.)
TEST(ImplicitNewton, PredictedContactNormalsKeepThePhysics) {
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
  const bdem::Totals expected = reference.totals();

  EXPECT_GT(a.counters.at("contact_normal_updates"), 0);
  EXPECT_EQ(b.counters.at("contact_normal_updates"), 0);
  ASSERT_GT(b.final.bonds_broken, 5000);
  EXPECT_NEAR(static_cast<double>(a.final.bonds_broken), static_cast<double>(b.final.bonds_broken),
              0.02 * static_cast<double>(b.final.bonds_broken));
  EXPECT_LT(a.final.total, expected.total);
  EXPECT_LT(b.final.total, expected.total);
  EXPECT_NEAR(a.final.total, b.final.total, 0.02 * b.final.total);
}

}  // namespace mpi_implicit_newton
