// The incremental potential's element loops (elastic_system.hpp): inertia, elasticity, damping and loads, their
// owned gradient rows and the per-element PSD-projected Hessian; energies, momentum and stress for the outputs.
#include <Eigen/Eigenvalues>
#include <cmath>
#include <limits>

#include "percussion/methods/ipc/elastic_system.hpp"
#include "percussion/physics/fem/elastic_element.hpp"
#include "percussion/physics/fem/lame.hpp"
#include "percussion/physics/fem/linear_elastic.hpp"
#include "percussion/physics/fem/mass.hpp"
#include "percussion/physics/fem/neo_hookean.hpp"
#include "percussion/physics/fem/traction.hpp"
#include "percussion/physics/fem/viscous_damping.hpp"
#include "percussion/solvers/petsc_check.hpp"

namespace percussion::ipc {
namespace {

using solvers::petsc_check;

// The nearest PSD matrix V max(Λ, 0) Vᵀ; a PSD input comes back unchanged. (Local until the shared
// physics/psd_projection.hpp lands on main.)
template <int N>
Eigen::Matrix<double, N, N> clamp_negative_eigenvalues(const Eigen::Matrix<double, N, N>& a) {
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, N, N>> eig(a);
  Eigen::Matrix<double, N, N> p = a;
  for (int k = 0; k < N && eig.eigenvalues()[k] < 0.0; ++k)
    p.noalias() -= (eig.eigenvalues()[k] * eig.eigenvectors().col(k)) * eig.eigenvectors().col(k).transpose();
  return p;
}

// Elastic energy, gradient and Hessian of one element with the material's model.
template <int D, int K>
struct ElasticEval {
  double energy = 0;
  fem::ElementVector<D, K> gradient;
  fem::ElementMatrix<D, K> hessian;
};

template <int D, int K, class Model>
void elastic_terms(const fem::ElementRest<D, K>& e, const fem::NodalField<D, K>& u, const Model& m, bool derivatives,
                   ElasticEval<D, K>& out) {
  out.energy = fem::elastic_energy(e, u, m);
  if (derivatives) {
    out.gradient = fem::elastic_gradient(e, u, m);
    out.hessian = fem::elastic_hessian(e, u, m);
  }
}

template <int D, int K>
ElasticEval<D, K> elastic(const fem::ElementRest<D, K>& e, const fem::NodalField<D, K>& u, const ElasticMaterial& m,
                          bool derivatives) {
  ElasticEval<D, K> out;
  const fem::Lame lame = fem::lame_from_young_poisson(m.youngs_modulus, m.poisson_ratio);
  if (m.model == "linear") elastic_terms(e, u, fem::LinearElastic{lame}, derivatives, out);
  else elastic_terms(e, u, fem::NeoHookean{lame}, derivatives, out);
  return out;
}

}  // namespace

template <int D, int K>
void ElasticSystem::add_loads(const IpcScene& scene) {
  constexpr int N = fem::Lagrange<D, K>::kNodes;
  PetscInt nodes[N];
  const Eigen::Matrix<double, D, 1> g = gravity_.template head<D>();
  if (g.squaredNorm() > 0) {
    for (PetscInt c = 0; c < mesh_.local_cell_count(); ++c) {
      cell_nodes(c, nodes);
      fem::Vertices<D> X;
      for (int a = 0; a <= D; ++a)
        for (int i = 0; i < D; ++i) X(i, a) = rest_[static_cast<std::size_t>(nodes[a] * D + i)];
      const auto rest = fem::element_rest<D, K>(X);
      const auto f = fem::gravity_load<D, K>(*rest, materials_[cell_material_[c]].density, g);
      for (int a = 0; a < N; ++a)
        if (owned_[nodes[a]])
          for (int i = 0; i < D; ++i) load_[node_dof_[nodes[a]] - first_row_ + i] += f(a * D + i);
    }
  }
  if (scene.loads.empty()) return;
  // Face nodes: its vertices, then (P2) its edges in simplex_edges<D − 1>() order, found by their end vertices.
  constexpr int FN = fem::Lagrange<D - 1, K>::kNodes;
  const auto face_edges = fem::simplex_edges<D - 1>();
  for (PetscInt f = 0; f < mesh_.local_boundary_face_count(); ++f) {
    PetscInt fnodes[FN];
    fem::FaceVertices<D> X;
    Eigen::Matrix<double, D, 1> centroid = Eigen::Matrix<double, D, 1>::Zero();
    for (int a = 0; a < D; ++a) {
      fnodes[a] = mesh_.boundary_face_vertices[static_cast<std::size_t>(f * D + a)];
      for (int i = 0; i < D; ++i) X(i, a) = rest_[static_cast<std::size_t>(fnodes[a] * D + i)];
      centroid += X.col(a) / D;
    }
    if constexpr (K == 2) {
      const PetscInt cell = mesh_.boundary_face_cell[static_cast<std::size_t>(f)];
      const int ne = mesh_.edges_per_cell();
      for (std::size_t e = 0; e < face_edges.size(); ++e) {
        const PetscInt a = fnodes[face_edges[e][0]], b = fnodes[face_edges[e][1]];
        for (int k = 0; k < ne; ++k) {
          const PetscInt edge = mesh_.cell_edges[static_cast<std::size_t>(cell * ne + k)];
          const PetscInt p = mesh_.edge_vertices[static_cast<std::size_t>(2 * edge)];
          const PetscInt q = mesh_.edge_vertices[static_cast<std::size_t>(2 * edge + 1)];
          if ((p == a && q == b) || (p == b && q == a)) fnodes[D + e] = mesh_.local_vertex_count() + edge;
        }
      }
    }
    for (const SurfaceLoad& l : scene.loads) {
      bool in = true;
      for (int i = 0; i < D; ++i) in = in && centroid[i] >= l.min[i] && centroid[i] <= l.max[i];
      if (!in) continue;
      const auto load = fem::traction_load<D, K>(X, l.traction.template head<D>());
      for (int a = 0; a < FN; ++a)
        if (owned_[fnodes[a]])
          for (int i = 0; i < D; ++i) load_[node_dof_[fnodes[a]] - first_row_ + i] += load(a * D + i);
    }
  }
}

template <int D, int K>
PotentialParts ElasticSystem::evaluate_elements(const std::vector<double>& u, const StepTerms& terms, double* gradient,
                                                ::Mat hessian) const {
  constexpr int N = fem::Lagrange<D, K>::kNodes;
  constexpr int ND = D * N;
  const bool derivatives = gradient != nullptr || hessian != nullptr;
  PotentialParts parts;
  PetscInt nodes[N], rows[ND], cols[ND];
  for (PetscInt c = 0; c < mesh_.local_cell_count(); ++c) {
    cell_nodes(c, nodes);
    const bool owned_cell = c < mesh_.owned_cell_count;
    bool any_row = false;
    for (int a = 0; a < N; ++a) any_row = any_row || owned_[nodes[a]];
    if (!owned_cell && !(derivatives && any_row)) continue;
    fem::Vertices<D> X;
    fem::NodalField<D, K> ue;
    for (int a = 0; a <= D; ++a)
      for (int i = 0; i < D; ++i) X(i, a) = rest_[static_cast<std::size_t>(nodes[a] * D + i)];
    for (int a = 0; a < N; ++a)
      for (int i = 0; i < D; ++i) ue(i, a) = u[static_cast<std::size_t>(nodes[a] * D + i)];
    const fem::ElementRest<D, K> rest = *fem::element_rest<D, K>(X);
    if (!(fem::min_jacobian(rest, ue) > 0)) {
      if (owned_cell) ++parts.inverted;
      continue;
    }
    const ElasticMaterial& m = materials_[cell_material_[c]];
    const ElasticEval<D, K> el = elastic<D, K>(rest, ue, m, derivatives);
    fem::ElementVector<D, K> g = el.gradient;
    fem::ElementMatrix<D, K> h = el.hessian;
    double damping = 0;
    if (terms.dt > 0 && (m.shear_damping > 0 || m.bulk_damping > 0)) {
      const fem::ViscousDamping visc{m.shear_damping, m.bulk_damping, terms.dt};
      fem::NodalField<D, K> up;
      for (int a = 0; a < N; ++a)
        for (int i = 0; i < D; ++i) up(i, a) = terms.u_prev[static_cast<std::size_t>(nodes[a] * D + i)];
      damping = fem::damping_energy(rest, ue, up, visc);
      if (derivatives) {
        g += fem::damping_gradient(rest, ue, up, visc);
        h += fem::damping_hessian(rest, ue, up, visc);
      }
    }
    if (hessian) h = clamp_negative_eigenvalues<ND>(h);
    double inertia = 0;
    if (terms.inertia_scale > 0) {
      const auto mass = fem::consistent_mass<D, K>(rest, m.density);
      fem::NodalField<D, K> delta;
      for (int a = 0; a < N; ++a)
        for (int i = 0; i < D; ++i)
          delta(i, a) = ue(i, a) - terms.predictor[static_cast<std::size_t>(nodes[a] * D + i)];
      const fem::NodalField<D, K> m_delta = terms.inertia_scale * delta * mass;  // mass is symmetric
      inertia = 0.5 * (delta.cwiseProduct(m_delta)).sum();
      if (derivatives) {
        g += Eigen::Map<const fem::ElementVector<D, K>>(m_delta.data());
        for (int a = 0; a < N; ++a)
          for (int b = 0; b < N; ++b)
            for (int i = 0; i < D; ++i) h(a * D + i, b * D + i) += terms.inertia_scale * mass(a, b);
      }
    }
    if (owned_cell) {
      parts.elastic += el.energy;
      parts.damping += damping;
      parts.inertia += inertia;
    }
    if (!derivatives || !any_row) continue;
    for (int a = 0; a < N; ++a)
      for (int i = 0; i < D; ++i) {
        const std::size_t n = static_cast<std::size_t>(nodes[a]);
        const bool free = !prescribed_[n];
        rows[a * D + i] = owned_[n] && free ? node_dof_[n] + i : -1;  // MatSetValues skips negative indices
        cols[a * D + i] = free ? node_dof_[n] + i : -1;
        if (gradient && rows[a * D + i] >= 0) gradient[rows[a * D + i] - first_row_] += g(a * D + i);
      }
    if (hessian) {
      const Eigen::Matrix<double, ND, ND, Eigen::RowMajor> hr = h;
      petsc_check(MatSetValues(hessian, ND, rows, ND, cols, hr.data(), ADD_VALUES), "MatSetValues");
    }
  }
  return parts;
}

PotentialParts ElasticSystem::evaluate(const std::vector<double>& u, const StepTerms& terms, ::Vec gradient,
                                       ::Mat hessian) const {
  const int d = mesh_.dim;
  PetscScalar* g = nullptr;
  if (gradient) {
    petsc_check(VecGetArray(gradient, &g), "VecGetArray");
    std::fill(g, g + space_.owned_dof_count, 0.0);
  }
  if (hessian) petsc_check(MatZeroEntries(hessian), "MatZeroEntries");
  PotentialParts parts;
  if (d == 2) {
    parts = order_ == 1 ? evaluate_elements<2, 1>(u, terms, g, hessian) : evaluate_elements<2, 2>(u, terms, g, hessian);
  } else {
    parts = order_ == 1 ? evaluate_elements<3, 1>(u, terms, g, hessian) : evaluate_elements<3, 2>(u, terms, g, hessian);
  }
  // Loads on owned rows: −fᵀu; prescribed rows keep a zero gradient and a unit diagonal.
  for (std::size_t k = 0; k < node_dof_.size(); ++k) {
    if (!owned_[k]) continue;
    for (int i = 0; i < d; ++i) {
      const PetscInt row = node_dof_[k] + i;
      parts.loads -= load_[static_cast<std::size_t>(row - first_row_)] * u[k * d + i];
      if (prescribed_[k]) {
        if (hessian) petsc_check(MatSetValue(hessian, row, row, 1.0, ADD_VALUES), "MatSetValue");
      } else if (g) {
        g[row - first_row_] -= load_[static_cast<std::size_t>(row - first_row_)];
      }
    }
  }
  if (gradient) petsc_check(VecRestoreArray(gradient, &g), "VecRestoreArray");
  if (hessian) {
    petsc_check(MatAssemblyBegin(hessian, MAT_FINAL_ASSEMBLY), "MatAssemblyBegin");
    petsc_check(MatAssemblyEnd(hessian, MAT_FINAL_ASSEMBLY), "MatAssemblyEnd");
  }
  double sums[4] = {parts.inertia, parts.elastic, parts.damping, parts.loads};
  MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_DOUBLE, MPI_SUM, comm_);
  std::int64_t inverted = parts.inverted;
  MPI_Allreduce(MPI_IN_PLACE, &inverted, 1, MPI_INT64_T, MPI_SUM, comm_);
  parts = PotentialParts{};
  parts.inertia = sums[0];
  parts.elastic = sums[1];
  parts.damping = sums[2];
  parts.loads = sums[3];
  parts.inverted = inverted;
  if (inverted > 0) parts.elastic = std::numeric_limits<double>::infinity();
  return parts;
}

