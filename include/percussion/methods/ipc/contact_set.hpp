#pragma once
// The distributed IPC pair set (notes 002 §2.7–2.8, §7): every primitive pair that can come within d̂ during a
// step, found once on exactly one rank, with the barrier energy, gradient and Hessian as blocks on global
// indices, the minimum distance, and the lagged friction.
//
// Ownership: each primitive belongs to one rank (contact_surface.hpp); a pair is evaluated by the smaller of its
// two primitives' owner ranks. A rank sends its primitives to every rank whose box (all its own primitives'
// boxes swept over the step) they come within d̂ of, so the evaluating rank holds both sides. Positions of the
// copies are refreshed with update_positions (one neighbour exchange) at every Newton iterate.
#include <mpi.h>
#include <petscmat.h>

#include <span>
#include <vector>

#include "percussion/methods/ipc/contact_blocks.hpp"
#include "percussion/methods/ipc/contact_surface.hpp"
#include "percussion/methods/ipc/contact_vertices.hpp"
#include "percussion/physics/ipc/contact_pair.hpp"

namespace percussion::ipc {

struct ContactOptions {
  double dhat = 1e-3;                // activation distance d̂
  bool self_contact = false;         // pairs of one body's primitives (else only pairs of different bodies)
  std::vector<HalfPlane> planes;     // analytic obstacles: the bodies stay on the side the normal points to
};

class ContactSet {
 public:
  // Collective. x: dim numbers per mesh-local vertex (owned and ghosts, current); step: the same layout, the
  // candidates cover every pair within d̂ somewhere on x → x + step (empty: no motion); vertex_dof: the global
  // index of each mesh-local vertex's first dof (empty: global id × dim).
  void build(MPI_Comm comm, const ContactSurface& surface, std::span<const double> x, std::span<const double> step,
             std::span<const PetscInt> vertex_dof, const ContactOptions& options);
  // Collective over neighbours: positions of all stencil vertices from x (mesh-local layout).
  void update_positions(std::span<const double> x) { vertices_.update(x); }

  // Σ_k κ A_k b(d_k²) over all ranks' pairs, as an exact sum (the same bits on any rank count). Collective.
  double energy(double kappa) const;
  // Smallest distance over the candidate pairs of all ranks (+∞ if none; negative if a vertex is behind a plane).
  double min_distance() const;
  // This rank's pairs' blocks (gradient: count·dim values; Hessian (count·dim)², projected to PSD if asked).
  void for_each_gradient(double kappa, const ContactBlock& add) const;
  void for_each_hessian(double kappa, bool project, const ContactBlock& add) const;
  // The same added into PETSc objects on global dof indices (collective; add_blocks in contact_blocks.hpp).
  PetscErrorCode add_gradient(double kappa, ::Vec gradient) const;
  PetscErrorCode add_hessian(double kappa, bool project, ::Mat hessian) const;

  const std::vector<ContactPair>& pairs() const { return pairs_; }
  const ContactVertices& vertices() const { return vertices_; }
  const ContactOptions& options() const { return options_; }
  int dim() const { return dim_; }
  MPI_Comm comm() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int dim_ = 0;
  ContactOptions options_;
  ContactVertices vertices_;
  std::vector<ContactPair> pairs_;
};

}  // namespace percussion::ipc
