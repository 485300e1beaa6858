// Explicit bonded DEM on 1, 2 and 3 ranks: conservation laws, an analytic period, agreement with a serial run
// of the same scene, and restarts (same and different rank count).
#include <gtest/gtest.h>
#include <mpi.h>

#include <Eigen/Geometry>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <numbers>
#include <span>
#include <string>
#include <vector>

#include "percussion/methods/bdem/scene.hpp"
#include "percussion/methods/bdem/checkpoint.hpp"
#include "percussion/methods/bdem/domain.hpp"
#include "percussion/methods/bdem/explicit_bdem.hpp"
#include "percussion/methods/bdem/verlet_step.hpp"
#include "percussion/physics/quaternion.hpp"
#include "../support/bdem_test_support.hpp"

namespace mpi_explicit_bdem {

using namespace percussion;
using bdem::ExplicitBdem;
using namespace percussion::test;

namespace {

constexpr double kRadius = 0.016;

std::string material(double strength) {
  return R"({ "name": "m", "density": 1000, "youngs_modulus": 1e7, "poisson_ratio": 0.3, "tensile_strength": )" +
         std::to_string(strength) + R"(, "friction": 0.5, "restitution": 0.5 })";
}

// strength 1e12: nothing breaks; 3e4: the paper's fracture threshold.
bdem::BdemScene scene_from(const std::string& body, const std::string& extra = "", double strength = 1e12) {
  const std::string text = R"({ "method": "bdem", "materials": [)" + material(strength) + R"(], "bodies": [)" + body +
                           R"(], "time": { "end": 10.0 }, "output": { "frame_interval": 1.0 })" +
                           (extra.empty() ? std::string() : ", " + extra) + "}";
  return bdem::parse_scene_text(text, "test-scene.json");
}

// The owned slots whose particle id is `remainder` modulo 3: a third of a body, spread over it and over the ranks.
std::vector<std::int32_t> owned_third(const bdem::Domain& d, int remainder) {
  std::vector<std::int32_t> slots;
  for (std::size_t i = 0; i < d.n_owned; ++i)
    if (d.gid[i] % 3 == remainder) slots.push_back(static_cast<std::int32_t>(i));
  return slots;
}

// A body whose first third moves (owned_third) and the rest coasts, its forces evaluated.
struct CoastingBlock {
  CoastingBlock(const bdem::BdemScene& scene, const bdem::Model& g)
      : d(scene, MPI_COMM_WORLD, g, timers), step(scene, d, timers), dt(bdem::scene_time_step(scene)) {
    step.coast();
    step.move(owned_third(d, 0));
    step.compute_forces();
  }
  PhaseTimers timers;
  bdem::Domain d;
  bdem::VerletStep step;
  double dt;
};

std::string box_body(double lx, double ly, double lz, const std::string& more = "") {
  return R"({ "material": "m", "particle_radius": 0.016, "shape": { "type": "box", "min": [0, 0, 0], "max": [)" +
         std::to_string(lx) + ", " + std::to_string(ly) + ", " + std::to_string(lz) + "] }" + more + "}";
}

}  // namespace

// Undamped, unbroken, no walls or gravity: velocity Verlet conserves energy (no drift) and both momenta.
TEST(ExplicitBdem, ConservesEnergyAndMomentum) {
  const bdem::BdemScene scene = scene_from(box_body(12 * kRadius, 10 * kRadius, 8 * kRadius));
  bdem::Model g = bdem::model_from_scene(scene);
  shake(g, 0.02);
  ExplicitBdem m(scene, MPI_COMM_WORLD, g);
  ASSERT_GT(m.global_particles(), 100);
  const bdem::Totals o0 = m.totals();
  constexpr int kSteps = 10000, kWindow = 1000;
  double first = 0, last = 0, p_scale = 0;
  for (const auto& v : m.owned_velocities()) p_scale += v.norm();
  for (int s = 0; s < kSteps; ++s) {
    m.advance();
    // Verlet energy oscillates with O(dt^2) amplitude; drift is the change of its running mean.
    if (s < kWindow) first += m.totals().total / kWindow;
    if (s >= kSteps - kWindow) last += m.totals().total / kWindow;
  }
  const bdem::Totals o1 = m.totals();
  EXPECT_EQ(o1.bonds_broken, 0);
  EXPECT_GT(o0.kinetic, 0);
  const double drift = std::abs(last - first) / std::abs(first);
  EXPECT_LT(drift, 1e-4) << "energy " << first << " -> " << last;
  EXPECT_LT(std::abs(o1.total - o0.total) / o0.total, 2e-2);  // instantaneous: bounded oscillation
  const double mass = scene.materials[0].density * 4.0 / 3.0 * std::numbers::pi * std::pow(kRadius, 3);
  for (int d = 0; d < 3; ++d) {
    EXPECT_NEAR(o1.momentum[d], o0.momentum[d], 1e-12 * mass * 1000 * 0.02) << d;
    EXPECT_NEAR(o1.angular_momentum[d], o0.angular_momentum[d], 1e-9 * std::abs(o0.angular_momentum[d]) + 1e-14) << d;
  }
  if (::testing::Test::HasFailure()) return;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::printf("energy drift %.3e over %d steps\n", drift, kSteps);
}

// A free-free chain of N bonded spheres in its lowest axial mode: omega = 2 sqrt(k_n/m) sin(pi/(2N)).
TEST(ExplicitBdem, ChainAxialPeriodMatchesSpringMass) {
  constexpr int kN = 10;
  const bdem::BdemScene scene = scene_from(box_body(2 * kN * kRadius, 2 * kRadius, 2 * kRadius));
  bdem::Model g = bdem::model_from_scene(scene);
  ASSERT_EQ(g.particles(), kN);
  const double amplitude = 1e-3;
  for (int i = 0; i < kN; ++i) g.v[i] = Eigen::Vector3d(amplitude * std::cos(std::numbers::pi * (i + 0.5) / kN), 0, 0);
  ExplicitBdem m(scene, MPI_COMM_WORLD, g);
  const double mass = g.mass[0];
  const double kn = std::numbers::pi / 2 * scene.materials[0].youngs_modulus * kRadius;
  const double period = 2 * std::numbers::pi / (2 * std::sqrt(kn / mass) * std::sin(std::numbers::pi / (2 * kN)));
  // Track the first particle's x-velocity; time its sign changes.
  std::vector<double> crossings;
  double prev = amplitude;
  const int steps = static_cast<int>(3.2 * period / m.time_step());
  for (int s = 0; s < steps; ++s) {
    m.advance();
    double local = 0, v0 = 0;
    for (std::size_t i = 0; i < m.owned_ids().size(); ++i)
      if (m.owned_ids()[i] == 0) local = m.owned_velocities()[i][0];
    MPI_Allreduce(&local, &v0, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if ((prev > 0) != (v0 > 0)) crossings.push_back(m.time() - m.time_step() * v0 / (v0 - prev));
    prev = v0;
  }
  ASSERT_GE(crossings.size(), 5u);
  const double measured = 2 * (crossings.back() - crossings.front()) / static_cast<double>(crossings.size() - 1);
  EXPECT_NEAR(measured / period, 1.0, 0.02) << "measured " << measured << " s, spring-mass " << period << " s";
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::printf("chain period: measured %.6e s, spring-mass %.6e s, ratio %.5f\n", measured, period, measured / period);
}

// The same fracturing scene on this communicator and on a single rank: same bonds broken, same positions.
class RankAgreement : public ::testing::TestWithParam<const char*> {};

bdem::BdemScene agreement_scene(const std::string& which) {
  if (which == "beam")
    return scene_from(box_body(0.5, 0.13, 0.13),
                      R"("boundary_conditions": [ { "region": { "min": [-1, -1, -1], "max": [0.04, 1, 1] } },
                          { "region": { "min": [0.46, -1, -1], "max": [1, 1, 1] }, "velocity": [0.5, 0, 0] } ])",
                    3e4);
  return scene_from(R"({ "material": "m", "particle_radius": 0.016, "velocity": [0.3, 0, -3],
                         "shape": { "type": "sphere", "center": [0, 0, 0.13], "radius": 0.12 } })",
                    R"("obstacles": [ { "type": "plane", "point": [0, 0, 0], "normal": [0, 0, 1] } ],
                       "gravity": [0, 0, -9.81])",
                    3e4);
}

