// Patch test: a small square (2D) or cube (3D) of P1 or P2 elements with irregular interior vertices, an affine
// displacement imposed on the boundary; minimising the assembled elastic energy (one Newton step for linear
// elasticity, a few for Neo-Hookean) must reproduce the affine field at the interior nodes and a uniform stress.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <vector>

#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>

#include "percussion/physics/fem/elastic_element.hpp"
#include "percussion/physics/fem/linear_elastic.hpp"
#include "percussion/physics/fem/neo_hookean.hpp"

namespace test_fem_patch {

namespace fem = percussion::fem;

namespace {

template <int D, int K>
struct Mesh {
  std::vector<Eigen::Matrix<double, D, 1>> nodes;
  std::vector<std::array<int, fem::Lagrange<D, K>::kNodes>> cells;  // vertices first, as the element expects
};

// Moves interior vertices of the unit box by up to `amp` cells, deterministically, so no element is a copy.
template <int D>
Eigen::Matrix<double, D, 1> grid_point(const std::array<int, 3>& ijk, int n, double amp) {
  Eigen::Matrix<double, D, 1> p;
  bool interior = true;
  for (int d = 0; d < D; ++d) {
    p(d) = double(ijk[d]) / n;
    interior = interior && ijk[d] > 0 && ijk[d] < n;
  }
  if (interior)
    for (int d = 0; d < D; ++d) p(d) += amp / n * std::sin(1.7 * ijk[0] + 2.9 * ijk[1] + 4.3 * ijk[2] + 1.3 * d);
  return p;
}

// n^D cells of P1 simplices: two triangles per square, six (Kuhn) tetrahedra per cube, all positively oriented.
template <int D>
Mesh<D, 1> box_mesh(int n) {
  Mesh<D, 1> m;
  const int nv = n + 1;
  auto id = [&](const std::array<int, 3>& c) { return c[0] + nv * (c[1] + nv * c[2]); };
  for (int k = 0; k < (D == 3 ? nv : 1); ++k)
    for (int j = 0; j < nv; ++j)
      for (int i = 0; i < nv; ++i) m.nodes.push_back(grid_point<D>({i, j, k}, n, 0.12));
  std::array<int, D> perm;
  for (int d = 0; d < D; ++d) perm[d] = d;
  for (int k = 0; k < (D == 3 ? n : 1); ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        std::array<int, D> p = perm;
        do {  // the Kuhn simplex of each axis order: walk from the low corner to the high one
          std::array<int, 3> c{i, j, k};
          std::array<int, D + 1> cell;
          cell[0] = id(c);
          for (int s = 0; s < D; ++s) {
            ++c[p[s]];
            cell[s + 1] = id(c);
          }
          fem::Vertices<D> X;
          for (int a = 0; a <= D; ++a) X.col(a) = m.nodes[cell[a]];
          if (fem::signed_volume<D>(X) < 0.0) std::swap(cell[0], cell[1]);
          m.cells.push_back(cell);
        } while (std::next_permutation(p.begin(), p.end()));
      }
  return m;
}

// Adds one node per edge at its midpoint (straight edges, affine geometry).
template <int D>
Mesh<D, 2> elevate(const Mesh<D, 1>& p1) {
  Mesh<D, 2> m;
  m.nodes = p1.nodes;
  std::map<std::pair<int, int>, int> edge_node;
  constexpr auto edges = fem::simplex_edges<D>();
  for (const auto& c : p1.cells) {
    std::array<int, fem::Lagrange<D, 2>::kNodes> cell;
    std::copy(c.begin(), c.end(), cell.begin());
    for (int e = 0; e < fem::kSimplexEdges<D>; ++e) {
      const int a = c[edges[e][0]], b = c[edges[e][1]];
      const auto key = std::minmax(a, b);
      auto [it, added] = edge_node.try_emplace(key, static_cast<int>(m.nodes.size()));
      if (added) m.nodes.push_back(0.5 * (m.nodes[a] + m.nodes[b]));
      cell[D + 1 + e] = it->second;
    }
    m.cells.push_back(cell);
  }
  return m;
}

struct PatchResult {
  double displacement_error = 0.0;  // max over interior nodes of |u − (A x + b)|
  double stress_error = 0.0;        // max over quadrature points of |P − P(I + A)| / |P(I + A)|
  int newton_steps = 0;
  int interior_nodes = 0;
};

template <int D, int K, class Material>
PatchResult patch_test(const Mesh<D, K>& mesh, const Material& material, const fem::Tensor2<D>& A) {
  using Field = fem::NodalField<D, K>;
  constexpr int N = fem::Lagrange<D, K>::kNodes;
  const int nn = static_cast<int>(mesh.nodes.size()), ndof = D * nn;
  const Eigen::Matrix<double, D, 1> b = Eigen::Matrix<double, D, 1>::LinSpaced(0.01, -0.02);
  std::vector<fem::ElementRest<D, K>> rest;
  for (const auto& c : mesh.cells) {
    fem::Vertices<D> X;
    for (int a = 0; a <= D; ++a) X.col(a) = mesh.nodes[c[a]];
    const auto e = fem::element_rest<D, K>(X);
    EXPECT_TRUE(e.has_value());
    rest.push_back(*e);
  }
  // Free dofs are those of interior nodes; boundary nodes carry the affine field, interior ones start at 0.
  PatchResult r;
  Eigen::VectorXd u = Eigen::VectorXd::Zero(ndof);
  std::vector<int> free_index(ndof, -1);
  int nfree = 0;
  for (int i = 0; i < nn; ++i) {
    const auto& x = mesh.nodes[i];
    const bool boundary = (x.array() < 1e-12).any() || (x.array() > 1.0 - 1e-12).any();
    if (boundary) {
      u.template segment<D>(D * i) = A * x + b;
    } else {
      ++r.interior_nodes;
      for (int d = 0; d < D; ++d) free_index[D * i + d] = nfree++;
    }
  }
  auto gather = [&](const Eigen::VectorXd& v, int cell) {
    Field f;
    for (int a = 0; a < N; ++a) f.col(a) = v.template segment<D>(D * mesh.cells[cell][a]);
    return f;
  };
  auto energy = [&](const Eigen::VectorXd& v) {
    double s = 0.0;
    for (std::size_t c = 0; c < rest.size(); ++c) s += fem::elastic_energy(rest[c], gather(v, int(c)), material);
    return s;
  };
  for (r.newton_steps = 0; r.newton_steps < 30; ++r.newton_steps) {
    Eigen::VectorXd g = Eigen::VectorXd::Zero(nfree);
    std::vector<Eigen::Triplet<double>> triplets;
    for (std::size_t c = 0; c < rest.size(); ++c) {
      const Field uc = gather(u, int(c));
      const auto ge = fem::elastic_gradient(rest[c], uc, material);
      const auto he = fem::elastic_hessian(rest[c], uc, material);
      for (int p = 0; p < D * N; ++p) {
        const int fp = free_index[D * mesh.cells[c][p / D] + p % D];
        if (fp < 0) continue;
        g(fp) += ge(p);
        for (int q = 0; q < D * N; ++q) {
          const int fq = free_index[D * mesh.cells[c][q / D] + q % D];
          if (fq >= 0) triplets.emplace_back(fp, fq, he(p, q));
        }
      }
    }
    Eigen::SparseMatrix<double> H(nfree, nfree);
    H.setFromTriplets(triplets.begin(), triplets.end());
    Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> solver(H);
    EXPECT_EQ(solver.info(), Eigen::Success);
    const Eigen::VectorXd step = solver.solve(-g);
    if (step.lpNorm<Eigen::Infinity>() < 1e-15) break;
    // Backtrack only to keep Neo-Hookean's energy finite and decreasing on the first, large steps.
    const double e0 = energy(u);
    for (double alpha = 1.0; alpha > 1e-4; alpha *= 0.5) {
      Eigen::VectorXd trial = u;
      for (int i = 0; i < ndof; ++i)
        if (free_index[i] >= 0) trial(i) += alpha * step(free_index[i]);
      const double e1 = energy(trial);
      if (std::isfinite(e1) && e1 <= e0 + 1e-12 * std::abs(e0)) {
        u = trial;
        break;
      }
    }
  }
  for (int i = 0; i < nn; ++i)
    if (free_index[D * i] >= 0)
      r.displacement_error =
          std::max(r.displacement_error, (u.template segment<D>(D * i) - (A * mesh.nodes[i] + b)).cwiseAbs().maxCoeff());
  const fem::Tensor2<D> P = material.template stress<D>(fem::Tensor2<D>::Identity() + A);
  for (std::size_t c = 0; c < rest.size(); ++c)
    for (int q = 0; q < fem::ElementRest<D, K>::kPoints; ++q) {
      const fem::Tensor2<D> Pq = material.template stress<D>(fem::deformation_gradient(rest[c], gather(u, int(c)), q));
      r.stress_error = std::max(r.stress_error, (Pq - P).norm() / P.norm());
    }
  return r;
}

template <int D>
fem::Tensor2<D> affine_gradient() {
  fem::Tensor2<D> A;
  if constexpr (D == 2) {
    A << 0.08, 0.03, -0.02, 0.05;
  } else {
    A << 0.08, 0.03, -0.01, -0.02, 0.05, 0.04, 0.02, -0.03, -0.06;
  }
  return A;
}

template <int D, int K>
void check_patch(const Mesh<D, K>& mesh) {
  const fem::Lame lame = fem::lame_from_young_poisson(1.0, 0.3);
  const fem::Tensor2<D> A = affine_gradient<D>();
  const PatchResult le = patch_test<D, K>(mesh, fem::LinearElastic{lame}, A);
  EXPECT_GT(le.interior_nodes, 0);
  EXPECT_LE(le.newton_steps, 2) << "a quadratic energy takes one step";
  EXPECT_LT(le.displacement_error, 1e-12) << "linear elastic, D " << D << " P" << K;
  EXPECT_LT(le.stress_error, 1e-12) << "linear elastic, D " << D << " P" << K;
  const PatchResult nh = patch_test<D, K>(mesh, fem::NeoHookean{lame}, A);
  EXPECT_LT(nh.newton_steps, 10);
  EXPECT_LT(nh.displacement_error, 1e-12) << "Neo-Hookean, D " << D << " P" << K;
  EXPECT_LT(nh.stress_error, 1e-12) << "Neo-Hookean, D " << D << " P" << K;
}

}  // namespace

TEST(FemPatch, SquareOfTrianglesReproducesAnAffineField) {
  const Mesh<2, 1> p1 = box_mesh<2>(3);
  ASSERT_EQ(p1.cells.size(), 18u);
  check_patch<2, 1>(p1);
  check_patch<2, 2>(elevate<2>(p1));
}

TEST(FemPatch, CubeOfTetrahedraReproducesAnAffineField) {
  const Mesh<3, 1> p1 = box_mesh<3>(3);
  ASSERT_EQ(p1.cells.size(), 162u);
  check_patch<3, 1>(p1);
  check_patch<3, 2>(elevate<3>(p1));
}

}  // namespace test_fem_patch
