#pragma once
// Implicit bonded DEM (notes 001 §2.2, §2.8–2.11, Algorithm 3): each time step minimises the backward-Euler
// incremental potential Φ(x) = 1/(2h²)(x − x̂)ᵀ M_s (x − x̂) + V(x) over ∏(R³ × S³) by Riemannian Newton
// (or Riemannian gradient descent, Algorithm 1): reduced 6-dof gradient and PSD-projected Hessian, a PETSc
// block system (prefix -bdem_) solved by CG, Armijo backtracking along geodesics; then friction as a
// velocity post-process and fracture by the explicit method's stress criteria.
// With implicit.form = "midpoint" it minimises the symplectic, second-order form (eqs. 2–4) instead:
// Φ(x) = 1/(2h²)(x − ẑ)ᵀ M_s (x − ẑ) + V((x + x_n)/2), ẑ = x̂ − ½h² M_s⁻¹ ∇V((x_{n−1} + x_n)/2).
// With implicit.form = "bdf2" it minimises BDF2's, second-order and L-stable: backward Euler's Φ with the step
// β = 2h/3 and the predictor x̂ = (4x_n − x_{n−1})/3 + β (4v_n − v_{n−1})/3 (quaternions and their chord
// rates q̇ alike), then v_{n+1} = (x_{n+1} − (4x_n − x_{n−1})/3)/β. After a step of another length (a cut) the
// coefficients follow the ratio of the two steps (bdf2_weights). The first step is a backward-Euler one, and so is
// a step more than twice the last.
#include <mpi.h>

#include <Eigen/Core>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "percussion/geometry/cell_list.hpp"
#include "percussion/methods/bdem/bdem_method.hpp"
#include "percussion/methods/bdem/verlet_step.hpp"
#include "percussion/physics/contact_line.hpp"
#include "percussion/solvers/block_system.hpp"
#include "percussion/solvers/newton.hpp"

namespace percussion::bdem {

// The scene's implicit.petsc_options in PETSc's options database while the method lives, except those the
// command line set (it wins); removed again afterwards.
class ScenePetscOptions {
 public:
  explicit ScenePetscOptions(const BdemScene& scene);
  ~ScenePetscOptions();
  ScenePetscOptions(const ScenePetscOptions&) = delete;
  ScenePetscOptions& operator=(const ScenePetscOptions&) = delete;

 private:
  std::vector<std::string> inserted_;
};

// Its Newton iterations run in solvers::NewtonMinimiser, through the NewtonProblem callbacks (implicit_newton.cpp).
class ImplicitBdem final : public BdemMethod, private solvers::NewtonProblem {
 public:
  ImplicitBdem(const BdemScene& scene, MPI_Comm comm, Model model);

  void advance() override;
  Totals totals() override;
  Model snapshot() const override;
  std::map<std::string, double> counters() const override;

