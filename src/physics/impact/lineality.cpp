// Implicit equality constraints by one linear program (GLPK), and the M⁻¹-orthonormal basis of their span
// (notes 003 Alg. E).
#include "percussion/physics/impact/lineality.hpp"

#include <glpk.h>

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>

namespace percussion::impact {

namespace {

using DenseMat = Eigen::MatrixXd;

struct ProblemDeleter {
  void operator()(glp_prob* p) const { glp_delete_prob(p); }
};

// The witness proves there is nothing to find when every constraint has a clearly positive slope along it.
bool witness_holds(const ImpactSystem& s, std::span<const double> w) {
  if (w.size() != static_cast<std::size_t>(s.dofs())) return false;
  const double margin = 1e-12 * std::sqrt(s.energy_norm_squared(w.data()));
  for (int c = 0; c < s.constraints(); ++c) {
    if (!(s.slope(c, w.data()) > margin)) return false;
  }
  return true;
}

// Smallest union-find root of body k.
int root(std::vector<int>& parent, int k) {
  while (parent[k] != k) k = parent[k] = parent[parent[k]];
  return k;
}

// M⁻¹-orthonormalises the columns of E (W = M⁻¹E): E ← E U Λ^{-1/2} over the eigenpairs of EᵀW above the rank
// threshold, and the same on B (E = N_I B). Run twice: the second pass repairs the round-off the first one
// magnifies by 1/σ_min. Returns the eigenvectors below the threshold: the null space of E.
DenseMat orthonormalise(DenseMat& e, DenseMat& w, DenseMat& b, double rank_tolerance) {
  const DenseMat gram = e.transpose() * w;
  Eigen::SelfAdjointEigenSolver<DenseMat> eig(0.5 * (gram + gram.transpose()));
  const Eigen::VectorXd& mu = eig.eigenvalues();  // ascending
  const double largest = mu.size() > 0 ? mu(mu.size() - 1) : 0.0;
  int first = 0;
  while (first < mu.size() && !(mu(first) > rank_tolerance * rank_tolerance * largest && mu(first) > 0.0)) ++first;
  const int rank = static_cast<int>(mu.size()) - first;
  DenseMat t = eig.eigenvectors().rightCols(rank);
  for (int k = 0; k < rank; ++k) t.col(k) /= std::sqrt(mu(first + k));
  e = e * t;
  w = w * t;
  b = b * t;
  return eig.eigenvectors().leftCols(first);
}

// I = {t_c > ½}, λ = t + u, and w from the duals of the Nλ = 0 rows. True when the numbers certify the answer
// to the tolerance: ‖Nλ‖_{M⁻¹} ≤ kCombination Σλ (I is jammed) and n_cᵀw ≥ ½ off I while |n_cᵀw| ≤ kCombination
// ‖w‖_M on I (nothing else is: wᵀNλ = 0 for every null combination λ ≥ 0).
constexpr double kCombination = 1e-9;

bool read_solution(const ImpactSystem& s, glp_prob* p, const std::vector<int>& dof_of_row, ImplicitEqualities& out) {
  const int m = s.constraints();
  out.constraints.clear();
  std::fill(out.combination.begin(), out.combination.end(), 0.0);
  std::vector<double> r(s.dofs(), 0.0);
  double total = 0.0;
  for (int c = 0; c < m; ++c) {
    if (glp_get_col_prim(p, m + 1 + c) > 0.5) {
      out.constraints.push_back(c);
      out.combination[c] = glp_get_col_prim(p, c + 1) + glp_get_col_prim(p, m + 1 + c);
      s.apply(c, out.combination[c], r.data());
      total += out.combination[c];
    }
  }
  std::fill(out.certificate.begin(), out.certificate.end(), 0.0);
  for (std::size_t row = 1; row < dof_of_row.size(); ++row) {
    out.certificate[dof_of_row[row]] = glp_get_row_dual(p, static_cast<int>(row));
  }
  double sum = 0.0;  // GLPK's sign convention: the slopes off I are ≥ 1 for w or for −w
  for (int c = 0; c < m; ++c) sum += s.slope(c, out.certificate.data());
  if (sum < 0.0) {
    for (double& x : out.certificate) x = -x;
  }
  if (std::sqrt(s.energy_norm_squared(r.data())) > kCombination * total) return false;
  const double norm = std::sqrt(s.energy_norm_squared(out.certificate.data()));
  std::size_t next = 0;
  for (int c = 0; c < m; ++c) {
    const double slope = s.slope(c, out.certificate.data());
    const bool in_i = next < out.constraints.size() && out.constraints[next] == c;
    if (in_i) ++next;
    if (in_i ? std::abs(slope) > kCombination * norm : !(slope >= 0.5)) return false;
  }
  return true;
}

}  // namespace

ImplicitEqualities find_implicit_equalities(const ImpactSystem& s, const LinealityOptions& options) {
  ImplicitEqualities out;
  const int m = s.constraints();
  out.combination.assign(m, 0.0);
  if (!options.witness.empty() && witness_holds(s, options.witness)) {
    out.certificate.assign(options.witness.begin(), options.witness.end());
    return out;
  }
  out.solved_lp = true;
  out.certificate.assign(s.dofs(), 0.0);
  if (m == 0) return out;

  // With λ = t + u (u ≥ 0) the program is N t + N u = 0, 0 ≤ t ≤ 1, u ≥ 0: rows only for the degrees of freedom
  // some gradient touches. Columns: u, then t (the same entries).
  std::vector<int> row_of(s.dofs(), 0);
  std::vector<int> dof_of_row{0};  // GLPK counts from 1
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0.0};
  for (int c = 0; c < m; ++c) {
    for (int end = 0; end < 2; ++end) {
      const int body = end == 0 ? s.end_a(c) : s.end_b(c);
      if (body < 0) continue;
      const std::span<const double> g = s.gradient_block(c, end);
      for (std::size_t i = 0; i < g.size(); ++i) {
        if (g[i] == 0.0) continue;
        const int dof = s.body_offset(body) + static_cast<int>(i);
        if (row_of[dof] == 0) {
          row_of[dof] = static_cast<int>(dof_of_row.size());
          dof_of_row.push_back(dof);
        }
        ia.push_back(row_of[dof]), ja.push_back(c + 1), ar.push_back(g[i]);
        ia.push_back(row_of[dof]), ja.push_back(m + 1 + c), ar.push_back(g[i]);
      }
    }
  }
  const int dof_rows = static_cast<int>(dof_of_row.size()) - 1;

