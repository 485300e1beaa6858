// Implicit bonded DEM restarts on 1, 2 and 3 ranks: bit-identical continuation on the same ranks, the carried
// matrix, gradient and point-block Jacobi steps, and checkpoints of another integrator or form.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "percussion/methods/bdem/create.hpp"
#include "percussion/methods/bdem/checkpoint.hpp"
#include "percussion/methods/bdem/explicit_bdem.hpp"
#include "../support/implicit_test_support.hpp"

namespace mpi_implicit_restart {

using namespace percussion;
using bdem::ImplicitBdem;
using namespace percussion::test;

namespace {

// The gradient a midpoint run carries into its first step, as its checkpoint records it (force, torque).
std::vector<Eigen::Vector3d> carried_gradient(ImplicitBdem& m, const std::string& path) {
  m.write_checkpoint(path);
  const bdem::Model c = bdem::model_from_checkpoint(path, MPI_COMM_WORLD);
  std::vector<Eigen::Vector3d> g = c.force;
  g.insert(g.end(), c.torque.begin(), c.torque.end());
  return g;
}

double largest_norm(const std::vector<Eigen::Vector3d>& v) {
  double n = 0;
  for (const auto& e : v) n = std::max(n, e.norm());
  return n;
}

}  // namespace

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

TEST(ImplicitRestart, RestartContinuesTheRun) { expect_restart_continues_the_run(block_scene(kCantilever)); }

// The transient leaves nothing behind but broken bonds, so a checkpoint between breaking steps continues bit for bit.
TEST(ImplicitRestart, FractureTransientRestartContinuesTheRun) {
  expect_restart_continues_the_run(transient_block_scene(), 3);
}
TEST(ImplicitRestart, FractureTransientReachRestartContinuesTheRun) {
  bdem::BdemScene scene = transient_block_scene();
  scene.implicit.fracture_transient_reach = 3;
  expect_restart_continues_the_run(scene, 3);
}

// A checkpoint continued by the other integrator: the run takes its own step from the checkpoint's time on (an
// explicit run at the implicit step would blow up at once). The pulled end follows its prescribed motion through
// both switches (with the time counted from step 0 at the new step, it would jump back to near its start), a
// restart of the continuation continues it bit for bit, and the way back to the implicit step keeps the time too.
TEST(ImplicitRestart, OtherIntegratorContinuesACheckpointAtItsOwnStep) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string dir = shared_temp_dir(), implicit_path = dir + "/implicit.h5", explicit_path = dir + "/explicit.h5";
  ASSERT_FALSE(dir.empty());
  bdem::BdemScene scene = pulled_block_scene("bdf2");
  for (auto& m : scene.materials) m.tensile_strength = m.shear_strength = 1e12;
  bdem::BdemScene explicit_scene = scene;
  explicit_scene.integrator = "explicit";
  const bdem::Model start = bdem::model_from_scene(scene);
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
TEST(ImplicitRestart, ExplicitFractureRestartContinuesTheRun) {
  bdem::BdemScene scene = pulled_block_scene("bdf2");
  scene.implicit.fracture_integrator = "explicit";
  scene.implicit.explicit_window = 2;
  expect_restart_continues_the_run(scene, 2);
}

// Three loose spheres resting on the cantilever: the matrix carried into the step after the checkpoint holds
// contact blocks along normals taken at a predictor, which the checkpoint keeps (particles/newton_matrix_state),
// so the restart assembles the same matrix and continues bit for bit.
TEST(ImplicitRestart, ContactRestartContinuesTheRun) {
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
    const bdem::Model model = bdem::model_from_checkpoint(path, MPI_COMM_WORLD);
    EXPECT_EQ(model.newton_state.size(), 21 * model.radius.size());  // a matrix to carry
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::filesystem::remove_all(dir);
  expect_restart_continues_the_run(scene, half);
}

// An unbreakable plate bouncing on its rim: its steps refresh their contacts (contact refreshes, active-set
// rounds), and the next step keeps that refreshed matrix with its contacts brought up to date again. The restart
// assembles the matrix at the state its kept blocks are from and refreshes the contacts as the interrupted run
// does: bit for bit, the refreshes in between notwithstanding.
TEST(ImplicitRestart, RefreshedMatrixCarriesAcrossARestart) {
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

TEST(ImplicitRestart, DiluRestartContinuesTheRun) {
  bdem::BdemScene scene = block_scene(kCantilever);
  scene.implicit.petsc_options = {{"-bdem_sub_pc_type", "dilu"}};
  expect_restart_continues_the_run(scene);
}

// The midpoint form carries ∇V at the last midpoint through the checkpoint.
TEST(ImplicitRestart, MidpointRestartContinuesTheRun) {
  expect_restart_continues_the_run(block_scene(kCantilever, 1e12, "midpoint"));
}

// BDF2 carries x, q, v, ω of the last step's start (particles/bdf2_history) through the checkpoint.
TEST(ImplicitRestart, Bdf2RestartContinuesTheRun) {
  expect_restart_continues_the_run(block_scene(kCantilever, 1e12, "bdf2"));
}

// Runs whose every step is cut (cut_scene) restart bit-identically on the same ranks: a failed try's rebuilds
// and the half steps leave nothing behind that a checkpoint at the step's end does not carry.
TEST(ImplicitRestart, CutRestartContinuesTheRun) {
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

// one carries no gradient and takes the same steps as a fresh start from the checkpoint's state. So does a file
// that does not record its form (written before the "form" attribute); a midpoint checkpoint keeps its gradient.
TEST(ImplicitRestart, MidpointRestartFromExplicitCheckpointStartsFresh) {
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
  const bdem::Model ck = bdem::model_from_checkpoint(path, MPI_COMM_WORLD);
  EXPECT_EQ(ck.written_by_integrator, "explicit");
  EXPECT_EQ(ck.written_by_form, "velocity_verlet");
  ASSERT_GT(largest_norm(ck.force), 0.0);  // there is something to misread (gravity, bonds)

  ImplicitBdem restarted(scene, MPI_COMM_WORLD, ck);
  EXPECT_EQ(largest_norm(carried_gradient(restarted, carried)), 0.0);
  // The same state, partition and pair lists, started fresh: bit-identical steps.
  bdem::Model same_state = ck;
  same_state.from_checkpoint = false;
  ImplicitBdem fresh(scene, MPI_COMM_WORLD, same_state);
  expect_same_steps(restarted, fresh, 3);

  // A midpoint checkpoint (restarted's, after its steps) carries a gradient ...
  restarted.write_checkpoint(path);
  bdem::Model mid = bdem::model_from_checkpoint(path, MPI_COMM_WORLD);
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
TEST(ImplicitRestart, Bdf2RestartFromBackwardEulerCheckpointStartsFresh) {
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
  const bdem::Model ck = bdem::model_from_checkpoint(path, MPI_COMM_WORLD);
  EXPECT_EQ(ck.written_by_form, "backward_euler");
  EXPECT_TRUE(ck.bdf2_history.empty());
  bdem::Model same_state = ck;
  same_state.from_checkpoint = false;
  same_state.written_by_form.clear();
  ImplicitBdem restarted(scene, MPI_COMM_WORLD, ck), fresh(scene, MPI_COMM_WORLD, same_state);
  expect_same_steps(restarted, fresh, 3);

  restarted.write_checkpoint(path);
  const bdem::Model bdf2 = bdem::model_from_checkpoint(path, MPI_COMM_WORLD);
  EXPECT_EQ(bdf2.written_by_form, "bdf2");
  ASSERT_EQ(bdf2.bdf2_history.size(), bdf2.x.size() * bdem::Model::kBdf2HistoryWidth);
  EXPECT_EQ(bdf2.bdf2_history_step, bdf2.time_step);
  bdem::Model no_history = bdf2;
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
TEST(ImplicitRestart, ExplicitRestartFromImplicitCheckpointRecomputesForces) {
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
  bdem::Model ck = bdem::model_from_checkpoint(path, MPI_COMM_WORLD);
  ASSERT_GT(largest_norm(ck.force), 0.0);
  ck.time_step = bdem::scene_time_step(explicit_scene);  // the implicit step is far beyond explicit stability
  bdem::Model same_state = ck;
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

// After a step whose IC(0) had to shift, the next steps start on point-block Jacobi (1, 2, 4, 8 of them while it
// keeps shifting) instead of factoring IC(0) only to drop it. The checkpoint carries how many are left, so a
// restart takes the same path, bit for bit; and the run reaches the minimisers of one that always tries IC(0).
TEST(ImplicitRestart, PointBlockJacobiStepsCarryThroughARestart) {
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

}  // namespace mpi_implicit_restart