 private:
  enum class Want { Energy, Gradient, Hessian };
  void locate_pair_blocks();                // pair_position_ from the matrix pattern
  double evaluate(Want want);             // collective: Φ (and its reduced gradient / Hessian) at the current state
  // Collective: Φ(current) − Φ(base), summed element by element, from an evaluation of `want` (Energy or Gradient).
  double energy_change(Want want = Want::Energy);
  void retract(double alpha);             // owned: x = base ⊕ alpha·direction; then ghosts
  // D = diag(h²/(m r) I3, h²/(1.6 m r²) I3) of a slot: the convergence test's units; scale_ holds it per slot.
  Eigen::Matrix<double, 6, 1> convergence_scale(std::size_t slot) const;
  void compute_scale();  // scale_ for the current h_ and slots (kept while neither changes)
  void prepare_matrix();                  // (re)allocate the block pattern after a rebuild
  std::vector<char> rank_sides();         // collective: which owned particles pair with lower or higher ranks' ones
  void set_matrix_pattern();              // collective: the pairs' blocks, given whole after prepare_matrix's preallocation
  double residual();                      // collective: max scaled step |h² M⁻¹ g| / r
  void set_rigid_modes_if_multigrid();    // collective: the multigrid's near-nullspace at the current state
  bool minimise();                        // collective: Newton (or gradient) iterations; true if converged
  // The NewtonProblem callbacks (solvers/newton.hpp) for minimise(): the BDEM policy of each iteration (lagged
  // and carried Hessians, contact refreshes, preconditioner reuse, the fallback solves, active-set rounds, the
  // contact line model, rebuilds) around the solver's generic loop.
  Evaluation evaluate(int iteration) override;
  bool search_direction(int iteration, double residual) override;
  SlopeTerms slope_terms() const override;
  void descent() override;
  double step_bound() const override;  // no particle moves more than the largest radius (notes §3)
  double first_trial(double alpha, double slope, bool newton) override;
  void begin_line_search(double alpha) override;
  double trial(double alpha, int k) override;
  void end_iteration(bool accepted, double alpha) override;
  // Collective: advances the state from time t by h (predictor, minimisation, velocities, friction, fracture).
  // An unconverged minimisation is undone and the interval taken as two halves, while cuts_left > 0.
  // `presplit` halvings are taken at once, without trying the longer steps first.
  void solve_interval(double t, double h, int cuts_left, int presplit = 0);
  // x̂ (midpoint: ẑ; BDF2: its two-step predictor) for an interval of length h, prescribed particles moved,
  // pairs ready.
  void predict(double t, double h);
  double inertia_step(double h) const;    // the incremental potential's step for an interval h: h, or BDF2's β
  // BDF2 over a step h after one of h_prev, ω = h/h_prev (variable-step BDF2): x̄ = ((1+ω)² x_n − ω² x_{n−1})/(1+2ω),
  // β = h(1+ω)/(1+2ω); with ω = 1, (4x_n − x_{n−1})/3 and 2h/3. `now`, `past` and `over` are (1+ω)², ω², 1+2ω.
  struct Bdf2Weights {
    double now, past, over;
    // x̄ (or q̄) from the values at this step's start and the last one's.
    template <class V>
    V bar(const V& at_start, const V& at_last_start) const {
      return (now * at_start - past * at_last_start) / over;
    }
  };
  Bdf2Weights bdf2_weights(double h) const;
  void keep_bdf2_history(double h);       // BDF2: this step's start state becomes the next step's x_{n−1}
  struct Bdf2Past {
    Eigen::Vector3d x, v, w;
    Eigen::Vector4d q;  // on q_n's side of S³
  };
  Bdf2Past bdf2_past(std::size_t i) const;  // owned particle i at the last step's start
  void apply_friction();
  // implicit.active_set_rounds (implicit_active_set.cpp). Collective: from the Newton step direction_, which
  // contact pairs it would close or open (linearised gaps); marks them in contact_branch_ and puts the change of
  // the model's gradient at the step's end x + direction_ in branch_gradient_. Returns how many pairs switch, over
  // all ranks.
  long switch_contact_branches();
  double contact_line_step(double slope);  // collective: the line search's first trial (line_search_contacts)
  // One active-set round after a Newton solve of A y = rhs at residual res with forcing rtol: the switched pairs'
  // blocks refreshed, y corrected for them and direction_ set from it. False, and nothing changed, when no pair
  // switches. Collective.
  bool active_set_round(std::span<const double> rhs, std::vector<double>& y, double rtol, double res,
                        bool& block_jacobi_this_step, bool& likely_converged);
  void set_direction(std::span<const double> y);  // direction_ = S y in the particles' order
  // A contact pair's normal where its particles are seen at pa, pb (predicted, or the current direction).
  Eigen::Vector3d branch_normal(std::size_t k, const Eigen::Vector3d& pa, const Eigen::Vector3d& pb) const;
  void take_direction_step();  // collective: direction_step_ from direction_, the ghosts' from their owners
  // Contact candidate k's gap at the iterate and its rate along direction_step_ (exact along a predicted normal,
  // linearised between the centres otherwise); `normal` is branch_normal's.
  physics::LineContact contact_along_direction(std::size_t k, Eigen::Vector3d& normal) const;
  void take_contact_normals();            // pair_normal_ from normal_positions_ (owned; sent to the ghosts here)
  // Collective: since the matrix's last full assembly (whose bonds' blocks a contact refresh would keep) some
  // particle turned by more than kRefreshTurn, or some bond's length moved by more than kRefreshShift times the
  // inertia's stiffness over the bond's (bond_lengths_ holds them at the assembly).
  bool bonds_moved() const;
  bool refresh_contact_normals();         // collective: normals taken at the iterate if it drifted (true then)
  // Fracture (implicit_fracture.cpp).
  double stress_ratio(const Bond& b) const;  // max(σ/σ_c, τ/τ_c) at the current state
  double largest_stress_ratio();          // collective, over intact bonds
  // Break intact bonds whose stress ratio exceeds `above`; each one's first (owned) slot goes to `log` if given.
  void break_bonds(double above, std::vector<std::int32_t>* log = nullptr);
  void break_in_rounds();                 // collective: implicit.fracture_rounds after a step's minimisation
  // implicit.fracture_integrator "explicit". keep_interval_start: x_n, q_n, v_n, ω_n from the state (owned).
  // explicit_interval: collective; from time t by h with the explicit integrator's steps, from the state at x_n,
  // q_n, v_n, ω_n (what an undone try is reset to); opens the explicit window when bonds broke.
  void keep_interval_start();
  void explicit_interval(double t, double h);
  double explicit_step() const;  // the explicit run's step, time.step_factor × the critical step
  // Collective: the owned particles back to a kept state, with their ghosts (and pairs, if it moved far from them).
  void restore_owned(const std::vector<Eigen::Vector3d>& x, const std::vector<Eigen::Vector4d>& q,
                     const std::vector<Eigen::Vector3d>& v, const std::vector<Eigen::Vector3d>& w);
  // Collective: implicit.fracture_transient after a step of length h that ended at time t broke bonds.
  // `seeds`: the owned slots of the bonds that step broke (their first particles).
  void fracture_transient(double t, double h, const std::vector<std::int32_t>& seeds);
  // Collective: with implicit.fracture_transient_reach, the owned particles within it of the seeds (positions x0)
  // take full steps from now on (VerletStep::move).
  void widen_transient_region(const std::vector<Eigen::Vector3d>& x0, const std::vector<std::int32_t>& seeds);
  bool matrix_carries(double h) const;  // collective: the assembled Newton matrix may serve a step of length h
  // A carried matrix's contacts are refreshed at the next step's start (which lets a refreshed one carry): with
  // contact refreshes on and a preconditioner that follows the matrix alone.
  bool refreshes_carried_contacts() const;
  double first_try_step() const;  // the length of the next step's first try (whole, or as its fracture cuts start)
  void restore_matrix(const Model& model);  // collective: a checkpoint's carried matrix, assembled again

