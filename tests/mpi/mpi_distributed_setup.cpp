// Distributed set-up (issue 62): every rank generates only its share of each body, yet the particles, ids, radii
// and bonds are those one rank generates alone, bit for bit; placing them keeps every row exactly once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "../support/implicit_test_support.hpp"
#include "percussion/methods/bdem/model.hpp"
#include "percussion/physics/bond_rest.hpp"

namespace mpi_distributed_setup {

using namespace percussion;

namespace {

bool same_bits(const double* a, const double* b, std::size_t n) { return std::memcmp(a, b, n * sizeof(double)) == 0; }

// Every row a rank holds equals the whole model's row of the same id; the rows over all ranks are each id once.
void expect_rows_of(const bdem::Model& part, const bdem::Model& whole, MPI_Comm comm) {
  ASSERT_EQ(part.particles(), whole.particles());
  ASSERT_EQ(part.bonds(), whole.bonds());
  ASSERT_TRUE(std::is_sorted(part.id.begin(), part.id.end()));
  for (std::size_t i = 0; i < part.rows(); ++i) {
    const auto g = static_cast<std::size_t>(part.id[i]);
    ASSERT_LT(g, whole.rows());
    EXPECT_TRUE(same_bits(part.x[i].data(), whole.x[g].data(), 3)) << "particle " << g;
    EXPECT_TRUE(same_bits(part.v[i].data(), whole.v[g].data(), 3)) << "particle " << g;
    EXPECT_TRUE(same_bits(part.w[i].data(), whole.w[g].data(), 3)) << "particle " << g;
    EXPECT_TRUE(same_bits(part.q[i].data(), whole.q[g].data(), 4)) << "particle " << g;
    EXPECT_EQ(part.radius[i], whole.radius[g]);
    EXPECT_EQ(part.mass[i], whole.mass[g]);
    EXPECT_EQ(part.material[i], whole.material[g]);
    EXPECT_EQ(part.constraint[i], whole.constraint[g]);
  }
  for (std::size_t k = 0; k < part.bond_rows(); ++k) {
    const auto b = static_cast<std::size_t>(part.bond_id[k]);
    ASSERT_LT(b, whole.bond_rows());
    EXPECT_EQ(part.pair[k], whole.pair[b]) << "bond " << b;
    double mine[physics::kBondRestColumns], all[physics::kBondRestColumns];
    physics::pack_bond_rest(part.rest[k], mine);
    physics::pack_bond_rest(whole.rest[b], all);
    EXPECT_TRUE(same_bits(mine, all, physics::kBondRestColumns)) << "bond " << b;
    EXPECT_EQ(part.strength[k], whole.strength[b]);
    EXPECT_EQ(part.intact[k], whole.intact[b]);
  }
  // Each id once over the ranks: the counts add up and the id sums match (ids are distinct within a rank).
  std::int64_t local[4] = {static_cast<std::int64_t>(part.rows()), static_cast<std::int64_t>(part.bond_rows()),
                           std::accumulate(part.id.begin(), part.id.end(), std::int64_t{0}),
                           std::accumulate(part.bond_id.begin(), part.bond_id.end(), std::int64_t{0})};
  std::int64_t global[4];
  MPI_Allreduce(local, global, 4, MPI_INT64_T, MPI_SUM, comm);
  EXPECT_EQ(global[0], whole.particles());
  EXPECT_EQ(global[1], whole.bonds());
  EXPECT_EQ(global[2], whole.particles() * (whole.particles() - 1) / 2);
  EXPECT_EQ(global[3], whole.bonds() * (whole.bonds() - 1) / 2);
}

class DistributedSetup : public ::testing::TestWithParam<const char*> {};

TEST_P(DistributedSetup, SameParticlesIdsAndBondsAsOneRank) {
  bdem::BdemScene scene = test::shipped_scene(GetParam());
  for (auto& body : scene.bodies) body.angular_velocity = {0.5, -1.0, 2.0};  // velocities from the centroid too
  const bdem::Model whole = bdem::model_from_scene(scene);
  ASSERT_GT(whole.bonds(), 0);
  bdem::Model part = bdem::model_from_scene(scene, MPI_COMM_WORLD);
  expect_rows_of(part, whole, MPI_COMM_WORLD);
  // Placed on their owners: still every row once; bonds sit with their first particle, partners' owners known.
  bdem::place(part, scene, MPI_COMM_WORLD);
  expect_rows_of(part, whole, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (std::size_t k = 0; k < part.bond_rows(); ++k) {
    EXPECT_TRUE(std::binary_search(part.id.begin(), part.id.end(), part.pair[k][0]));
    const bool here = std::binary_search(part.id.begin(), part.id.end(), part.pair[k][1]);
    EXPECT_EQ(part.partner_owner[k] == rank, here) << "bond " << part.bond_id[k];
  }
}

INSTANTIATE_TEST_SUITE_P(ShippedScenes, DistributedSetup,
                         ::testing::Values("drop_small.json", "plate_drop_small.json", "cloth_tear_small.json",
                                           "chocolate_drop_small.json", "three_point_bending_small.json"));

// Several bodies: ids and bond ids run body after body, as one rank numbers them; an unbonded body has no bonds.
TEST(DistributedSetup, SeveralBodiesNumberedBodyAfterBody) {
  bdem::BdemScene scene = test::shipped_scene("drop_small.json");
  const Body first = scene.bodies[0];
  for (int k = 1; k <= 2; ++k) {
    Body b = first;
    b.generator.center.x() += 0.5 * k;
    b.bonded = k == 1;
    scene.bodies.push_back(b);
  }
  const bdem::Model whole = bdem::model_from_scene(scene);
  bdem::Model part = bdem::model_from_scene(scene, MPI_COMM_WORLD);
  expect_rows_of(part, whole, MPI_COMM_WORLD);
  EXPECT_EQ(whole.bonds(), 2 * bdem::model_from_scene(test::shipped_scene("drop_small.json")).bonds());
}

}  // namespace

}  // namespace mpi_distributed_setup
