// The implicit midpoint and BDF2 forms on 1, 2 and 3 ranks: the energy the midpoint keeps, the order of each
// form, exact free fall across step changes, and a free spin.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "percussion/physics/manifold_bond.hpp"
#include "percussion/physics/quaternion.hpp"
#include "../support/implicit_test_support.hpp"

namespace mpi_implicit_forms {

using namespace percussion;
using bdem::ImplicitBdem;
using namespace percussion::test;

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
TEST(ImplicitForms, MidpointKeepsTheEnergyThatBackwardEulerDamps) {
  struct Run { double loss, worst; };  // relative to the energy after the first step: final loss, largest deviation
  auto run = [](const std::string& form) {
    const bdem::BdemScene scene = block_scene("", 1e12, form);
    bdem::Model g = bdem::model_from_scene(scene);
    shake(g, 0.05);
    ImplicitBdem m(scene, MPI_COMM_WORLD, g);
    const bdem::Totals start = m.totals();
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
    const bdem::Totals last = m.totals();
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
// penalty pushes a pair apart by what it overlapped half a step before, so the small plate's fragments, jostling in
// contact without friction at 10 T, would gain energy at every step until every bond broke. At the step's end they
// lose it, while the bonded plate still keeps what backward Euler would damp
// (MidpointKeepsTheEnergyThatBackwardEulerDamps).
TEST(ImplicitForms, MidpointFragmentsInContactGainNoEnergy) {
  bdem::BdemScene scene = shipped_scene("plate_drop_small.json");
  scene.implicit.form = "midpoint";
  scene.implicit.step_factor = 10;
  for (Material& m : scene.materials) m.friction = 0;
  for (Obstacle& o : scene.obstacles) o.friction = 0;
  scene.time.end = 0.0065;
  const bdem::Totals start = ImplicitBdem(scene, MPI_COMM_WORLD, bdem::model_from_scene(scene)).totals();
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
  bdem::Model g = bdem::model_from_scene(scene);
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
TEST(ImplicitForms, MidpointAndBdf2AreSecondOrderBackwardEulerFirst) {
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
TEST(ImplicitForms, MidpointFallsExactly) {
  const int steps = 10;
  const double h = 2e-3, t = steps * h;
  for (const std::string form : {"midpoint", "backward_euler"}) {
    bdem::BdemScene scene = chain_scene(form, h);
    scene.gravity = Eigen::Vector3d(0, 0, -9.81);
    const bdem::Model g = bdem::model_from_scene(scene);
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
TEST(ImplicitForms, Bdf2FallsExactlyAcrossStepChanges) {
  const double h = 2e-3;
  bdem::BdemScene scene = chain_scene("bdf2", h);
  scene.bodies[0].bonded = false;
  scene.gravity = Eigen::Vector3d(0, 0, -9.81);
  auto run = [&](const bdem::BdemScene& s, double last_step, int steps) {
    bdem::Model g = bdem::model_from_scene(s);
    constexpr std::size_t w = bdem::Model::kBdf2HistoryWidth;
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
TEST(ImplicitForms, MidpointFallsExactlyAcrossStepChanges) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string dir = shared_temp_dir(), path = dir + "/midpoint.h5";
  ASSERT_FALSE(dir.empty());
  const double h = 2e-3;
  bdem::BdemScene scene = chain_scene("midpoint", h);
  scene.bodies[0].bonded = false;
  scene.gravity = Eigen::Vector3d(0, 0, -9.81);
  bdem::Model g = bdem::model_from_scene(scene);
  for (auto& x : g.x) x *= 2.0;  // apart: no contacts
  {
    ImplicitBdem m(scene, MPI_COMM_WORLD, g);
    for (int s = 0; s < 3; ++s) m.advance();
    m.write_checkpoint(path);
  }
  const bdem::Model ck = bdem::model_from_checkpoint(path, MPI_COMM_WORLD);
  EXPECT_EQ(ck.gradient_step, h);
  // Restarted on the scene's step with every try failing (one Newton iteration, which is exact here) and halved:
  // the half steps follow a gradient of a whole one, as after a cut inside a run.
  bdem::BdemScene cut = scene;
  cut.implicit.max_iterations = 1;
  cut.implicit.step_cuts = 1;
  for (const double next : {0.5 * h, 2.0 * h, 8.0 * h, h}) {
    bdem::BdemScene changed = next == h ? cut : scene;
    changed.time.step = next;
    bdem::Model restart = ck;
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
TEST(ImplicitForms, MidpointKeepsAFreeSpin) {
  const double h = 1e-3, omega_h = 0.5;
  const int steps = 50;
  bdem::BdemScene scene = chain_scene("midpoint", h);
  scene.bodies[0].bonded = false;
  bdem::Model g = bdem::model_from_scene(scene);
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

}  // namespace mpi_implicit_forms
