#pragma once
// The discrete elastic bodies of an IPC scene on the distributed mesh: P1/P2 displacement nodes (local vertices,
// then local edges for P2) with their global dofs, rest positions, prescribed (Dirichlet) nodes and the constant
// loads; and the incremental potential of one step as a function of (u, u_prev, ũ), with its gradient and its
// per-element PSD-projected Hessian, so a later adjoint can re-evaluate any step's exact terms.
//
// The mesh is distributed with one layer of overlapping cells: each rank sees every cell around its owned nodes,
// so it assembles its owned rows alone (no off-rank matrix or vector entries, hence the same bits on every run at a
// given rank count), while energies are summed over owned cells only.
#include <mpi.h>
#include <petscmat.h>
#include <petscvec.h>

#include <cstdint>
#include <vector>

#include "percussion/geometry/mesh/displacement_space.hpp"
#include "percussion/geometry/mesh/plex_mesh.hpp"
#include "percussion/methods/ipc/scene.hpp"

namespace percussion::ipc {

// What the potential adds to the elastic energy in one step.
struct StepTerms {
  double inertia_scale = 0;           // 1/(βΔt)²; 0 for a static solve
  const double* predictor = nullptr;  // ũ per local node (dim each), needed when inertia_scale > 0
  const double* u_prev = nullptr;     // u of the previous step per local node, for damping
  double dt = 0;                      // damping's Δt; 0: no damping
};

// Global sums of the potential's parts at one state.
struct PotentialParts {
  double inertia = 0, elastic = 0, damping = 0, loads = 0;  // loads: −fᵀu (gravity and tractions)
  double barrier = 0, friction = 0;                         // contact terms (contact_potential.hpp)
  double total() const { return inertia + elastic + damping + loads + barrier + friction; }
  std::int64_t inverted = 0;  // owned elements whose Jacobian is ≤ 0 somewhere (the energy is then +∞)
};

class ElasticSystem {
 public:
  // Collective: builds the mesh of the scene's bodies, the displacement space and the node data.
  ElasticSystem(const IpcScene& scene, MPI_Comm comm);
  ElasticSystem(const ElasticSystem&) = delete;
  ElasticSystem& operator=(const ElasticSystem&) = delete;

  MPI_Comm comm() const { return comm_; }
  int dim() const { return mesh_.dim; }
  int order() const { return order_; }
  const geometry::PlexMesh& mesh() const { return mesh_; }
  DM dm() const { return space_.dm.get(); }
  std::int64_t global_dofs() const { return space_.global_dof_count; }
  PetscInt owned_dofs() const { return space_.owned_dof_count; }
  PetscInt first_row() const { return first_row_; }

  // Local nodes: vertices [0, V), then edges (P2).
  PetscInt local_nodes() const { return static_cast<PetscInt>(node_dof_.size()); }
  PetscInt node_dof(PetscInt n) const { return node_dof_[static_cast<std::size_t>(n)]; }  // global, first of dim
  bool node_owned(PetscInt n) const { return owned_[static_cast<std::size_t>(n)] != 0; }
  bool node_prescribed(PetscInt n) const { return prescribed_[static_cast<std::size_t>(n)] != 0; }
  const std::vector<double>& rest() const { return rest_; }                        // dim per local node
  const std::vector<double>& prescribed_velocity() const { return prescribed_velocity_; }  // dim per local node
  const std::vector<double>& initial_velocity() const { return initial_velocity_; }        // dim per local node
  // Owned rows (0 .. owned_dofs) of the constant load f: gravity and tractions.
  const std::vector<double>& load() const { return load_; }

  // A global vector of the space (block size dim) and the matrix with its preallocation (block size dim).
  ::Vec create_vector() const;
  ::Mat create_matrix() const;
  // The global vector's values on every local node (dim per node), ghosts included. Collective.
  void to_local(::Vec global, std::vector<double>& local) const;
  // Owned nodes' values into a global vector (local: dim per local node).
  void to_global(const std::vector<double>& local, ::Vec global) const;

  // Collective. The potential's parts at u (dim per local node); the gradient's owned rows into `gradient`
  // (zero on prescribed rows) and the PSD-projected Hessian into `hessian` (identity on prescribed rows and columns),
  // each when not null. An inverted element makes the energy +∞ (no gradient or Hessian is then meaningful).
  PotentialParts evaluate(const std::vector<double>& u, const StepTerms& terms, ::Vec gradient, ::Mat hessian) const;

  // Collective: kinetic energy ½vᵀMv, momentum ∫ρv, gravitational energy −∫ρ g·x at displacement u, velocity v.
  struct Totals {
    double kinetic = 0, gravitational = 0, elastic = 0;
    double momentum[3] = {0, 0, 0};
    std::int64_t inverted = 0;
  };
  Totals totals(const std::vector<double>& u, const std::vector<double>& v) const;

  // Per owned cell (mesh order): the Cauchy stress at its first quadrature point, 9 values (3×3 row-major,
  // zero-padded in 2D), at displacement u.
  std::vector<double> cell_stress(const std::vector<double>& u) const;

  // The length of the diagonal of the bodies' bounding box at rest (global).
  double bounding_diagonal() const { return diagonal_; }

 private:
  template <int D, int K>
  PotentialParts evaluate_elements(const std::vector<double>& u, const StepTerms& terms, double* gradient,
                                   ::Mat hessian) const;
  template <int D, int K>
  Totals element_totals(const std::vector<double>& u, const std::vector<double>& v) const;
  template <int D, int K>
  std::vector<double> element_stress(const std::vector<double>& u) const;
  template <int D, int K>
  void add_loads(const IpcScene& scene);
  void set_nodes(const IpcScene& scene);
  void set_loads(const IpcScene& scene);

  // Local nodes of cell c (vertices then edges), the P1/P2 element order.
  void cell_nodes(PetscInt c, PetscInt* nodes) const;

  MPI_Comm comm_;
  std::vector<ElasticMaterial> materials_;
  Eigen::Vector3d gravity_ = Eigen::Vector3d::Zero();
  geometry::PlexMesh mesh_;
  geometry::DisplacementSpace space_;
  int order_ = 1;
  PetscInt first_row_ = 0;
  std::vector<PetscInt> node_dof_, node_local_offset_;
  std::vector<char> owned_, prescribed_;
  std::vector<double> rest_, prescribed_velocity_, initial_velocity_, load_;
  std::vector<int> cell_material_;
  double diagonal_ = 0;
};

}  // namespace percussion::ipc
