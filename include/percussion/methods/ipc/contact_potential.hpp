#pragma once
// The contact terms of IPC's incremental potential (notes 002 §2.7–2.8) on the elastic system's nodes: the
// barrier κ Σ_k A_k b(d_k²) over the distributed pair set, the lagged friction D(u; u^(i−1)), the CCD bound of a
// line-search step, and the barrier stiffness κ (a scene value, fixed; or IPC's heuristic at the first step, then
// doubled at iterates where gaps keep closing toward round-off — a later adjoint replays the recorded values). Displacements are in the system's local-node
// layout (dim per node); only the mesh vertices carry contact (P2 edge nodes move the surface between them).
#include <mpi.h>
#include <petscmat.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "percussion/methods/ipc/contact_assembly.hpp"
#include "percussion/methods/ipc/contact_friction.hpp"
#include "percussion/methods/ipc/contact_intersection.hpp"
#include "percussion/methods/ipc/contact_set.hpp"
#include "percussion/methods/ipc/contact_surface.hpp"
#include "percussion/methods/ipc/elastic_system.hpp"

namespace percussion::ipc {

struct ContactParts {
  double barrier = 0, friction = 0;
};

class ContactPotential {
 public:
  // Collective: the bodies' contact surfaces and the options of the scene. `rows`: a global vector of the system.
  ContactPotential(const ElasticSystem& system, const IpcScene& scene, ::Vec rows);

  // Whether the scene can have contact at all: obstacles, several bodies, or self-contact.
  bool enabled() const { return enabled_; }
  double dhat() const { return options_.dhat; }
  double kappa() const { return kappa_; }
  bool has_kappa() const { return kappa_ > 0; }
  void set_kappa(double kappa) { kappa_ = kappa; }
  // Collective: IPC's heuristic at the current pair set against the gradient of the rest of the potential,
  // κ ∈ [κ_min, 100 κ_min] with κ_min from the bodies' average nodal mass.
  void initialise_kappa(::Vec other_gradient);
  // Collective, at each Newton iterate (IPC's adaptive stiffness, unless the scene fixes κ): when the smallest
  // squared gap is below 1e-9 × the squared bounding diagonal and still closing since the last iterate, κ doubles (at
  // most 100 κ_min), so that the barrier stops what comes fast before the gap reaches round-off.
  void adapt_kappa();
  double previous_min_distance() const { return previous_min_distance_; }
  void set_previous_min_distance(double d) { previous_min_distance_ = d; }

  // Collective: the candidate pairs of every sweep from u to u + step (step null: at u alone).
  void build(const std::vector<double>& u, const std::vector<double>* step);
  // Collective over neighbours: the current pairs' (and the friction pairs') positions at u.
  void update(const std::vector<double>& u);
  // Collective: lags friction at u_prev with smoothing length ε_v Δt (nothing when μ = 0 or Δt = 0).
  void freeze_friction(const std::vector<double>& u_prev, double dt);
  void clear_friction() { friction_.reset(); }

  // Collective. The parts at the positions of the last build/update (exact sums).
  ContactParts energy() const;
  // Collective: gradient and PSD-projected Hessian added on owned rows (prescribed nodes skipped).
  void add_gradient(::Vec gradient);
  void add_hessian(::Mat hessian);
  // Collective: the largest α ≤ 1 of the sweep u → u + α step (the last build's) that keeps every pair apart.
  double max_step(const std::vector<double>& step) const;
  // Collective: the smallest distance between surface primitives (of different bodies, of a body with itself when
  // self-contact is on, and of vertices to planes), capped at d̂: every pair closer than d̂ is a candidate, so the
  // minimum over the candidates capped at d̂ is exact. And how many pairs are within d̂.
  double min_distance() const { return std::min(set_.min_distance(), options_.dhat); }
  std::int64_t active_pairs() const;
  // Collective: surface primitives crossing or touching, vertices on or behind planes, bodies nested in others at u.
  IntersectionReport intersections(const std::vector<double>& u) const;
  std::int64_t friction_pairs() const;

 private:
  void vertex_values(const std::vector<double>& u, bool add_rest, std::vector<double>& out) const;

  const ElasticSystem& system_;
  bool enabled_ = false;
  double mu_ = 0, friction_velocity_ = 0;
  double kappa_ = 0, kappa_min_ = 0;
  double previous_min_distance_ = std::numeric_limits<double>::infinity();
  bool adaptive_ = true;
  ContactOptions options_;
  ContactSurface surface_;
  std::vector<PetscInt> vertex_dof_;  // first global dof per mesh-local vertex, −1 when prescribed
  ContactSet set_;
  std::unique_ptr<FrictionSet> friction_;
  ContactAssembly assembly_;
  std::vector<double> x_, step_;  // scratch: positions / step per mesh-local vertex
};

}  // namespace percussion::ipc
