// What the Newton loop asks of the distributed pair set besides the barrier: the CCD step bound (a body moving
// through a plane or into another stops short of contact), IPC's initial barrier stiffness from a given gradient,
// and the lagged friction (derivatives against central differences, the same on this run's ranks as on one).
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscvec.h>

#include "../support/ipc_contact_support.hpp"
#include "percussion/methods/ipc/contact_friction.hpp"
#include "percussion/methods/ipc/contact_step_bound.hpp"
#include "percussion/methods/ipc/contact_stiffness.hpp"

namespace mpi_ipc_contact_step {

namespace {

using namespace ipc_contact_test;

// Every vertex moves by the same translation.
std::vector<double> uniform_step(const geometry::PlexMesh& mesh, Eigen::Vector3d t) {
  std::vector<double> s(mesh.vertex_coordinates.size());
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = t[static_cast<int>(i % mesh.dim)];
  return s;
}

std::vector<double> along(std::span<const double> x, std::span<const double> step, double alpha) {
  std::vector<double> y(x.begin(), x.end());
  for (std::size_t i = 0; i < y.size(); ++i) y[i] += alpha * step[i];
  return y;
}

TEST(IpcContactStep, ABodyMovingThroughThePlaneStopsShortOfIt) {
  const double gap = 0.01;
  const Scene s = disk_box_plane(gap, 0.03);
  Built b = build(MPI_COMM_WORLD, s);
  // Everything moves down 3 gaps: the box's bottom would cross the plane at α = 1/3.
  const std::vector<double> step = uniform_step(b.mesh, Eigen::Vector3d(0, -3 * gap, 0));
  b.set.build(MPI_COMM_WORLD, b.surface, b.x, step, {}, s.options);
  geometry::CcdOptions ccd;
  ccd.min_distance = 0.1 * gap;
  const double alpha = ipc::max_step(b.set, step, ccd);
  EXPECT_NEAR(alpha, (gap - 0.1 * gap) / (3 * gap), 1e-12);
  b.set.update_positions(along(b.x, step, alpha));
  EXPECT_NEAR(b.set.min_distance(), 0.1 * gap, 1e-12);
  EXPECT_TRUE(std::isfinite(b.set.energy(1.0)));
  b.set.update_positions(along(b.x, step, 1.0));
  EXPECT_LT(b.set.min_distance(), 0);  // the full step would have crossed
}

TEST(IpcContactStep, BoxesClosingTheirGapStopBeforeTouching) {
  const double gap = 0.02;
  const Scene s = two_boxes(gap, 0.05);
  Built b = build(MPI_COMM_WORLD, s);
  // The upper box (body 1) comes down 2 gaps: its faces would meet the lower box's at α = 1/2.
  std::vector<double> step(b.x.size(), 0.0);
  for (std::size_t v = 0; v < b.mesh.vertex_body.size(); ++v)
    if (b.mesh.vertex_body[v] == 1) step[3 * v + 2] = -2 * gap;
  b.set.build(MPI_COMM_WORLD, b.surface, b.x, step, {}, s.options);
  geometry::CcdOptions ccd;
  ccd.min_distance = 0.2 * gap;
  const double alpha = ipc::max_step(b.set, step, ccd);
  EXPECT_LE(alpha, 0.4 + 1e-9);  // separation 0.2 gap reached at α = 0.4
  EXPECT_GT(alpha, 0.35);
  b.set.update_positions(along(b.x, step, alpha));
  EXPECT_GT(b.set.min_distance(), 0.2 * gap - 1e-9);
  // The same bound on one rank.
  if (rank_of(MPI_COMM_WORLD) == 0) {
    Built one = build(MPI_COMM_SELF, s);
    std::vector<double> step1(one.x.size(), 0.0);
    for (std::size_t v = 0; v < one.mesh.vertex_body.size(); ++v)
      if (one.mesh.vertex_body[v] == 1) step1[3 * v + 2] = -2 * gap;
    one.set.build(MPI_COMM_SELF, one.surface, one.x, step1, {}, s.options);
    EXPECT_EQ(ipc::max_step(one.set, step1, ccd), alpha);
  }
}

TEST(IpcContactStep, InitialStiffnessFromTheAssembledBarrierGradient) {
  const Scene s = two_boxes(0.02, 0.05);
  const Built b = build(MPI_COMM_WORLD, s);
  const int d = b.mesh.dim;
  Vec e = nullptr;
  ASSERT_EQ(VecCreateMPI(MPI_COMM_WORLD, PETSC_DECIDE, static_cast<PetscInt>(b.mesh.global_vertex_count * d), &e), 0);
  for (PetscInt v = 0; v < b.mesh.owned_vertex_count; ++v)
    for (int c = 0; c < d; ++c) {
      const std::int64_t gid = b.mesh.vertex_global_id[std::size_t(v)];
      VecSetValue(e, static_cast<PetscInt>(gid * d + c), -direction(gid, c), INSERT_VALUES);
    }
  VecAssemblyBegin(e);
  VecAssemblyEnd(e);
  // The reference from the gathered gradient.
  const DofMap g = gradient(b.set, 1.0);
  double sums[2] = {0, 0};
  for (const auto& [k, value] : g) {
    sums[0] -= value * direction(k.first, k.second);
    sums[1] += value * value;
  }
  MPI_Bcast(sums, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  ASSERT_GT(sums[1], 0);
  const double kappa_min = std::abs(sums[0] / sums[1]) / 10;
  const ipc::BarrierStiffness k = ipc::initial_contact_stiffness(b.set, e, kappa_min);
  EXPECT_NEAR(k.kappa, ipc::initial_barrier_stiffness(sums[0], sums[1], kappa_min).kappa, 1e-12 * k.kappa);
  EXPECT_GT(k.kappa, kappa_min);  // not clamped: the check reaches the ratio

  // The Hessian added into an MPIAIJ matrix on the same dofs: H (−e) = H v, as the gathered blocks give it.
  Mat hessian = nullptr;
  const PetscInt n = static_cast<PetscInt>(b.mesh.global_vertex_count * d);
  ASSERT_EQ(MatCreateAIJ(MPI_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, n, n, 30, nullptr, 30, nullptr, &hessian), 0);
  MatSetOption(hessian, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE);
  ASSERT_EQ(b.set.add_hessian(1.0, false, hessian), 0);
  MatAssemblyBegin(hessian, MAT_FINAL_ASSEMBLY);
  MatAssemblyEnd(hessian, MAT_FINAL_ASSEMBLY);
  Vec hv = nullptr;
  VecDuplicate(e, &hv);
  VecScale(e, -1.0);
  MatMult(hessian, e, hv);
  const DofMap expected = hessian_times_direction(b.set, 1.0, false);
  DofMap local;
  PetscInt lo = 0, hi = 0;
  VecGetOwnershipRange(hv, &lo, &hi);
  const PetscScalar* values = nullptr;
  VecGetArrayRead(hv, &values);
  for (PetscInt i = lo; i < hi; ++i)
    if (values[i - lo] != 0.0) local[{i / d, static_cast<int>(i % d)}] = values[i - lo];
  VecRestoreArrayRead(hv, &values);
  const DofMap assembled = gather(MPI_COMM_WORLD, local);
  if (rank_of(MPI_COMM_WORLD) == 0) {
    EXPECT_GT(max_abs(expected), 0);
    EXPECT_LE(max_difference(assembled, expected), 1e-12 * max_abs(expected));
  }
  VecDestroy(&hv);
  MatDestroy(&hessian);
  VecDestroy(&e);
}

TEST(IpcContactStep, LaggedFrictionDerivativesAndRankCounts) {
  const double mu = 0.4, eta = 1e-4, kappa = 2.0;
  for (const Scene& base : {two_boxes(0.02, 0.05), disk_box_plane(0.01, 0.03)}) {
    Built b = build(MPI_COMM_WORLD, base);
    ipc::FrictionSet friction;
    friction.freeze(b.set, kappa, mu, eta);
    const std::vector<double> v = per_vertex(b.mesh, direction), w = per_vertex(b.mesh, jitter);
    // A sliding state: every vertex moved by a few η, then differences along v.
    std::vector<double> x(b.x);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += 3 * eta * w[i];
    const double h = 1e-4 * eta;
    friction.update_positions(along(x, v, h));
    const double e_plus = friction.energy();
    DofMap g_plus, g_minus, g, hv;
    auto collect = [&](DofMap& into) {
      DofMap local;
      friction.for_each_gradient([&](int n, const std::int64_t* gid, const PetscInt*, const double* values) {
        for (int k = 0; k < n * b.mesh.dim; ++k) local[{gid[k / b.mesh.dim], k % b.mesh.dim}] += values[k];
      });
      into = gather(MPI_COMM_WORLD, local);
    };
    collect(g_plus);
    friction.update_positions(along(x, v, -h));
    const double e_minus = friction.energy();
    collect(g_minus);
    friction.update_positions(x);
    const double energy = friction.energy();
    collect(g);
    {
      DofMap local;
      const int d = b.mesh.dim;
      friction.for_each_hessian([&](int n, const std::int64_t* gid, const PetscInt*, const double* m) {
        for (int i = 0; i < n * d; ++i)
          for (int j = 0; j < n * d; ++j) local[{gid[i / d], i % d}] += m[i * n * d + j] * direction(gid[j / d], j % d);
      });
      hv = gather(MPI_COMM_WORLD, local);
    }
    if (rank_of(MPI_COMM_WORLD) != 0) continue;
    EXPECT_GT(energy, 0);
    double gv = 0;
    for (const auto& [k, value] : g) gv += value * direction(k.first, k.second);
    EXPECT_NEAR(gv, (e_plus - e_minus) / (2 * h), 1e-6 * std::abs(gv) + 1e-12 * energy / eta);
    DofMap fd;
    for (const auto& [k, value] : g_plus) fd[k] += value / (2 * h);
    for (const auto& [k, value] : g_minus) fd[k] -= value / (2 * h);
    EXPECT_GT(max_abs(hv), 0);
    EXPECT_LE(max_difference(hv, fd), 1e-5 * max_abs(hv));
    // One rank: the same pairs frozen, the same energy bits and gradient.
    Built one = build(MPI_COMM_SELF, base);
    ipc::FrictionSet f1;
    f1.freeze(one.set, kappa, mu, eta);
    std::vector<double> x1(one.x);
    const std::vector<double> w1 = per_vertex(one.mesh, jitter);
    for (std::size_t i = 0; i < x1.size(); ++i) x1[i] += 3 * eta * w1[i];
    f1.update_positions(x1);
    EXPECT_EQ(f1.energy(), energy);
  }
}

}  // namespace

}  // namespace mpi_ipc_contact_step
