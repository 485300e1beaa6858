#pragma once
// A scene file, parsed and validated into typed structs (docs/scenes.md, docs/bdem.md).
// Validation happens once, in parse_scene(); everything downstream may trust these values.
#include <Eigen/Core>
#include <array>
#include <optional>
#include <string>
#include <vector>

namespace percussion {

struct Material {
  std::string name;
  double density = 0;           // kg/m^3, > 0
  double youngs_modulus = 0;    // Pa, > 0
  double poisson_ratio = 0.3;   // [0, 0.5)
  double tensile_strength = 0;  // sigma_c, Pa, > 0 (bond breaks when sigma > this)
  double shear_strength = 0;    // tau_c, Pa, > 0 (defaults to tensile_strength)
  double friction = 0.5;        // Coulomb coefficient for contacts, >= 0
  double rolling_friction = 0;  // rolling resistance μ_r: torque up to μ_r |F_n| r, >= 0
  double restitution = 1.0;     // normal coefficient of restitution for contacts, (0, 1]
  double shear_modulus() const { return youngs_modulus / (2.0 * (1.0 + poisson_ratio)); }
};

// Shape filled with hexagonally close-packed spheres of one radius, or a woven cloth of sphere chains.
struct Generator {
  enum class Shape { Box, Cylinder, Sphere, Woven } shape = Shape::Box;
  double particle_radius = 0;  // > 0
  // Box: [min, max]. Cylinder: base centre, axis (unit after parsing), radius, height. Sphere: centre, radius.
  // Woven: min corner, size (x, y), yarn spacing (geometry/woven.hpp).
  Eigen::Vector3d min = Eigen::Vector3d::Zero(), max = Eigen::Vector3d::Zero();
  Eigen::Vector3d center = Eigen::Vector3d::Zero();  // sphere centre / cylinder base centre
  Eigen::Vector3d axis = Eigen::Vector3d::UnitZ();   // cylinder
  double radius = 0;                                 // sphere / cylinder radius
  double height = 0;                                 // cylinder
  Eigen::Vector2d size = Eigen::Vector2d::Zero();    // woven: extent along x and y, > 0
  double spacing = 0;                                // woven: requested yarn spacing, > 0
};

struct Body {
  int material = 0;  // index into Scene::materials (names resolved by the parser)
  Generator generator;
  bool bonded = true;  // bond touching neighbours inside this body
  Eigen::Vector3d velocity = Eigen::Vector3d::Zero();
  Eigen::Vector3d angular_velocity = Eigen::Vector3d::Zero();  // rigid spin about the body's centroid
};

// Bond model switches; the notes' [ERRATUM?] readings are the defaults.
struct BondModel {
  double tolerance = 0.02;        // bond pairs with |pi-pj| <= (ri+rj)(1+tolerance)
  bool shear_length_scaled = true;  // V_shear = 1/2 k_t (l0 theta)^2 (units fix) instead of 1/2 k_t theta^2
  bool full_angle_bending = false;  // t <- 2 t_raw (beam-theory stiffness) instead of the paper's half-angle
  bool tensile_only = false;        // only tension counts towards sigma in the fracture test
};

struct ContactModel {
  double stiffness = 0;     // N/m; 0 = automatic: E_max * r_max (notes 2.7)
  double skin = 0;          // m, pair lists' Verlet skin; 0 = automatic: 0.3 r_max, implicit 0.8 r_max (unless woven)
};

struct Obstacle {
  enum class Kind { Plane, Box } kind = Kind::Plane;
  Eigen::Vector3d point = Eigen::Vector3d::Zero();   // plane: a point on it
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ(); // plane: unit normal pointing into the free side
  Eigen::Vector3d min = Eigen::Vector3d::Zero(), max = Eigen::Vector3d::Zero();  // box: particles stay inside
  double friction = 0.5;
  double rolling_friction = 0;
  double restitution = 1.0;
};

// Particles whose centre lies in [min, max] at the start move rigidly: they translate with `velocity` and
// spin with `angular_velocity` about `center` (which travels with them). All zero = clamped.
struct BoundaryCondition {
  Eigen::Vector3d min = Eigen::Vector3d::Zero(), max = Eigen::Vector3d::Zero();
  Eigen::Vector3d velocity = Eigen::Vector3d::Zero();
  Eigen::Vector3d angular_velocity = Eigen::Vector3d::Zero();  // rad/s, world frame
  Eigen::Vector3d center = Eigen::Vector3d::Zero();            // at time 0; default: the region's centre
};

struct TimeControl {
  double end = 0;               // simulated end time, s, > 0
  std::optional<double> step;   // fixed time step, s; if absent: step_factor * critical step (notes 2.10)
  double step_factor = 0.2;     // (0, 1]
};

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

struct OutputControl {
  double frame_interval = 0;    // s of simulated time between frames, > 0
};

struct CheckpointControl {
  long every_steps = 0;         // 0 = off
  double every_minutes = 0;     // wall clock, 0 = off
  int keep = 3;                 // >= 1
};

struct Scene {
  std::string path;             // file it was read from
  std::string source;           // the file's text, stored in checkpoints
  std::string method = "bdem";
  std::string integrator = "explicit";
  std::vector<Material> materials;
  std::vector<Body> bodies;
  BondModel bonds;
  ContactModel contact;
  std::vector<Obstacle> obstacles;
  std::vector<BoundaryCondition> boundary_conditions;
  Eigen::Vector3d gravity = Eigen::Vector3d::Zero();
  TimeControl time;
  ImplicitControl implicit;
  OutputControl output;
  CheckpointControl checkpoint;
};

// Parse and validate. Throws InputError("<path>: <json pointer>: <what>") on the first problem.
Scene parse_scene_text(const std::string& text, const std::string& path);
Scene parse_scene_file(const std::string& path);

}  // namespace percussion