TEST_P(RankAgreement, SameAsSerialRun) {
  const bdem::BdemScene scene = agreement_scene(GetParam());
  ExplicitBdem world(scene, MPI_COMM_WORLD, bdem::model_from_scene(scene));
  ExplicitBdem serial(scene, MPI_COMM_SELF, bdem::model_from_scene(scene));
  for (int s = 0; s < 600; ++s) {
    world.advance();
    serial.advance();
  }
  const auto broken_world = broken_bonds(MPI_COMM_WORLD, world);
  const auto broken_serial = broken_bonds(MPI_COMM_SELF, serial);
  EXPECT_GT(broken_serial.size(), 10u) << "the scene must fracture to test anything";
  EXPECT_EQ(broken_world, broken_serial);
  EXPECT_LE(max_rel_diff(positions(MPI_COMM_SELF, serial), positions(MPI_COMM_WORLD, world)), 1e-10);
  EXPECT_GT(world.totals().contacts + serial.totals().contacts, 0);
}

INSTANTIATE_TEST_SUITE_P(Scenes, RankAgreement, ::testing::Values("beam", "drop"));

// The automatic Verlet skin (contact.skin 0): 0.3 r_max with the explicit integrator, 0.8 r_max with the implicit one
// on HCP bodies, 0.3 r_max again in a scene with a woven body, whose yarn crossings would gain candidate pairs.
TEST(ExplicitBdem, AutomaticSkinFollowsIntegratorAndBodies) {
  const std::string box = box_body(6 * kRadius, 6 * kRadius, 6 * kRadius);
  const std::string woven = R"({ "material": "m", "particle_radius": 0.016, "shape": { "type": "woven",
      "min": [0.2, 0, 0], "size": [0.4, 0.4], "spacing": 0.09 } })";
  const std::string implicit = R"("integrator": "implicit")";
  const std::vector<std::pair<bdem::BdemScene, double>> cases = {{scene_from(box), 0.3},
                                                       {scene_from(box, implicit), 0.8},
                                                       {scene_from(box + ", " + woven, implicit), 0.3},
                                                       {scene_from(woven), 0.3}};
  for (const auto& [scene, factor] : cases) {
    PhaseTimers timers;
    const bdem::Domain d(scene, MPI_COMM_WORLD, bdem::model_from_scene(scene), timers);
    EXPECT_DOUBLE_EQ(d.skin, factor * kRadius) << scene.integrator << ", " << scene.bodies.size() << " bodies";
  }
}

