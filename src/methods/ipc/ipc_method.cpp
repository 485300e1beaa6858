// The IPC method: set-up, time stepping (BDF1/BDF2 or one static solve), counters.
#include "percussion/methods/ipc/ipc_method.hpp"

#include <petscsys.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "percussion/core/error.hpp"
#include "percussion/physics/fem/bdf.hpp"
#include "percussion/solvers/petsc_check.hpp"

namespace percussion::ipc {

using solvers::petsc_check;

ScenePetscDefaults::ScenePetscDefaults(const NewtonSettings& newton, MPI_Comm comm) {
  std::vector<std::pair<std::string, std::string>> options = newton.petsc_options;
  int size = 1;
  MPI_Comm_size(comm, &size);
  const auto chosen = [&](const char* name) {
    PetscBool set = PETSC_FALSE;
    petsc_check(PetscOptionsHasName(nullptr, nullptr, name, &set), "PetscOptionsHasName");
    return set || std::any_of(options.begin(), options.end(), [&](const auto& o) { return o.first == name; });
  };
  if (size >= 3 && !chosen("-ipc_pc_type")) {
    // GAMG's parallel set-up sums some terms in the order messages arrive once a rank hears from two others, so runs
    // (and restarts) on 3 or more ranks would differ in the last bits; BoomerAMG's is reproducible. HMIS with ext+i
    // interpolation and one aggressive level keeps its set-up as cheap as GAMG's.
    options.insert(options.end(), {{"-ipc_pc_type", "hypre"},
                                   {"-ipc_pc_hypre_type", "boomeramg"},
                                   {"-ipc_pc_hypre_boomeramg_coarsen_type", "HMIS"},
                                   {"-ipc_pc_hypre_boomeramg_interp_type", "ext+i"},
                                   {"-ipc_pc_hypre_boomeramg_strong_threshold", "0.5"},
                                   {"-ipc_pc_hypre_boomeramg_agg_nl", "1"}});
  }
  for (const auto& [name, value] : options) {
    PetscBool set = PETSC_FALSE;
    petsc_check(PetscOptionsHasName(nullptr, nullptr, name.c_str(), &set), "PetscOptionsHasName");
    if (set) continue;  // the command line (then the scene) wins
    petsc_check(PetscOptionsSetValue(nullptr, name.c_str(), value.empty() ? nullptr : value.c_str()),
                "PetscOptionsSetValue");
    inserted_.push_back(name);
  }
}

ScenePetscDefaults::~ScenePetscDefaults() {
  for (const std::string& name : inserted_) PetscOptionsClearValue(nullptr, name.c_str());
}

IpcMethod::IpcMethod(IpcScene scene, MPI_Comm comm, const std::string& restart_file)
    : scene_(std::move(scene)), comm_(comm), petsc_defaults_(scene_.newton, comm), newton_(comm, "ipc_") {
  ScopedPhase setup(timers_, Phase::Setup);  // meshing and distribution dominate large scenes' start
  system_ = std::make_unique<ElasticSystem>(scene_, comm_);
  minimisation_ = std::make_unique<StepMinimisation>(*system_, scene_, timers_);
  settings_.max_iterations = static_cast<int>(scene_.newton.max_iterations);
  settings_.tolerance = scene_.newton.tolerance.value_or(1e-5 * system_->bounding_diagonal());
  settings_.final_step = true;  // runs on different rank counts then agree to the linear solves, not to the tolerance
  for (auto& v : u_) v = system_->create_vector();
  for (auto& v : v_) v = system_->create_vector();
  scratch_ = system_->create_vector();
  for (int k = 0; k < 2; ++k) {
    petsc_check(VecSet(u_[k], 0.0), "VecSet");
    petsc_check(VecSet(v_[k], 0.0), "VecSet");
  }
  if (!is_static()) system_->to_global(system_->initial_velocity(), v_[0]);
  order_owned_nodes();
  if (!restart_file.empty()) read_checkpoint(restart_file);
  check_separation();
}

// The barrier is only defined where every pair of surface primitives is apart and every vertex in front of the
// obstacle planes.
void IpcMethod::check_separation() {
  ContactPotential& contact = minimisation_->contact();
  if (!contact.enabled()) return;
  std::vector<double> u;
  system_->to_local(u_[0], u);
  const IntersectionReport r = contact.intersections(u);
  if (r.count() > 0)
    throw InputError(scene_.path + ": " + input_pointer(r) + ": bodies intersect " +
                     (step_ == 0 ? "at t = 0" : "in the restart state") + ": " + describe(r, system_->dim()));
  contact.build(u, nullptr);
  const double d = contact.min_distance();
  last_min_distance_ = d;
  min_distance_ = std::min(min_distance_, d);
  if (!(d > 0)) {
    std::ostringstream o;
    o << scene_.path << ": /bodies: surfaces touch or cross " << (step_ == 0 ? "at t = 0" : "in the restart state")
      << " (smallest distance between surface primitives, or of a vertex to an obstacle plane, " << d << ")";
    throw InputError(o.str());
  }
}

IpcMethod::~IpcMethod() {
  for (auto& v : u_) VecDestroy(&v);
  for (auto& v : v_) VecDestroy(&v);
  VecDestroy(&scratch_);
}

void IpcMethod::order_owned_nodes() {
  const geometry::PlexMesh& m = system_->mesh();
  vertex_order_.resize(static_cast<std::size_t>(m.owned_vertex_count));
  std::iota(vertex_order_.begin(), vertex_order_.end(), PetscInt{0});
  std::sort(vertex_order_.begin(), vertex_order_.end(), [&](PetscInt a, PetscInt b) {
    return m.vertex_global_id[static_cast<std::size_t>(a)] < m.vertex_global_id[static_cast<std::size_t>(b)];
  });
  vertex_ids_.clear();
  for (PetscInt v : vertex_order_) vertex_ids_.push_back(m.vertex_global_id[static_cast<std::size_t>(v)]);
  edge_order_.clear();
  edge_ids_.clear();
  if (system_->order() == 2) {
    edge_order_.resize(static_cast<std::size_t>(m.owned_edge_count));
    std::iota(edge_order_.begin(), edge_order_.end(), PetscInt{0});
    std::sort(edge_order_.begin(), edge_order_.end(), [&](PetscInt a, PetscInt b) {
      return m.edge_global_id[static_cast<std::size_t>(a)] < m.edge_global_id[static_cast<std::size_t>(b)];
    });
    for (PetscInt e : edge_order_) edge_ids_.push_back(m.edge_global_id[static_cast<std::size_t>(e)]);
  }
}

bool IpcMethod::reached(double t) const {
  if (is_static()) return step_ >= 1 && t <= time_;  // one state, at the scene's end time
  return static_cast<double>(step_) >= std::ceil(t / scene_.time_step - 1e-9);
}

std::map<std::string, std::int64_t> IpcMethod::sizes() const {
  const geometry::PlexMesh& m = system_->mesh();
  return {{"bodies", static_cast<std::int64_t>(scene_.bodies.size())},
          {"vertices", m.global_vertex_count},
          {"elements", m.global_cell_count},
          {"dofs", system_->global_dofs()}};
}

// One minimisation: u^i = argmin ½/(βΔt)²(u − ũ)ᵀM(u − ũ) + Ψ(u) (static: Ψ alone), from u^(i−1) with the
// prescribed nodes moved to where their velocity takes them at t_i.
void IpcMethod::advance(double /*limit*/) {
  const bool stat = is_static();
  const long i = step_ + 1;
  const double dt = scene_.time_step;
  const double t_next = stat ? 1.0 : static_cast<double>(i) * dt;  // static: prescribed displacement = velocity · 1 s
  const int d = system_->dim();
  ::Vec x = minimisation_->iterate();

  std::vector<double> start, predictor, previous;
  system_->to_local(u_[0], start);
  previous = start;
  for (PetscInt k = 0; k < system_->local_nodes(); ++k)
    if (system_->node_prescribed(k))
      for (int c = 0; c < d; ++c)
        start[static_cast<std::size_t>(k * d + c)] = system_->prescribed_velocity()[static_cast<std::size_t>(k * d + c)] * t_next;
  petsc_check(VecCopy(u_[0], x), "VecCopy");
  system_->to_global(start, x);

  StepTerms terms;
  fem::Bdf scheme;
  if (!stat) {
    scheme = fem::bdf_at_step(scene_.integrator == "bdf1" ? 1 : 2, static_cast<int>(i));
    // ũ = −Σ_j α_j u^(i−j) − βΔt Σ_j α_j v^(i−j)
    ::Vec tilde = scratch_;
    petsc_check(VecSet(tilde, 0.0), "VecSet");
    for (int j = 1; j <= scheme.order; ++j) {
      petsc_check(VecAXPY(tilde, -scheme.alpha[j - 1], u_[j - 1]), "VecAXPY");
      petsc_check(VecAXPY(tilde, -scheme.beta * dt * scheme.alpha[j - 1], v_[j - 1]), "VecAXPY");
    }
    system_->to_local(tilde, predictor);
    terms.inertia_scale = fem::inertia_scale(scheme, dt);
    terms.predictor = predictor.data();
    terms.u_prev = previous.data();
    terms.dt = dt;
  }
  minimisation_->set_terms(terms, stat ? 1.0 : dt);
  minimisation_->begin_step(previous, stat ? 0.0 : dt);
  const long krylov_before = minimisation_->krylov_iterations();
  const solvers::NewtonResult result = newton_.minimise(*minimisation_, settings_);
  last_newton_ = result.iterations;
  last_krylov_ = minimisation_->krylov_iterations() - krylov_before;
  newton_iterations_ += last_newton_;
  krylov_iterations_ += last_krylov_;
  if (!result.converged()) {
    std::ostringstream o;
    o << "step " << i << ": IPC Newton stopped (" << solvers::to_string(result.reason) << ") after "
      << result.iterations << " iterations with ‖p‖∞" << (stat ? "" : "/Δt") << " = " << result.residual
      << ", tolerance " << settings_.tolerance;
    throw NumericalError(o.str());
  }
  inverted_max_ = std::max(inverted_max_, minimisation_->parts().inverted);
  ContactPotential& contact = minimisation_->contact();
  if (contact.enabled()) {
    last_min_distance_ = contact.min_distance();
    last_contacts_ = contact.active_pairs();
    min_distance_ = std::min(min_distance_, last_min_distance_);
  }

  if (stat) {
    petsc_check(VecCopy(x, u_[0]), "VecCopy");
  } else {
    // v^i = (u^i + Σ_j α_j u^(i−j)) / (βΔt), then the histories shift.
    petsc_check(VecCopy(x, scratch_), "VecCopy");
    for (int j = 1; j <= scheme.order; ++j)
      petsc_check(VecAXPY(scratch_, scheme.alpha[j - 1], u_[j - 1]), "VecAXPY");
    petsc_check(VecScale(scratch_, 1.0 / (scheme.beta * dt)), "VecScale");
    std::swap(v_[1], scratch_);
    std::swap(v_[0], v_[1]);  // v_[0] = v^i, v_[1] = v^(i−1)
    std::swap(u_[0], u_[1]);
    petsc_check(VecCopy(x, u_[0]), "VecCopy");  // u_[1] = u^(i−1)
  }
  step_ = i;
  time_ = stat ? scene_.time.end : static_cast<double>(i) * dt;
}

std::map<std::string, double> IpcMethod::counters() const {
  const solvers::NewtonCounters& c = newton_.counters();
  return {{"newton_iterations", static_cast<double>(newton_iterations_)},
          {"krylov_iterations", static_cast<double>(krylov_iterations_)},
          {"line_search_trials", static_cast<double>(c.line_search_trials)},
          {"inverted_elements", static_cast<double>(inverted_max_)},
          {"barrier_stiffness", minimisation_->contact().kappa()},
          {"linear_solver_fallbacks", static_cast<double>(minimisation_->solver_fallbacks())}};
}

std::map<std::string, double> IpcMethod::headline() const {
  std::map<std::string, double> h{{"inverted_elements", static_cast<double>(inverted_max_)}};
  if (minimisation_->contact().enabled()) {
    h["min_distance"] = min_distance_;
    h["intersections"] = static_cast<double>(intersections_max_);
  }
  return h;
}

}  // namespace percussion::ipc