  glp_term_out(GLP_OFF);
  std::unique_ptr<glp_prob, ProblemDeleter> lp(glp_create_prob());
  glp_prob* p = lp.get();
  glp_set_obj_dir(p, GLP_MAX);
  if (dof_rows == 0) return out;  // no constraint touches a degree of freedom (cannot happen: gradients are nonzero)
  glp_add_rows(p, dof_rows);
  for (int r = 1; r <= dof_rows; ++r) glp_set_row_bnds(p, r, GLP_FX, 0.0, 0.0);
  glp_add_cols(p, 2 * m);
  for (int c = 0; c < m; ++c) {
    glp_set_col_bnds(p, c + 1, GLP_LO, 0.0, 0.0);
    glp_set_col_bnds(p, m + 1 + c, GLP_DB, 0.0, 1.0);
    glp_set_obj_coef(p, m + 1 + c, 1.0);
  }
  glp_load_matrix(p, static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());

  // The floating-point simplex from GLPK's advanced initial basis is fast. Its answer is then checked with its own
  // numbers; only if the check fails does the rational simplex finish from that basis (it can be slow: rational
  // LU factors of a large basis).
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_OFF;
  glp_adv_basis(p, 0);
  if (glp_simplex(p, &parm) != 0) glp_std_basis(p);
  if (!options.exact && glp_get_status(p) == GLP_OPT && read_solution(s, p, dof_of_row, out)) return out;
  if (glp_exact(p, &parm) != 0 || glp_get_status(p) != GLP_OPT) {
    throw std::runtime_error("impact: the lineality linear program did not solve (GLPK status " +
                             std::to_string(glp_get_status(p)) + ")");
  }
  out.exact = true;
  read_solution(s, p, dof_of_row, out);
  return out;
}