// Two balls 3 cm apart colliding at 1 m/s, and the same collision seen from a frame moving at 25 m/s: the pair lists are
// rebuilt when the particles move relative to one another, not when everything moves together (a falling
// body), and the boosted run still meets every contact, so both end in the same state up to the boost.
TEST(ExplicitBdem, CommonMotionNeedsNoRebuild) {
  auto run = [](const Eigen::Vector3d& boost, std::vector<double>& x, long& rebuilds, double& time) {
    auto ball = [&](double cx, double vx) {
      const Eigen::Vector3d v = boost + Eigen::Vector3d(vx, 0, 0);
      return R"({ "material": "m", "particle_radius": 0.016, "velocity": [)" + std::to_string(v[0]) + ", " +
             std::to_string(v[1]) + ", " + std::to_string(v[2]) + R"(], "shape": { "type": "sphere", "center": [)" +
             std::to_string(cx) + R"(, 0, 0], "radius": 0.06 } })";
    };
    const bdem::BdemScene scene = scene_from(ball(0, 0.5) + ", " + ball(0.15, -0.5));
    ExplicitBdem m(scene, MPI_COMM_WORLD, bdem::model_from_scene(scene));
    long contact_steps = 0;
    for (int s = 0; s < 3000; ++s) {  // the balls meet after about 1,100 steps
      m.advance();
      if (m.totals().contacts > 0) ++contact_steps;
    }
    EXPECT_GT(contact_steps, 20) << "the balls must collide";
    x = positions(MPI_COMM_WORLD, m);
    rebuilds = m.pair_rebuilds();
    EXPECT_EQ(m.counters().at("pair_rebuilds"), static_cast<double>(rebuilds));  // what summary.json reports
    time = m.time();
  };
  std::vector<double> x_rest, x_boost;
  long rebuilds_rest = 0, rebuilds_boost = 0;
  double t = 0;
  const Eigen::Vector3d boost = Eigen::Vector3d(20, -12, 9);
  run(Eigen::Vector3d::Zero(), x_rest, rebuilds_rest, t);
  run(boost, x_boost, rebuilds_boost, t);
  const double travelled = boost.norm() * t;  // in half-skins: how often a rebuild on absolute motion would come
  ASSERT_GT(travelled / (0.5 * 0.3 * kRadius), 10 * (rebuilds_rest + 1)) << "the boost must matter";
  EXPECT_LE(rebuilds_boost, rebuilds_rest + 1);
  double worst = 0;
  for (std::size_t i = 0; i < x_rest.size(); ++i) worst = std::max(worst, std::abs(x_boost[i] - boost[i % 3] * t - x_rest[i]));
  EXPECT_LT(worst, 1e-9) << "m";  // (the boosted positions carry round-off of |boost| t ~ 0.1 m)
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::printf("rebuilds at rest %ld, boosted %ld; largest difference %.2e m over %.3g s\n", rebuilds_rest, rebuilds_boost, worst, t);
}