  ScenePetscOptions scene_options_;  // before system_: its KSP reads them
  // The incremental potential's step (inertia_step) for the interval being solved: dt_, or a half, quarter, ... of
  // it after step cuts; BDF2 two-step intervals 2/3 of that.
  double h_ = 0;
  solvers::BlockSystem system_;
  solvers::NewtonMinimiser newton_{d_.comm, "bdem_"};  // after scene_options_: reads -bdem_newton_monitor
  // What one minimisation's iterations pass on to the next ones (minimise() starts it afresh).
  struct Minimisation {
    bool carry = false;             // the matrix of the last step may serve the first iteration (matrix_carries)
    bool likely_converged = false;  // the last Newton step predicts a residual below the tolerance
    bool block_jacobi = false;      // this step's solves go to the fallback
    bool full_step = false, same_contacts = false;
    // The line search's full step was evaluated with its gradient (not only its energy), and the state has not
    // moved since: the next iteration's gradient evaluation is skipped.
    bool gradient_at_state = false;
    bool assembled_in_step = false;  // the matrix was assembled in full during this minimisation, on these pairs
    bool rounds_help = true;         // implicit.active_set_rounds still apply in this minimisation
    bool carried = false, lagged = false;  // this iteration keeps the last step's matrix; a lagged Hessian
    bool switched = false;  // an active-set round switched contacts in this iteration's direction
    bool gradient_next = false;       // the line search's full step is evaluated with its gradient
    bool trial_with_gradient = false;  // the last trial evaluated the gradient
    double previous_res = 0;
    std::vector<double> rhs, y;  // the Newton system's right-hand side and solution (the system's rows)
  };
  Minimisation min_;
  double contact_k_ = 0;
  std::vector<Eigen::Matrix<double, 6, 1>> scale_;  // per slot (owned and ghost): D of compute_scale
  double scale_step_ = -1;   // the h_ and the rebuild scale_ was computed for
  long scale_rebuild_ = -1;
  bool monitor_ = false;  // -bdem_newton_monitor: print each Newton iteration's residual, Krylov count, step
  long pattern_of_rebuild_ = -1;
  long fresh_krylov_ = 0, last_krylov_ = 0;          // CG iterations after the last refresh, and the last
  std::vector<double> petsc_row_;                    // per local particle (owned + ghost), as doubles for the halo
  std::vector<Eigen::Vector3d> p_hat_, p_base_;      // owned: predictor (midpoint form: ẑ), line-search base
  std::vector<Eigen::Vector4d> q_hat_, q_base_;
  std::vector<Eigen::Vector3d> p_n_, p_mid_;         // x_n (owned; midpoint form: + ghosts) and (x + x_n)/2
  std::vector<Eigen::Vector4d> q_n_, q_mid_;
  // Midpoint form (zeros for backward Euler): ∇V at the last step's midpoint per owned particle, as ∇_pV and
  // G_l(q)∇_qV with q the state it reached (the next step's q_n); the next ẑ needs it and checkpoints carry it
  // (as "force" and "torque").
  std::vector<Eigen::Vector3d> vgrad_p_, vgrad_y_;
  // The length of the step whose midpoint vgrad_p_ is at (0 = none yet): the next ẑ's kick is ½ h h_prev ∇V, the
  // variable-step midpoint rule, which is exact for a constant force whatever the two steps' lengths.
  double vgrad_step_ = 0;
  // BDF2: per owned particle x, q, v, ω at the start of the last step (Model::kBdf2HistoryWidth numbers),
  // and that step's length; 0 = none yet (the next step is a backward-Euler one). v_n_, w_n_: this step's start.
  std::vector<double> bdf2_history_;
  double bdf2_history_step_ = 0;
  std::vector<Eigen::Vector3d> v_n_, w_n_;
  std::vector<Eigen::Matrix<double, 6, 1>> gradient_, direction_;  // owned, reduced (δp, y)
  std::vector<double> pair_energy_, particle_energy_, pair_energy_base_, particle_energy_base_;
  std::vector<Eigen::Vector3d> gp_, gy_;             // pair-sum scratch
  std::vector<Eigen::Vector3d> bond_gp_, bond_gy_;   // midpoint form: the bonds' pair sums alone
  std::vector<double> contacts_of_;                  // friction: contacts per held particle
  std::vector<double> rigid_modes_;                   // six rigid motions, 6 values per owned particle each
  std::vector<double> ghost_rows_, ghost_rows_received_;  // Hessian rows of ghosts, on their way to owners
  // Per pair, where its off-diagonal block goes in this rank's block of the matrix (BlockSystem::add_at), or -1
  // (a ghost or Dirichlet partner, or not known yet); empty until the matrix pattern is set.
  std::vector<PetscInt> pair_position_;
  double interaction_energy_ = 0;
  double energy_noise_ = 0;  // this rank's share of Φ's round-off scale at the last gradient evaluation
  long contacts_ = 0;
  // Counters for the summary and the benchmark.
  // (newton_ counts the minimisations, Newton iterations, line-search trials, failures and extrapolations.)
  long krylov_iterations_ = 0, unconverged_steps_ = 0;
  long fallback_solves_ = 0, hessian_assemblies_ = 0, lagged_hessians_ = 0, carried_hessians_ = 0;
  long contact_refreshes_ = 0, contact_normal_updates_ = 0;
  long active_set_stops_ = 0;       // minimisations whose active-set rounds stopped (a round's step was cut short)
  long stale_bond_assemblies_ = 0;  // whole assemblies instead of a contact refresh (bonds_moved)
  // implicit.contact_refresh: the next Hessian evaluation only updates the contacts' blocks of the matrix. It
  // keeps the contact Hessians it put in (pair: k d dᵀ by pair; plane: their sum by particle) to take them out.
  bool contacts_only_ = false;
  // ...and the last evaluation was at the current state, with its gradient (the line search evaluated its accepted
  // full step so): a refresh then leaves the bonds alone altogether, and of the contacts and planes forms only the
  // Hessians, since every energy and gradient is already the current one.
  bool gradient_at_state_ = false;
  bool matrix_mixed_ = false;  // contacts refreshed since the assembly: carries only where refreshed again (matrix_carries)
  std::vector<Eigen::Matrix3d> pair_contact_hessian_;  // the contact Hessian in the matrix, where it is not zero
  std::vector<char> pair_contact_held_;                  // ... which pair_contact_hessian_ then holds
  long step_cuts_ = 0, fracture_cuts_ = 0;
  long contact_line_steps_ = 0;  // first trials the contact line model shortened
  long iteration_splits_ = 0;  // steps whose Newton effort started the next one a halving deeper
  long fracture_rounds_ = 0;  // minimisations again after a round broke bonds (implicit.fracture_rounds)
  VerletStep verlet_;         // the explicit steps of implicit.fracture_integrator "explicit" and fracture_transient
  long explicit_intervals_ = 0, explicit_steps_ = 0;
  long transient_steps_ = 0;
  double transient_particle_steps_ = 0;  // the transient steps times the particles that moved in each (all ranks)
  long transient_moving_ = 0;            // particles moving in the current transient, all ranks
  geometry::CellList transient_cells_;   // the owned particles at a fracture_transient_reach transient's start
  // How the next step starts (checkpoints carry it). fracture_cut_ratio: how many halvings it starts at without
  // trying the longer steps (the depth the last step's fracture cuts reached, or one less than it started at).
  // Point-block Jacobi: after a step whose IC(0) had to shift, the next 1, 2, 4, then 8 steps (doubling while it
  // keeps shifting, back to none once it does not) start on point-block Jacobi instead of factoring IC(0) only
  // to drop it at the first solve (a contact-dominated powder shifts at every step).
  StepSchedule schedule_;
  static constexpr int kMaxBlockJacobiBackoff = 8;
  int deepest_fracture_cut_ = 0;  // this step's deepest fracture cut (0: none)
  // This step started on point-block Jacobi; a solve factored the default preconditioner afresh; one of those
  // factorisations shifted (or failed) on some rank.
  bool start_on_block_jacobi_ = false, factor_tried_ = false, factor_shifted_ = false;
  bool shifting_blocks_ = false;  // the default preconditioner's blocks are IC(0), which may shift (and so schedule)
  long block_jacobi_steps_ = 0;  // steps started on point-block Jacobi
  bool hessian_current_ = false;  // the assembled matrix is the Hessian at a state of this minimisation
  // The Newton matrix carried into the next step, whose first Newton iteration keeps it (a lagged Hessian), its
  // contacts refreshed (refreshes_carried_contacts), or else only when no contact opened or closed. Valid while no
  // bond broke, no neighbour rebuild re-created it and the step is the one it was assembled for. A checkpoint keeps the state it was assembled at (matrix_state_, per owned particle
  // position, quaternion, predicted quaternion, step-start position and quaternion, the position its contact
  // normals were taken at), so a restart assembles the same matrix and continues bit for bit.
  static constexpr int kMatrixState = 21;
  std::vector<double> matrix_state_;
  std::vector<double> bond_lengths_;  // per pair, |x_b − x_a| at the matrix's last full assembly (bonds_moved)
  double matrix_h_ = 0;
  long matrix_rebuild_ = -1, matrix_breaks_ = -1, breaks_ = 0;  // breaks_: bonds this rank broke so far
  bool matrix_assembled_ = false;  // by Newton (not a gradient-only optimiser)
  bool preconditioner_of_matrix_ = false;  // the preconditioner was built from the assembled matrix
  // implicit.contact_normal "predicted": per pair, the unit direction from a to b at normal_positions_ (per
  // particle, owned and ghosts): the predictor at the start of a minimisation, then the iterate wherever a
  // particle drifted a tenth of its radius from them (refresh_contact_normals).
  bool predicted_normals_ = true;
  std::vector<Eigen::Vector3d> normal_positions_, pair_normal_;
  std::vector<char> contact_active_;  // per pair, at the last assembly
  // Active-set round: per pair 0 (as the state has it), 1 (closed branch) or 2 (open branch) for the next contact
  // refresh; empty otherwise. branch_gradient_: per owned particle, what the switches change of the model's
  // gradient at the step's end (translation).
  std::vector<char> contact_branch_;
  std::vector<Eigen::Vector3d> branch_gradient_;
  std::vector<Eigen::Vector3d> direction_step_;  // the direction's translations, ghosts included
  std::vector<physics::LineContact> line_contacts_;  // contact_line_step's terms
  std::vector<double> round_rhs_, round_correction_;  // the round's correction solve (system rows)
  long active_set_rounds_ = 0, branch_switches_ = 0;
  std::vector<int> planes_active_;    // obstacle planes touching each owned particle, at the last assembly
  // Evaluations that found another contact set than the one before (this rank), and their count when the
  // preconditioner was last built or the step's minimisation began.
  long contact_set_changes_ = 0, preconditioner_contact_changes_ = 0;
  long contacts_changed_ = 0;         // the last energy or gradient evaluation found another contact set (this rank)
  long steps_run_ = 0;
};

}  // namespace percussion::bdem
