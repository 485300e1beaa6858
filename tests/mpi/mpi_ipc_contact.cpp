// The distributed IPC pair set on generated meshes near contact (two boxes, a disk on a box on a plane, a folded
// strip touching itself): the pairs equal a brute-force all-pairs reference, the derivatives match finite
// differences, and this run's ranks give what one rank gives.
#include <gtest/gtest.h>
#include <mpi.h>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <set>

#include "../support/ipc_contact_support.hpp"
#include "percussion/geometry/distance/edge_edge_mollifier.hpp"

namespace mpi_ipc_contact {

namespace {

using namespace ipc_contact_test;
using percussion::ipc::ContactPair;
using percussion::ipc::ContactSet;
using percussion::ipc::ContactSurface;
using percussion::ipc::PairType;

constexpr double kKappa = 3.7;

std::vector<Scene> scenes() { return {two_boxes(0.02, 0.05), disk_box_plane(0.01, 0.03), folded_strip(0.02, 0.03)}; }

// Every admissible primitive pair of a one-rank surface, evaluated without a broad phase.
struct Reference {
  double energy = 0, min_distance = 1e300;
  int active = 0;
};

Reference brute_force(const Built& b, const Scene& s) {
  const ContactSurface& f = b.surface;
  const int d = f.dim;
  std::vector<double> x;
  for (PetscInt m : f.vertex_mesh_index)
    for (int c = 0; c < d; ++c) x.push_back(b.x[static_cast<std::size_t>(m) * d + c]);
  std::vector<ContactPair> pairs;
  auto shares = [](std::initializer_list<std::int32_t> a, std::initializer_list<std::int32_t> c) {
    for (auto u : a)
      for (auto v : c)
        if (u == v) return true;
    return false;
  };
  auto other_body = [&](std::int32_t u, std::int32_t v) {
    return s.options.self_contact || f.vertex_body[std::size_t(u)] != f.vertex_body[std::size_t(v)];
  };
  auto rest = [&](std::int32_t i) { return Eigen::Map<const Eigen::Vector3d>(&f.vertex_rest[3 * std::size_t(i)]); };
  const auto nv = static_cast<std::int32_t>(f.vertex_count());
  for (std::int32_t v = 0; v < nv; ++v) {
    const double a = f.vertex_area[std::size_t(v)];
    if (d == 2)
      for (const auto& e : f.edges)
        if (!shares({v}, {e[0], e[1]}) && other_body(v, e[0]))
          pairs.push_back({PairType::PointEdge2D, {v, e[0], e[1], -1}, a / 2, 0});
    if (d == 3)
      for (const auto& t : f.triangles)
        if (!shares({v}, {t[0], t[1], t[2]}) && other_body(v, t[0]))
          pairs.push_back({PairType::PointTriangle, {v, t[0], t[1], t[2]}, a / 4, 0});
    for (std::size_t h = 0; h < s.options.planes.size(); ++h)
      pairs.push_back({PairType::PointPlane, {v, static_cast<std::int32_t>(h), -1, -1}, a, 0});
  }
  if (d == 3)
    for (std::size_t i = 0; i < f.edges.size(); ++i)
      for (std::size_t j = i + 1; j < f.edges.size(); ++j) {
        const auto &p = f.edges[i], &q = f.edges[j];
        if (shares({p[0], p[1]}, {q[0], q[1]}) || !other_body(p[0], q[0])) continue;
        pairs.push_back({PairType::EdgeEdge, {p[0], p[1], q[0], q[1]}, (f.edge_area[i] + f.edge_area[j]) / 4,
                         geometry::edge_edge_mollifier_threshold(rest(p[0]), rest(p[1]), rest(q[0]), rest(q[1]))});
      }
  Reference r;
  const double dhat2 = s.options.dhat * s.options.dhat;
  for (const ContactPair& p : pairs) {
    const double d2 = ipc::pair_distance2(p, d, x, s.options.planes);
    r.energy += ipc::pair_barrier(p, d, x, s.options.planes, dhat2, kKappa).value;
    r.active += d2 < dhat2;
    r.min_distance = std::min(r.min_distance, std::sqrt(d2));
  }
  return r;
}

int active_pairs(const ContactSet& set) {
  int n = 0;
  const double dhat2 = set.options().dhat * set.options().dhat;
  for (const ContactPair& p : set.pairs())
    n += ipc::pair_distance2(p, set.dim(), set.vertices().positions(), set.options().planes) < dhat2;
  MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_INT, MPI_SUM, set.comm());
  return n;
}

TEST(IpcContact, AreasCoverTheBoundaryAndEveryPrimitiveHasOneOwner) {
  for (const Scene& s : scenes()) {
    const Built b = build(MPI_COMM_WORLD, s);
    const ContactSurface& f = b.surface;
    double measure = 0, vertex_sum = 0, edge_sum = 0;
    for (const auto& e : f.edges)
      if (f.dim == 2) measure += (Eigen::Map<const Eigen::Vector3d>(&f.vertex_rest[3 * std::size_t(e[1])]) -
                                  Eigen::Map<const Eigen::Vector3d>(&f.vertex_rest[3 * std::size_t(e[0])])).norm();
    for (const auto& t : f.triangles) {
      auto p = [&](int k) { return Eigen::Map<const Eigen::Vector3d>(&f.vertex_rest[3 * std::size_t(t[k])]); };
      measure += (p(1) - p(0)).cross(p(2) - p(0)).norm() / 2;
    }
    std::vector<std::int64_t> owned;
    for (std::size_t i = 0; i < f.vertex_count(); ++i)
      if (f.vertex_owned[i]) {
        vertex_sum += f.vertex_area[i];
        owned.push_back(f.vertex_global_id[i]);
      }
    for (std::size_t e = 0; e < f.edges.size(); ++e)
      if (f.edge_owned[e]) edge_sum += f.edge_area[e];
    double sums[3] = {measure, vertex_sum, edge_sum};
    MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_GT(sums[0], f.dim == 2 ? 4.5 : 11.9);
    EXPECT_NEAR(sums[1], sums[0], 1e-12 * sums[0]);
    if (f.dim == 3) {
      EXPECT_NEAR(sums[2], sums[0], 1e-12 * sums[0]);
    }
    // Owned vertices over all ranks: each surface vertex exactly once.
    long counts[2] = {static_cast<long>(owned.size()), 0};
    std::set<std::int64_t> all(f.vertex_global_id.begin(), f.vertex_global_id.end());
    MPI_Allreduce(MPI_IN_PLACE, counts, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    const Built one = rank_of(MPI_COMM_WORLD) == 0 ? build(MPI_COMM_SELF, s) : Built{};
    if (rank_of(MPI_COMM_WORLD) == 0) {
      EXPECT_EQ(counts[0], static_cast<long>(one.surface.vertex_count()));
    }
  }
}

TEST(IpcContact, PairSetEqualsBruteForceAndOneRank) {
  for (const Scene& s : scenes()) {
    const Built b = build(MPI_COMM_WORLD, s);
    const double energy = b.set.energy(kKappa), min_distance = b.set.min_distance();
    const int active = active_pairs(b.set);
    const DofMap g = gradient(b.set, kKappa);
    // On several ranks the pairs reach across them: some stencil vertices are copies read from another rank.
    long copies = 0;
    for (std::size_t i = 0; i < b.set.vertices().size(); ++i)
      copies += b.set.vertices().entry(i).rank != rank_of(MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &copies, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    int ranks = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    EXPECT_EQ(copies > 0, ranks > 1);
    if (rank_of(MPI_COMM_WORLD) != 0) continue;
    const Built one = build(MPI_COMM_SELF, s);
    const Reference ref = brute_force(one, s);
    EXPECT_GT(ref.active, 10);
    EXPECT_GT(ref.energy, 0);
    EXPECT_NEAR(energy, ref.energy, 1e-12 * ref.energy);
    EXPECT_EQ(active, ref.active);
    EXPECT_NEAR(min_distance, ref.min_distance, 1e-12);
    // This run's ranks against one rank: the energy bit for bit (exact sum), the gradient by global id.
    EXPECT_EQ(energy, one.set.energy(kKappa));
    EXPECT_EQ(min_distance, one.set.min_distance());
    const DofMap g1 = gradient(one.set, kKappa);
    EXPECT_GT(max_abs(g1), 0);
    EXPECT_LE(max_difference(g, g1), 1e-12 * max_abs(g1));
  }
}

TEST(IpcContact, GradientAndHessianMatchCentralDifferencesOfTheEnergy) {
  for (const Scene& s : scenes()) {
    Built b = build(MPI_COMM_WORLD, s);
    // Off the aligned configuration: exactly parallel edges and points exactly above vertices sit where the
    // Hessian jumps (closest-point regions switch), which no difference quotient can follow.
    const std::vector<double> shake = per_vertex(b.mesh, jitter);
    for (std::size_t i = 0; i < b.x.size(); ++i) b.x[i] += 0.1 * s.options.dhat * shake[i];
    const std::vector<double> v = per_vertex(b.mesh, direction);
    const double h = 1e-5 * s.options.dhat;
    auto moved = [&](double t) {
      std::vector<double> y(b.x);
      for (std::size_t i = 0; i < y.size(); ++i) y[i] += t * v[i];
      return y;
    };
    // Candidates over the whole segment x − hv → x + hv.
    std::vector<double> step(v);
    for (double& c : step) c *= 2 * h;
    b.set.build(MPI_COMM_WORLD, b.surface, moved(-h), step, {}, s.options);
    b.set.update_positions(moved(h));
    const double e_plus = b.set.energy(kKappa);
    const DofMap g_plus = gradient(b.set, kKappa);
    b.set.update_positions(moved(-h));
    const double e_minus = b.set.energy(kKappa);
    const DofMap g_minus = gradient(b.set, kKappa);
    b.set.update_positions(b.x);
    const DofMap g = gradient(b.set, kKappa);
    const DofMap hv = hessian_times_direction(b.set, kKappa, false);
    // Projected blocks are PSD (smallest eigenvalue ≥ −1e-12 of the largest) and some needed projecting.
    int projected = 0;
    b.set.for_each_hessian(kKappa, true, [&](int n, const std::int64_t*, const PetscInt*, const double* m) {
      const int k = n * b.set.dim();
      const Eigen::MatrixXd block = Eigen::Map<const Eigen::MatrixXd>(m, k, k);
      const Eigen::VectorXd lambda = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(block).eigenvalues();
      EXPECT_GE(lambda.minCoeff(), -1e-12 * std::max(1.0, lambda.cwiseAbs().maxCoeff()));
    });
    b.set.for_each_hessian(kKappa, false, [&](int n, const std::int64_t*, const PetscInt*, const double* m) {
      const int k = n * b.set.dim();
      const Eigen::MatrixXd block = Eigen::Map<const Eigen::MatrixXd>(m, k, k);
      projected += Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(block).eigenvalues().minCoeff() < 0;
    });
    MPI_Allreduce(MPI_IN_PLACE, &projected, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_GT(projected, 0);
    if (rank_of(MPI_COMM_WORLD) != 0) continue;
    double gv = 0;
    for (const auto& [k, value] : g) gv += value * direction(k.first, k.second);
    EXPECT_NEAR(gv, (e_plus - e_minus) / (2 * h), 1e-6 * std::abs(gv));
    DofMap fd;
    for (const auto& [k, value] : g_plus) fd[k] += value / (2 * h);
    for (const auto& [k, value] : g_minus) fd[k] -= value / (2 * h);
    EXPECT_GT(max_abs(hv), 0);
    EXPECT_LE(max_difference(hv, fd), 1e-5 * max_abs(hv)) << "dim " << b.set.dim();
  }
}

TEST(IpcContact, TwoCopiesOfASceneHaveTwiceItsEnergy) {
  Scene pair = two_boxes(0.02, 0.05), twice = pair;
  const Scene far = two_boxes(0.02, 0.05, Eigen::Vector3d(5, 0, 0));
  twice.bodies.push_back(far.bodies[0]);
  twice.bodies.push_back(far.bodies[1]);
  twice.bodies[2].body_id = 2;
  twice.bodies[3].body_id = 3;
  const double one = build(MPI_COMM_WORLD, pair).set.energy(kKappa);
  const Built two = build(MPI_COMM_WORLD, twice);
  EXPECT_GT(one, 0);
  EXPECT_NEAR(two.set.energy(kKappa), 2 * one, 1e-12 * one);
  EXPECT_EQ(two.set.min_distance(), build(MPI_COMM_WORLD, pair).set.min_distance());
}

}  // namespace

}  // namespace mpi_ipc_contact