// Coasting (implicit.fracture_transient_reach) brings a far particle up to date only where its state is read. Every
// pair with a moving particle, on every rank (ghosts from their owners), must read the coasting side's current state:
// x₀ + τ v₀ + ½ τ² g, v₀ + τ g and exp(ω τ) ⊗ q₀ from the coast's start; after uncoast() every particle that coasted
// throughout is there too. A spinning, falling block rebuilds its pairs meanwhile (so the rebuild test must see the
// coasting particles' drift), and a third of it starts moving half-way.
TEST(ExplicitBdem, CoastingParticlesAreUpToDateWhereTheirStateIsRead) {
  const bdem::BdemScene scene = scene_from(box_body(12 * kRadius, 10 * kRadius, 8 * kRadius), R"("gravity": [0, 0, -9.81])");
  bdem::Model g = bdem::model_from_scene(scene);
  shake(g, 0.01);
  const Eigen::Vector3d spin(2, -3, 6), centre(6 * kRadius, 5 * kRadius, 4 * kRadius);
  for (std::size_t i = 0; i < g.v.size(); ++i) {  // a rigid spin strains no bond but moves the pairs apart
    g.v[i] += spin.cross(g.x[i] - centre);
    g.w[i] += spin;
  }
  CoastingBlock block(scene, g);
  bdem::Domain& d = block.d;
  bdem::VerletStep& step = block.step;
  const double dt = block.dt;
  const long rebuilds_before = d.rebuilds();
  double tau = 0;
  long checked = 0, stale = 0;
  double largest_spread = 0;  // of the displacements since the last rebuild, in skins
  auto expected_q = [&](std::int64_t id) { return quat::advance_world(g.q[id], g.w[id], tau); };
  auto expected_x = [&](std::int64_t id) -> Eigen::Vector3d {
    return g.x[id] + tau * g.v[id] + (0.5 * tau * tau) * scene.gravity;
  };
  auto expected_v = [&](std::int64_t id) -> Eigen::Vector3d { return g.v[id] + tau * scene.gravity; };
  const double scale = g.x[0].norm() + 1;
  constexpr int kSteps = 400;
  for (int s = 1; s <= kSteps; ++s) {
    step.advance(tau, dt, s);
    tau += dt;
    if (s == kSteps / 2) {
      step.move(owned_third(d, 1));
      d.refresh_ghosts();
      step.compute_forces();
    }
    // The pair lists hold every pair within r_a + r_b + skin at the last rebuild: since then no two particles may have
    // moved by more than the skin relative to each other (the coasting ones along their paths, not where they were
    // last brought up to date).
    std::vector<Eigen::Vector3d> moved(d.n_owned);
    for (std::size_t i = 0; i < d.n_owned; ++i)
      moved[i] = d.displacement(i) + (step.moves(i) ? Eigen::Vector3d::Zero() : Eigen::Vector3d(expected_x(d.gid[i]) - d.x[i]));
    const std::vector<double> all = gather<3>(MPI_COMM_WORLD, std::span<const std::int64_t>(d.gid.data(), d.n_owned),
                                              std::span<const Eigen::Vector3d>(moved), g.particles());
    double spread = 0;
    for (std::size_t i = 0; 3 * i < all.size(); ++i)
      for (std::size_t j = i + 1; 3 * j < all.size(); ++j)
        spread = std::max(spread, Eigen::Vector3d(all[3 * i] - all[3 * j], all[3 * i + 1] - all[3 * j + 1],
                                                  all[3 * i + 2] - all[3 * j + 2]).norm());
    largest_spread = std::max(largest_spread, spread / d.skin);
    for (const bdem::Pair& p : d.pairs) {
      if (!step.moves(p.a) && !step.moves(p.b)) continue;
      for (const std::int32_t e : {p.a, p.b}) {
        if (step.moves(e)) continue;
        ++checked;
        const std::int64_t id = d.gid[e];
        if ((d.q[e] - expected_q(id)).cwiseAbs().maxCoeff() < 1e-13 && (d.x[e] - expected_x(id)).norm() < 1e-12 * scale &&
            (d.v[e] - expected_v(id)).norm() < 1e-12)
          continue;
        if (stale++ == 0)  // (counted, not asserted: every rank must go on to the collective steps)
          ADD_FAILURE() << "particle " << d.gid[e]
                        << (static_cast<std::size_t>(e) < d.n_owned ? " (owned)" : " (ghost)") << " at step " << s;
      }
    }
  }
  step.uncoast();
  for (std::size_t i = 0; i < d.n_owned; ++i) {
    const std::int64_t id = d.gid[i];
    if (id % 3 != 2) continue;  // coasted throughout
    EXPECT_LT((d.q[i] - expected_q(id)).cwiseAbs().maxCoeff(), 1e-13) << id;
    EXPECT_LT((d.x[i] - expected_x(id)).norm(), 1e-12 * scale) << id;
    EXPECT_LT((d.v[i] - expected_v(id)).norm(), 1e-12) << id;
  }
  long counts[2] = {checked, stale}, rebuilds = d.rebuilds() - rebuilds_before;
  MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  const long all_checked = counts[0];
  EXPECT_GT(all_checked, 1000);
  EXPECT_EQ(counts[1], 0) << "stale states read";
  EXPECT_GT(rebuilds, 0) << "the spin must move the pairs past the skin";
  EXPECT_LE(largest_spread, 1 + 1e-9) << "pairs may have been missed";
  EXPECT_GT(largest_spread, 0.5) << "the test must come near the skin";
  // The drift bound spares most steps the visit of every particle.
  EXPECT_GE(step.full_rebuild_tests, rebuilds);  // (each rebuild follows a full test)
  EXPECT_LT(step.full_rebuild_tests, kSteps / 2);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    std::printf("%ld coasting states read by pairs checked, %ld rebuilds, %ld of %d steps tested every particle, "
                "largest relative drift %.3f skins\n",
                all_checked, rebuilds, step.full_rebuild_tests, kSteps, largest_spread);
}