LinealityBasis lineality_basis(const ImpactSystem& s, const ImplicitEqualities& found, double rank_tolerance) {
  const std::vector<int>& implicit = found.constraints;
  LinealityBasis out;
  out.cluster_of.assign(s.bodies(), -1);
  if (implicit.empty()) return out;
  std::vector<int> parent(s.bodies());
  std::iota(parent.begin(), parent.end(), 0);
  std::vector<char> in_cluster(s.bodies(), 0);
  for (int c : implicit) {
    const int a = s.end_a(c), b = s.end_b(c);
    in_cluster[a] = 1;
    if (b < 0) continue;
    in_cluster[b] = 1;
    const int ra = root(parent, a), rb = root(parent, b);
    parent[std::max(ra, rb)] = std::min(ra, rb);
  }
  for (int k = 0; k < s.bodies(); ++k) {  // ascending k: a cluster is numbered when its lowest body is met
    if (!in_cluster[k]) continue;
    const int r = root(parent, k);
    if (out.cluster_of[r] < 0) {
      out.cluster_of[r] = static_cast<int>(out.clusters.size());
      out.clusters.emplace_back();
    }
    out.cluster_of[k] = out.cluster_of[r];
    LinealityCluster& cl = out.clusters[out.cluster_of[k]];
    cl.bodies.push_back(k);
    cl.dofs += s.body_dofs(k);
  }
  for (int c : implicit) out.clusters[out.cluster_of[s.end_a(c)]].constraints.push_back(c);

  std::vector<int> local(s.bodies(), -1);  // a body's first local degree of freedom in its cluster
  for (LinealityCluster& cl : out.clusters) {
    int at = 0;
    for (int k : cl.bodies) local[k] = at, at += s.body_dofs(k);
    const int p = static_cast<int>(cl.constraints.size());
    DenseMat e = DenseMat::Zero(cl.dofs, p), w = DenseMat::Zero(cl.dofs, p);
    for (int j = 0; j < p; ++j) {
      const int c = cl.constraints[j];
      for (int end = 0; end < 2; ++end) {
        const int body = end == 0 ? s.end_a(c) : s.end_b(c);
        if (body < 0) continue;
        const std::span<const double> g = s.gradient_block(c, end), mg = s.impulse_block(c, end);
        for (std::size_t i = 0; i < g.size(); ++i) {
          e(local[body] + static_cast<int>(i), j) += g[i];
          w(local[body] + static_cast<int>(i), j) += mg[i];
        }
      }
    }
    DenseMat b = DenseMat::Identity(p, p);
    const DenseMat null = orthonormalise(e, w, b, rank_tolerance);
    orthonormalise(e, w, b, rank_tolerance);
    // The program's λ solves a rounded reading of the data; its projection onto the null space of N_I solves the
    // given one to round-off. Kept only if it stays clearly positive (else I came from the rounding: keep λ).
    Eigen::VectorXd given(p);
    for (int j = 0; j < p; ++j) given(j) = found.combination[cl.constraints[j]];
    Eigen::VectorXd refined = null * (null.transpose() * given);
    if (!(refined.minCoeff() > 0.5 * given.minCoeff())) refined = given;
    refined /= refined.minCoeff();
    cl.combination.assign(refined.data(), refined.data() + p);
    cl.rank = static_cast<int>(e.cols());
    cl.basis.resize(static_cast<std::size_t>(cl.rank) * cl.dofs);
    cl.impulses.resize(cl.basis.size());
    for (int k = 0; k < cl.rank; ++k) {
      for (int i = 0; i < cl.dofs; ++i) {
        cl.basis[static_cast<std::size_t>(k) * cl.dofs + i] = e(i, k);
        cl.impulses[static_cast<std::size_t>(k) * cl.dofs + i] = w(i, k);
      }
    }
    cl.coefficients.resize(static_cast<std::size_t>(p) * cl.rank);
    for (int j = 0; j < p; ++j)
      for (int k = 0; k < cl.rank; ++k) cl.coefficients[static_cast<std::size_t>(j) * cl.rank + k] = b(j, k);
  }
  return out;
}

}  // namespace percussion::impact