template <int D, int K>
ElasticSystem::Totals ElasticSystem::element_totals(const std::vector<double>& u, const std::vector<double>& v) const {
  constexpr int N = fem::Lagrange<D, K>::kNodes;
  Totals t;
  PetscInt nodes[N];
  const Eigen::Matrix<double, D, 1> g = gravity_.template head<D>();
  for (PetscInt c = 0; c < mesh_.owned_cell_count; ++c) {
    cell_nodes(c, nodes);
    fem::Vertices<D> X;
    fem::NodalField<D, K> ue, ve, xe;
    for (int a = 0; a < N; ++a)
      for (int i = 0; i < D; ++i) {
        const std::size_t k = static_cast<std::size_t>(nodes[a] * D + i);
        if (a <= D) X(i, a) = rest_[k];
        ue(i, a) = u[k];
        ve(i, a) = v[k];
        xe(i, a) = rest_[k] + u[k];
      }
    const fem::ElementRest<D, K> rest = *fem::element_rest<D, K>(X);
    const ElasticMaterial& m = materials_[cell_material_[c]];
    const auto mass = fem::consistent_mass<D, K>(rest, m.density);
    t.kinetic += 0.5 * (ve.cwiseProduct(ve * mass)).sum();
    const fem::ScalarVector<D, K> weights = m.density * fem::shape_integrals<D, K>(rest);
    const Eigen::Matrix<double, D, 1> p = ve * weights;
    for (int i = 0; i < D; ++i) t.momentum[i] += p[i];
    t.gravitational -= g.dot(xe * weights);
    if (!(fem::min_jacobian(rest, ue) > 0)) {
      ++t.inverted;
      continue;
    }
    t.elastic += elastic<D, K>(rest, ue, m, false).energy;
  }
  return t;
}