// After move(), compute_forces_of_joined evaluates again only the pairs of the particles that joined; its forces,
// torques and broken bonds must be those of evaluating every listed pair at the state of the last evaluation, to
// the bit. A bond between a joining particle and one already moving held while its end coasted and breaks now, so
// leaving out the joining particles' pairs that were already listed fails the test, as does a stale pair sum.
TEST(ExplicitBdem, ForcesOfJoinedParticlesAreThoseOfAWholeEvaluation) {
  const bdem::BdemScene scene = scene_from(box_body(12 * kRadius, 10 * kRadius, 8 * kRadius), R"("gravity": [0, 0, -9.81])", 3e4);
  bdem::Model g = bdem::model_from_scene(scene);
  shake(g, 0.05);  // (velocities: the contacts' damping reads them)
  for (std::size_t i = 0; i < g.x.size(); ++i)  // strains of about 1 %: bonds over their strength, pairs in contact
    for (int k = 0; k < 3; ++k) g.x[i][k] += 3e-4 * std::sin(7.3 * static_cast<double>(i) + 2.1 * k);
  CoastingBlock block(scene, g);
  bdem::Domain& d = block.d;
  bdem::VerletStep& step = block.step;
  const double dt = block.dt;
  for (int s = 1; s <= 5; ++s) step.advance((s - 1) * dt, dt, s);
  d.refresh_ghosts();
  step.compute_forces();  // at the velocities after the last half kick, which the comparison below reads too
  step.move(owned_third(d, 1));
  d.refresh_ghosts();
  const long before = step.breaks;
  step.compute_forces_of_joined();
  const long after_joined = step.breaks;
  const std::vector<Eigen::Vector3d> force = step.force, torque = step.torque;
  step.compute_forces();
  long counts[4] = {after_joined - before, step.breaks - after_joined, 0, 0};  // broke, broke again, differ, compared
  for (std::size_t i = 0; i < d.n_owned; ++i) {
    if (!step.moves(i)) continue;
    ++counts[3];
    if (force[i] != step.force[i] || torque[i] != step.torque[i]) ++counts[2];
  }
  MPI_Allreduce(MPI_IN_PLACE, counts, 4, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  step.uncoast();
  EXPECT_GT(counts[0], 0) << "the joining particles' bonds must break";
  EXPECT_EQ(counts[1], 0) << "bonds left over their strength";
  EXPECT_EQ(counts[2], 0) << "particles whose force or torque differ";
  EXPECT_GT(counts[3], 50);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    std::printf("%ld bonds broke in the joined evaluation; %ld moving particles compared\n", counts[0], counts[3]);
}

// Checkpoint half-way and continue: bit-identical on the same communicator, equal on one rank.
TEST(ExplicitBdem, RestartContinuesTheRun) {
  const bdem::BdemScene scene = agreement_scene("drop");
  const std::string dir = shared_temp_dir();
  ASSERT_FALSE(dir.empty());
  const std::string path = dir + "/half.h5";
  ExplicitBdem full(scene, MPI_COMM_WORLD, bdem::model_from_scene(scene));
  for (int s = 0; s < 300; ++s) full.advance();
  full.write_checkpoint(path);
  for (int s = 0; s < 300; ++s) full.advance();
  const auto x_full = positions(MPI_COMM_WORLD, full);

  ExplicitBdem same(scene, MPI_COMM_WORLD, bdem::model_from_checkpoint(path, MPI_COMM_WORLD));
  EXPECT_EQ(same.step(), 300);
  for (int s = 0; s < 300; ++s) same.advance();
  EXPECT_EQ(positions(MPI_COMM_WORLD, same), x_full);  // bit-identical
  EXPECT_EQ(broken_bonds(MPI_COMM_WORLD, same), broken_bonds(MPI_COMM_WORLD, full));
  EXPECT_EQ(velocities(MPI_COMM_WORLD, same), velocities(MPI_COMM_WORLD, full));

  ExplicitBdem one(scene, MPI_COMM_SELF, bdem::model_from_checkpoint(path, MPI_COMM_SELF));
  for (int s = 0; s < 300; ++s) one.advance();
  EXPECT_LE(max_rel_diff(x_full, positions(MPI_COMM_SELF, one)), 1e-10);
  MPI_Barrier(MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::filesystem::remove_all(dir);
}

}  // namespace mpi_explicit_bdem
