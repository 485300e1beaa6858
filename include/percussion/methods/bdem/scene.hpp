#pragma once
// The bonded-DEM scene: bodies of bonded spheres, their materials, obstacles and boundary regions, the bond and
// contact models, and the implicit integrator's controls (docs/bdem.md; schema docs/schema/bdem.schema.json).
#include <string>
#include <utility>
#include <vector>

#include "percussion/core/scene.hpp"
#include "percussion/core/scene_parts.hpp"

namespace percussion::bdem {

// Implicit BDEM: each step minimises the incremental potential on prod(R^3 x S^3) (notes 001 §2.8, §3).
struct ImplicitControl {
  // Incremental potential (notes 2.2): "backward_euler" (eqs. 5–6, first order, damps; what the paper runs),
  // "midpoint" (eqs. 2–4, symplectic, second order: V at (x + x_n)/2, predictor shifted by the last midpoint's ∇V)
  // or "bdf2" (backward Euler's potential with the step 2h/3 and a two-step predictor: second order, L-stable).
  std::string form = "backward_euler";
  std::string optimizer = "newton";  // "newton" (Riemannian Newton, Alg. 2/3) | "gradient" (Alg. 1)
  double tolerance = 1e-5;           // converged when every particle's scaled residual (step / radius) is below
  int max_iterations = 50;           // optimiser iterations per time step, >= 1 (MOOSE's nl_max_its)
  // A step whose minimisation does not converge in max_iterations is taken again as two half steps, up to
  // this many halvings deep (as MOOSE's time-step cutback); 0 keeps the unconverged state.
  int step_cuts = 3;
  // Newton effort sets the depth a step starts at (as MOOSE's IterationAdaptiveDT): a step whose minimisations took
  // more than split_above_iterations Newton iterations each, on average, starts the next one a halving deeper,
  // within step_cuts; one below merge_below_iterations backs off a halving; in between the depth stays. 0 = off
  // (the depth then backs off a halving at every step).
  double split_above_iterations = 10;
  double merge_below_iterations = 5;
  double step_factor = 20;           // time step = step_factor x critical step when time.step is absent, > 0
  // Bond Hessian in the Newton matrix: "projected" (exact, per-bond eigenvalue clamp, notes 2.9), "exact"
  // (no clamp: CG may meet negative curvature) or "gauss_newton" (PSD by construction, cheaper).
  std::string hessian = "gauss_newton";
  // Minimisations per step when bonds break: each round breaks the bonds within 90% of the largest
  // stress ratio and minimises again; 1 = the paper's single check at the end of the step.
  int fracture_rounds = 1;
  // A converged step that leaves an intact bond above this multiple of its strength (max(σ/σ_c, τ/τ_c)) broke
  // it too late: the step is undone and taken as two half steps, within step_cuts. 0 = off (the paper's step).
  double fracture_cut_ratio = 0;
  // "explicit": an interval whose minimisation leaves a bond over its strength is undone and taken with the explicit
  // integrator's steps (time.step_factor x the critical step), which break bonds as the explicit method does, and so
  // are the explicit_window intervals after each one in which bonds broke: the stress waves a break sends out are
  // followed, not damped. "implicit": the paper's check at each step's end. (Not with the midpoint form.)
  std::string fracture_integrator = "implicit";
  int explicit_window = 0;
  // > 0: after a step's check breaks bonds, explicit steps follow the release from the step's end state until no
  // bond has broken for this many critical steps T (at most one step's length); the bonds they break stay broken
  // and the state goes back to the step's end. 0 = off.
  double fracture_transient = 0;
  // > 0: only the particles within this many largest particle radii of a bond broken in the transient (at the
  // transient's start) take its steps; the others coast. 0 = every particle takes them.
  double fracture_transient_reach = 0;
  // Keep the Newton matrix's preconditioner through the Newton iterations of a step (rebuilt when CG
  // slows down); false rebuilds it every iteration.
  bool reuse_preconditioner = true;
  // Keep the assembled Newton matrix (a lagged Hessian, as PETSc's -snes_lag_jacobian) for the next Newton
  // iteration when the last step was full, no contact opened or closed, and the residual fell below this
  // fraction of the previous one; 0 assembles at every iteration.
  double hessian_lag_contraction = 0.25;
  // After a full Newton step whose energy fell far less than its quadratic model predicted, try the minimiser of
  // the parabola along the step (up to 8x it); false keeps plain Armijo backtracking.
  bool line_search_extrapolation = true;
  // The line search's first trial step is the minimiser along the Newton direction of its model with the contacts
  // (pairs and planes) taken exactly (physics/contact_line.hpp), where that is short of the full step; false tries
  // the full step first.
  bool line_search_contacts = true;
  // A Newton iteration that needs a new matrix after an earlier one of the same step was assembled updates only
  // the contacts' blocks (pairs and planes) and keeps the bonds' and the inertia's (lagged): contacts that open and
  // close change the matrix outright, the bonds' blocks change little within a step. false assembles everything.
  bool contact_refresh = true;
  // Each contact pair's normal during a step's minimisation: "predicted" fixes it to the direction between the
  // centres at the predictor x̂ (the gap is then linear in the positions, the contact energy convex and k n nᵀ
  // its exact Hessian); "current" follows the iterate (the explicit integrator's penalty, whose Hessian is
  // indefinite in contact and projected).
  std::string contact_normal = "predicted";
  // Semismooth active-set rounds per Newton iteration: after the solve, contacts the step would close or open
  // (by their linearised gaps) switch to that branch of their penalty in the model, and the system is solved
  // again from the same iterate, up to this many times. 0 = off. More than one lets a few pairs cycle on and off.
  int active_set_rounds = 1;
  // PETSc options for the step's linear solver, e.g. "-bdem_pc_type gamg" for the paper-size scenes; the
  // command line overrides them. Pairs of name (with its dash) and value ("" for a flag).
  std::vector<std::pair<std::string, std::string>> petsc_options;
};

struct BdemScene : Scene {
  std::string integrator = "explicit";
  std::vector<Material> materials;
  std::vector<Body> bodies;
  BondModel bonds;
  ContactModel contact;
  std::vector<Obstacle> obstacles;
  std::vector<BoundaryCondition> boundary_conditions;
  Eigen::Vector3d gravity = Eigen::Vector3d::Zero();
  ImplicitControl implicit;
};

// The BDEM sections of a scene whose common sections are parsed. Throws InputError("<path>: <pointer>: <what>").
BdemScene parse_scene(const Scene& common);
// Both steps at once (tests, tools).
BdemScene parse_scene_text(const std::string& text, const std::string& path);
BdemScene parse_scene_file(const std::string& path);

// 16 hex digits naming the physical sections of the scene file (materials, bodies, bonds, contact, obstacles,
// boundary_conditions, gravity; FNV-1a of their JSON text): written into checkpoints, so that a restart under a
// scene whose physics differs is refused. Integrator, time, output and solver settings may change across restarts.
std::string scene_fingerprint(const Scene& scene);

}  // namespace percussion::bdem