ElasticSystem::Totals ElasticSystem::totals(const std::vector<double>& u, const std::vector<double>& v) const {
  Totals t;
  if (mesh_.dim == 2) t = order_ == 1 ? element_totals<2, 1>(u, v) : element_totals<2, 2>(u, v);
  else t = order_ == 1 ? element_totals<3, 1>(u, v) : element_totals<3, 2>(u, v);
  double sums[6] = {t.kinetic, t.gravitational, t.elastic, t.momentum[0], t.momentum[1], t.momentum[2]};
  MPI_Allreduce(MPI_IN_PLACE, sums, 6, MPI_DOUBLE, MPI_SUM, comm_);
  MPI_Allreduce(MPI_IN_PLACE, &t.inverted, 1, MPI_INT64_T, MPI_SUM, comm_);
  t.kinetic = sums[0];
  t.gravitational = sums[1];
  t.elastic = sums[2];
  for (int i = 0; i < 3; ++i) t.momentum[i] = sums[3 + i];
  return t;
}

template <int D, int K>
std::vector<double> ElasticSystem::element_stress(const std::vector<double>& u) const {
  constexpr int N = fem::Lagrange<D, K>::kNodes;
  std::vector<double> out(static_cast<std::size_t>(mesh_.owned_cell_count) * 9, 0.0);
  PetscInt nodes[N];
  for (PetscInt c = 0; c < mesh_.owned_cell_count; ++c) {
    cell_nodes(c, nodes);
    fem::Vertices<D> X;
    fem::NodalField<D, K> ue;
    for (int a = 0; a < N; ++a)
      for (int i = 0; i < D; ++i) {
        if (a <= D) X(i, a) = rest_[static_cast<std::size_t>(nodes[a] * D + i)];
        ue(i, a) = u[static_cast<std::size_t>(nodes[a] * D + i)];
      }
    const fem::ElementRest<D, K> rest = *fem::element_rest<D, K>(X);
    const ElasticMaterial& m = materials_[cell_material_[c]];
    const fem::Lame lame = fem::lame_from_young_poisson(m.youngs_modulus, m.poisson_ratio);
    const fem::Tensor2<D> F = fem::deformation_gradient(rest, ue, 0);
    fem::Tensor2<D> sigma;
    if (m.model == "linear") {
      sigma = fem::LinearElastic{lame}.stress<D>(F);
    } else {
      const double J = F.determinant();
      sigma = J > 0 ? fem::Tensor2<D>(fem::NeoHookean{lame}.stress<D>(F) * F.transpose() / J)
                    : fem::Tensor2<D>::Constant(std::numeric_limits<double>::quiet_NaN());
    }
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < D; ++j) out[static_cast<std::size_t>(c) * 9 + 3 * i + j] = sigma(i, j);
  }
  return out;
}

std::vector<double> ElasticSystem::cell_stress(const std::vector<double>& u) const {
  if (mesh_.dim == 2) return order_ == 1 ? element_stress<2, 1>(u) : element_stress<2, 2>(u);
  return order_ == 1 ? element_stress<3, 1>(u) : element_stress<3, 2>(u);
}

template void ElasticSystem::add_loads<2, 1>(const IpcScene&);
template void ElasticSystem::add_loads<2, 2>(const IpcScene&);
template void ElasticSystem::add_loads<3, 1>(const IpcScene&);
template void ElasticSystem::add_loads<3, 2>(const IpcScene&);

}  // namespace percussion::ipc
