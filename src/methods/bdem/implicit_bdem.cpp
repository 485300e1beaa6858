#include "percussion/methods/bdem/implicit_bdem.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "percussion/core/error.hpp"
#include "percussion/core/log.hpp"
#include "percussion/geometry/obstacle.hpp"
#include "percussion/methods/bdem/boundary_motion.hpp"
#include "percussion/physics/manifold_bond.hpp"
#include "percussion/physics/manifold_bond_gn.hpp"
#include "percussion/physics/manifold_contact.hpp"
#include "percussion/physics/manifold_inertia.hpp"
#include "percussion/physics/quaternion.hpp"
#include "percussion/physics/rigid_modes.hpp"

namespace percussion::bdem {
namespace {

using Vec6 = Eigen::Matrix<double, 6, 1>;
using Block6 = Eigen::Matrix<double, 6, 6, Eigen::RowMajor>;  // PETSc takes blocks row by row

constexpr double kArmijo = 1e-4;
// Block b-a, block b-b (row-major 6x6 each), PETSc column of a (−1: nothing), and what the blocks are (kGhost*).
constexpr int kGhostRowWidth = 74;
constexpr int kGhostContact = 1, kGhostChanged = 2, kGhostDiagonal = 4;  // a contact's; its b-a block changed; b-b given
constexpr int kMaxBacktracks = 40;
// Round-off of an energy change summed term by term, per unit of Σ_k |x|·|∂Φ_k/∂x| (evaluate()).
constexpr double kEnergyRoundoff = 8 * std::numeric_limits<double>::epsilon();
// Loosest CG tolerance of a Newton step, on the system in the units of the convergence test (compute_scale).
// The notes' 0.5 (eq. 31) leaves the contact-dominated first iterations with one-CG-iteration directions. 0.01
// took 15-30 % fewer Newton iterations than 0.1 on every small scene (on the paper-size twist, stretch and cloth
// 3.0/3.0/2.6 -> 2.1/2.1/2.0 per step) for about the same CG total. The fallback (then point-block Jacobi) pays more
// CG iterations per digit, and on chocolate_drop 0.03 was the better compromise there.
constexpr double kForcingCap = 0.01;
constexpr double kFallbackForcingCap = 0.03;
// A Newton step's last solve asks CG for this fraction of the tolerance (forcing in minimise): 0.1 took 5-15 %
// more CG iterations than 0.3 on the small scenes, 0.45 one more Newton iteration on chocolate_drop_small.
constexpr double kToleranceMargin = 0.3;
// Line-search extrapolation (try_extrapolation): tried when the line's curvature is below this fraction of the
// Newton model's, up to this multiple of the Newton step.
constexpr double kExtrapolationRatio = 0.5;
constexpr double kMaxExtrapolation = 8.0;
// Predicted contact normals (implicit.contact_normal) are taken again at the iterate once a particle moved this
// fraction of its radius from where they were taken: the linearised gap is then off by less than ~(0.1 r)²/(4 r).
// Over drop_small's whole run: 0.05 → 213 Newton iterations, 0.1 → 208, 0.2 → 189, never → 266 (and more energy
// left: 51.9 against 46.4 J with normals that follow the iterate, 46.2 J at 0.1).
constexpr double kNormalDrift = 0.1;
// BDF2 keeps its history over step changes up to this ratio: a cut's halves are followed by steps twice as long.
// Beyond it (1 + √2 is the stability bound) a step restarts with backward Euler.
constexpr double kMaxBdf2Ratio = 2.0;

// -bdem_<name> [1|0|true|false|yes|no|on|off]: `unset` when absent, on when given alone or as one of the first four.
// single_precision_product 0 gives PETSc's double-precision product; half_precision_factor 0 keeps IC(0)'s factor
// in floats; gauss_seidel_fallback 0 gives the fallback point-block Jacobi instead of block symmetric Gauss–Seidel;
// half_precision_split (off unless given) has the D-ILU and Gauss–Seidel sweeps read their blocks as halves;
// float_cg_vectors 0 keeps CG's vectors on a split in double.
bool switch_option(const std::string& name, bool unset = true) {
  char value[32] = "";
  PetscBool set = PETSC_FALSE;
  solvers::petsc_check(PetscOptionsGetString(nullptr, "bdem_", ("-" + name).c_str(), value, sizeof value, &set),
                       "PetscOptionsGetString");
  std::string v(value);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (!set) return unset;
  if (v.empty() || v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  throw InputError("option -bdem_" + name + ": expected 1/0, true/false, yes/no or on/off, got '" +
                   std::string(value) + "'");
}

// -bdem_sub_pc_type icc|dilu|sgs: the blocks of the default preconditioner (block Jacobi across ranks): IC(0), or
// D-ILU or block symmetric Gauss–Seidel applied by Eisenstat's trick. Also refuses the PETSc preconditioners that
// fail on 6x6-block SBAIJ (SOR and Eisenstat's SSOR: "SSOR for block size > 1 is not yet implemented", then a crash
// in PETSc 3.18).
solvers::BlockSystem::Blocks local_blocks_option() {
  using Blocks = solvers::BlockSystem::Blocks;
  char value[64] = "";
  PetscBool set = PETSC_FALSE;
  solvers::petsc_check(PetscOptionsGetString(nullptr, "bdem_", "-pc_type", value, sizeof value, &set),
                       "PetscOptionsGetString");
  const std::string pc(set ? value : "");
  if (pc == "sor" || pc == "eisenstat")
    throw InputError("option -bdem_pc_type " + pc +
                     ": PETSc has no SOR for the 6x6-block Newton matrix; -bdem_sub_pc_type sgs gives block "
                     "symmetric Gauss-Seidel with Eisenstat's trick");
  solvers::petsc_check(PetscOptionsGetString(nullptr, "bdem_", "-sub_pc_type", value, sizeof value, &set),
                       "PetscOptionsGetString");
  const std::string sub(set ? value : "sgs");
  if (!pc.empty() && pc != "shell") {  // -bdem_sub_pc_type then belongs to that preconditioner (bjacobi, asm)
    if (set && (sub == "dilu" || sub == "sgs"))
      throw InputError("option -bdem_sub_pc_type " + sub + " (command line or implicit.petsc_options) is for the "
                       "default preconditioner, not -bdem_pc_type " + pc + ": give PETSc's, e.g. -bdem_sub_pc_type icc");
    return Blocks::Icc;
  }
  if (sub == "icc") return Blocks::Icc;
  if (sub == "dilu") return Blocks::Dilu;
  if (sub == "sgs") return Blocks::GaussSeidel;
  throw InputError("option -bdem_sub_pc_type: the default preconditioner's blocks are icc, dilu or sgs, got '" + sub +
                   "' (for PETSc's, add -bdem_pc_type bjacobi)");
}

// The explicit contact's dashpot realises `restitution`; the implicit contact is the paper's penalty alone
// (notes §2.7), whose bounce the step's own damping sets. Say so rather than ignore the key silently.
void warn_unused_restitution(const Scene& scene) {
  double e = 1.0;
  for (const auto& m : scene.materials) e = std::min(e, m.restitution);
  for (const auto& o : scene.obstacles) e = std::min(e, o.restitution);
  if (!(e < 1.0)) return;
  char text[160];
  std::snprintf(text, sizeof text,
                "implicit: contact restitution (lowest %.3g) is the explicit integrator's dashpot; implicit contacts "
                "have none, the step's damping sets the bounce", e);
  log::info(text);
}

}  // namespace

ScenePetscOptions::ScenePetscOptions(const Scene& scene) {
  for (const auto& [name, value] : scene.implicit.petsc_options) {
    PetscBool set = PETSC_FALSE;
    solvers::petsc_check(PetscOptionsHasName(nullptr, nullptr, name.c_str(), &set), "PetscOptionsHasName");
    if (set) continue;  // the command line (or an outer scene) wins
    solvers::petsc_check(PetscOptionsSetValue(nullptr, name.c_str(), value.empty() ? nullptr : value.c_str()),
                         "PetscOptionsSetValue");
    inserted_.push_back(name);
  }
}

ScenePetscOptions::~ScenePetscOptions() {
  for (const std::string& name : inserted_) PetscOptionsClearValue(nullptr, name.c_str());
}

ImplicitBdem::ImplicitBdem(const Scene& scene, MPI_Comm comm, const GlobalModel& model)
    : BdemMethod(scene, comm, model), scene_options_(scene), system_(comm, "bdem_", 6), verlet_(scene_, d_, timers_) {
  h_ = dt_;
  contact_k_ = d_.pair_law(0, 0).stiffness;  // one penalty stiffness for all pairs and obstacles (notes 2.7)
  warn_unused_restitution(scene);
  predicted_normals_ = scene_.implicit.contact_normal == "predicted";
  PetscBool monitor = PETSC_FALSE;
  solvers::petsc_check(PetscOptionsHasName(nullptr, "bdem_", "-newton_monitor", &monitor), "PetscOptionsHasName");
  monitor_ = monitor == PETSC_TRUE;
  system_.use_single_precision_product(switch_option("single_precision_product"));
  system_.use_half_precision_factor(switch_option("half_precision_factor"));
  system_.use_half_precision_split(switch_option("half_precision_split", false));
  system_.use_float_cg_vectors(switch_option("float_cg_vectors"));
  system_.use_gauss_seidel_fallback(switch_option("gauss_seidel_fallback"));
  system_.use_sweeps_across_ranks(switch_option("sweeps_across_ranks"));
  const solvers::BlockSystem::Blocks blocks = local_blocks_option();
  system_.use_blocks(blocks);
  shifting_blocks_ = blocks == solvers::BlockSystem::Blocks::Icc;
  schedule_ = model.schedule;
  // Only IC(0) shifts: with other blocks, steps an IC(0) run's checkpoint scheduled on point-block Jacobi are dropped.
  if (!shifting_blocks_) schedule_.block_jacobi_steps = schedule_.block_jacobi_backoff = 0;
  vgrad_p_.assign(d_.n_owned, Eigen::Vector3d::Zero());  // backward Euler keeps (and checkpoints) zeros
  vgrad_y_.assign(d_.n_owned, Eigen::Vector3d::Zero());
  // BDF2's x_{n−1}: a BDF2 checkpoint's (another form's run starts over with a backward-Euler step).
  if (scene_.implicit.form == "bdf2" && model.written_by_form == "bdf2" && !model.bdf2_history.empty()) {
    constexpr std::size_t w = GlobalModel::kBdf2HistoryWidth;
    bdf2_history_.resize(w * d_.n_owned);
    for (std::size_t i = 0; i < d_.n_owned; ++i)
      std::copy_n(&model.bdf2_history[w * static_cast<std::size_t>(d_.gid[i])], w, &bdf2_history_[w * i]);
    bdf2_history_step_ = model.bdf2_history_step;
  }
  h_ = inertia_step(first_try_step());  // what a carried matrix was assembled with (restore_matrix)
  // (A checkpoint of an earlier version holds fewer numbers per particle: its matrix is assembled afresh.)
  const bool has_matrix = model.newton_state.size() == static_cast<std::size_t>(kMatrixState) * model.radius.size();
  if (has_matrix && model.written_by_integrator == "implicit" && model.written_by_form == scene_.implicit.form &&
      model.time_step == dt_ && scene_.implicit.optimizer == "newton" && scene_.implicit.hessian_lag_contraction > 0)
    restore_matrix(model);  // what the interrupted run's next step keeps
  if (scene_.implicit.form != "midpoint") return;
  // The midpoint predictor needs ∇V at the previous step's midpoint; a checkpoint carries it. A fresh start has
  // none and uses zero, ẑ = x̂: then x_1 = x_0 + h v_0 − ½h² M⁻¹∇V((x_0 + x_1)/2) is second-order consistent
  // with v_0 = v(0). (∇V(x_0) instead would apply the first step's force twice: a free fall would keep an
  // error ½ g h t, and a released stiff mode with ωh ≫ 1 would triple its amplitude.)
  if (!model.from_checkpoint) return;
  // Only a midpoint run's checkpoint holds that ∇V: an explicit one holds forces (minus a gradient, gravity
  // included), backward Euler zeros, and a file without "form" may be either.
  if (model.written_by_integrator != "implicit" || model.written_by_form != "midpoint") {
    const std::string writer = model.written_by_form.empty() ? "an unrecorded form"
                                                             : model.written_by_integrator + " " + model.written_by_form;
    log::info("implicit midpoint: the checkpoint (" + writer + ") holds no midpoint gradient; starting as a fresh "
              "start does");
    return;
  }
  for (std::size_t i = 0; i < d_.n_owned; ++i) {
    vgrad_p_[i] = model.force[d_.gid[i]];
    vgrad_y_[i] = model.torque[d_.gid[i]];
  }
  vgrad_step_ = model.gradient_step > 0 ? model.gradient_step : model.time_step;
}

void ImplicitBdem::prepare_matrix() {
  if (pattern_of_rebuild_ == d_.rebuilds() && system_.ready()) return;
  const std::size_t n = d_.n_owned;
  std::vector<PetscInt> diag(n), off(n);
  for (std::size_t i = 0; i < n; ++i) {
    diag[i] = 1 + d_.partners_owned()[i];
    off[i] = d_.partners_other()[i];
  }
  const PetscInt first = system_.preallocate(static_cast<PetscInt>(n), diag, off, rank_sides(), true);
  pair_position_.clear();
  petsc_row_.assign(d_.x.size(), -1.0);
  for (std::size_t i = 0; i < n; ++i) petsc_row_[i] = static_cast<double>(first + system_.local_row(i));
  d_.forward(petsc_row_);
  set_matrix_pattern();
  pattern_of_rebuild_ = d_.rebuilds();
}

void ImplicitBdem::set_matrix_pattern() {
  // The blocks evaluate() inserts: those of every pair whose ends are both free (a contact candidate's too, zero while
  // it does not touch), a ghost's from its owner's side (its partner's row sent there, as the Hessian's ghost rows;
  // a free ghost's row takes its partner's column even when the partner is prescribed, with a zero block).
  const std::size_t n = d_.n_owned;
  auto free = [&](std::int32_t slot) { return d_.constraint[slot] < 0; };
  std::vector<double> outgoing(d_.outgoing_entries(), -1.0), incoming;
  std::vector<PetscInt> start(n + 1, 0);
  std::size_t next = 0;
  for (const Pair& p : d_.pairs) {
    const bool ghost = static_cast<std::size_t>(p.b) >= n, both = free(p.a) && free(p.b);
    if (ghost && free(p.b)) outgoing[next] = petsc_row_[p.a];
    next += ghost ? 1 : 0;
    if (!both) continue;
    ++start[p.a + 1];
    if (!ghost) ++start[p.b + 1];
  }
  d_.send_to_owners(outgoing, 1, incoming);
  for (std::size_t e = 0; e < incoming.size(); ++e)
    if (incoming[e] >= 0 && free(d_.incoming_slot(e))) ++start[d_.incoming_slot(e) + 1];
  for (std::size_t i = 0; i < n; ++i) start[i + 1] += start[i];
  std::vector<PetscInt> columns(static_cast<std::size_t>(start[n])), fill(start.begin(), start.end() - 1);
  auto add = [&](std::size_t row, double column) { columns[static_cast<std::size_t>(fill[row]++)] = static_cast<PetscInt>(column); };
  for (const Pair& p : d_.pairs) {
    if (!free(p.a) || !free(p.b)) continue;
    add(static_cast<std::size_t>(p.a), petsc_row_[p.b]);
    if (static_cast<std::size_t>(p.b) < n) add(static_cast<std::size_t>(p.b), petsc_row_[p.a]);
  }
  for (std::size_t e = 0; e < incoming.size(); ++e)
    if (incoming[e] >= 0 && free(d_.incoming_slot(e))) add(static_cast<std::size_t>(d_.incoming_slot(e)), incoming[e]);
  system_.set_pattern(start, columns);
}

std::vector<char> ImplicitBdem::rank_sides() {
  // Whether each owned particle has a pair partner on a lower or a higher rank (BlockSystem::preallocate): its own
  // pairs' ghosts, and the pairs other ranks own with it as their ghost.
  std::vector<char> sides(d_.n_owned, 0);
  if (d_.size == 1) return sides;
  std::vector<double> owner(d_.x.size(), static_cast<double>(d_.rank));
  d_.forward(owner);
  std::vector<double> mine(d_.outgoing_entries(), static_cast<double>(d_.rank)), received;
  d_.send_to_owners(mine, 1, received);
  auto mark = [&](std::size_t i, double rank) {
    if (rank != d_.rank) sides[i] |= rank < d_.rank ? solvers::BlockSystem::kLowerRank : solvers::BlockSystem::kHigherRank;
  };
  for (const Pair& p : d_.pairs)
    if (static_cast<std::size_t>(p.b) >= d_.n_owned) mark(static_cast<std::size_t>(p.a), owner[p.b]);
  for (std::size_t e = 0; e < received.size(); ++e) mark(static_cast<std::size_t>(d_.incoming_slot(e)), received[e]);
  return sides;
}

void ImplicitBdem::set_rigid_modes_if_multigrid() {
  if (!system_.multigrid()) return;
  // About the centroid, so the rotation modes are not dominated by a translation.
  const std::size_t n = d_.n_owned;
  double local[4] = {0, 0, 0, static_cast<double>(n)}, global[4];
  for (std::size_t i = 0; i < n; ++i)
    for (int a = 0; a < 3; ++a) local[a] += d_.x[i][a];
  MPI_Allreduce(local, global, 4, MPI_DOUBLE, MPI_SUM, d_.comm);
  const Eigen::Vector3d centre = Eigen::Vector3d(global[0], global[1], global[2]) / std::max(1.0, global[3]);
  rigid_modes_.resize(6 * 6 * n);
  for (std::size_t i = 0; i < n; ++i) {
    const Eigen::Matrix<double, 6, 6> m = physics::rigid_modes(d_.x[i], d_.q[i], centre);
    for (std::size_t k = 0; k < 6; ++k)
      for (int c = 0; c < 6; ++c)  // in the scaled system's unknowns ŷ = D⁻¹ y
        rigid_modes_[(k * n + static_cast<std::size_t>(system_.local_row(i))) * 6 + c] =
            m(c, static_cast<Eigen::Index>(k)) / scale_[i][c];
  }
  system_.set_near_nullspace(rigid_modes_, 6);
}

// The Newton system is solved in the units of the convergence test, D A D ŷ = −D g with y = D ŷ and
// D = diag(h²/(m r) I3, h²/(1.6 m r²) I3) per particle (residual()), so that CG's relative residual measures
// what the Newton iterations are judged by (unscaled, a torque weighs 1/(1.6 r) times less in CG's norm than in
// the test). Block Jacobi, IC(0) and D-ILU iterates are the same either way; only where CG stops moves: 3-7 %
// fewer Newton iterations with IC(0) on the small drops, drape and three-point bending, none with D-ILU (whose
// preconditioned norm does not depend on the scaling).
Eigen::Matrix<double, 6, 1> ImplicitBdem::convergence_scale(std::size_t slot) const {
  const double h2 = h_ * h_, m = d_.mass[slot], r = d_.radius[slot];
  Eigen::Matrix<double, 6, 1> d;
  d << Eigen::Vector3d::Constant(h2 / (m * r)), Eigen::Vector3d::Constant(h2 / (1.6 * m * r * r));
  return d;
}

void ImplicitBdem::compute_scale() {
  // Masses and radii do not change: only a new step length or a rebuild's new ghosts make new scales.
  if (scale_step_ == h_ && scale_rebuild_ == d_.rebuilds() && scale_.size() == d_.x.size()) return;
  scale_.resize(d_.x.size());
  for (std::size_t i = 0; i < d_.x.size(); ++i) scale_[i] = convergence_scale(i);
  scale_step_ = h_;
  scale_rebuild_ = d_.rebuilds();
}

void ImplicitBdem::locate_pair_blocks() {
  // Known once the matrix pattern is set (its first assembly); until then every block takes add_block().
  const std::size_t n = d_.n_owned;
  pair_position_.assign(d_.pairs.size(), -1);
  bool set = false;
  for (std::size_t k = 0; k < d_.pairs.size(); ++k) {
    const Pair& p = d_.pairs[k];
    if (static_cast<std::size_t>(p.a) >= n || static_cast<std::size_t>(p.b) >= n) continue;
    const auto ra = static_cast<PetscInt>(petsc_row_[p.a]), rb = static_cast<PetscInt>(petsc_row_[p.b]);
    pair_position_[k] = system_.local_position(std::min(ra, rb), std::max(ra, rb));
    set = set || pair_position_[k] >= 0;
  }
  if (!set) pair_position_.clear();  // pattern not set yet (or no owned pair at all): try at the next assembly
}

double ImplicitBdem::evaluate(Want want) {
  const std::size_t np = d_.pairs.size(), n = d_.n_owned;
  const double h = h_;
  pair_energy_.resize(np);
  particle_energy_.resize(n);
  const bool psd = scene_.implicit.hessian == "projected";
  const bool gauss_newton = scene_.implicit.hessian == "gauss_newton";
  const bool midpoint = scene_.implicit.form == "midpoint";
  // V is evaluated at x_e: the iterate (backward Euler) or the midpoint (x + x_n)/2, quaternions averaged as
  // 4-vectors; s = dx_e/dx scales its gradient (s) and Hessian (s²) with respect to the iterate.
  const double s = midpoint ? 0.5 : 1.0;
  if (midpoint) {
    p_mid_.resize(d_.x.size());
    q_mid_.resize(d_.x.size());
    for (std::size_t i = 0; i < d_.x.size(); ++i) {
      p_mid_[i] = 0.5 * (d_.x[i] + p_n_[i]);
      q_mid_[i] = 0.5 * (d_.q[i] + q_n_[i]);
    }
  }
  const std::vector<Eigen::Vector3d>& xe = midpoint ? p_mid_ : d_.x;
  const std::vector<Eigen::Vector4d>& qe = midpoint ? q_mid_ : d_.q;
  // Contacts (pairs and planes) are seen at the iterate in every form, their terms backward Euler's: a penalty
  // evaluated at the midpoint pushes a pair apart by what it overlapped half a step ago, and fragments jostling
  // in contact gained energy at every step (plate_drop_small: 3.4 J to 578 J over 25 ms at 10 T).
  const std::vector<Eigen::Vector3d>& xc = d_.x;
  std::vector<double>& c = d_.pair_contributions();
  // Which contacts touch, recorded at an assembly and compared at a gradient evaluation: a lagged Hessian is
  // kept only while the set is the same (a contact that opens or closes changes the matrix outright).
  // A contact refresh (implicit.contact_refresh): the bonds and the inertia keep their blocks, the contacts' blocks
  // (the matrix's replaceable part, BlockSystem::begin_replacement) are given again at this state. The matrix is
  // then, to the bit, the one the kept part's state and this one assemble, whatever refreshes came between: a
  // restart can assemble it again, and a refreshed matrix may carry to the next step.
  const bool refresh = want == Want::Hessian && contacts_only_;
  // An assembly at a state whose gradient was just evaluated takes only the Hessian: every pair_energy_, c and
  // gradient_ is current (a refresh then touches only the contacts' blocks, a full assembly all blocks).
  const bool gradient_kept = want == Want::Hessian && gradient_at_state_;
  if (want == Want::Hessian) {
    contact_active_.assign(np, 0);
    planes_active_.assign(n, 0);
    compute_scale();
  }
  long contacts_changed = contact_active_.size() == np && planes_active_.size() == n ? 0 : 1;
  // Every pair's gradient terms are evaluated (c), and with them the scale of Φ's round-off: Σ over Φ's terms of
  // |x|·|∂Φ_k/∂x| (+ |∂Φ_k/∂θ|), what round-off in x does to Φ.
  const bool track_noise = want != Want::Energy && !gradient_kept;
  double noise = 0;
  {
    ScopedPhase timer(timers_, Phase::Pairs);
    if (want == Want::Hessian && !refresh) {
      system_.zero();
      // (Not zeroed: a full assembly writes every contact pair's entry, and only refreshes read them.)
      pair_contact_hessian_.resize(np);
      pair_contact_held_.resize(np);
    }
    if (refresh) system_.begin_replacement();
    if (want == Want::Hessian && pair_position_.size() != np) locate_pair_blocks();
    if (want == Want::Hessian) ghost_rows_.resize(d_.outgoing_entries() * kGhostRowWidth);
    // The pair at hand's ghost row, when its b is a ghost: the outgoing entries are those pairs, in pair order.
    std::size_t next_ghost_row = 0;
    double* ghost_row = nullptr;
    // A pair's scaled blocks (column-major; ab is block (a, b), block (b, a) its transpose). Owned rows go straight
    // into the matrix; a ghost's row (blocks b-a and b-b) travels to its owner with the column of a, and the owner
    // inserts it (after the loop), so no value takes PETSc's off-process path. Dirichlet rows and columns drop out.
    // A contact's blocks are the matrix's replaceable part: its diagonal ones given when non-zero (`diagonal`), its
    // off-diagonal one where it `changed` (always in a full assembly, which puts every candidate's block in).
    struct Kind {
      bool contact = false, changed = true, diagonal = true;
    };
    auto insert = [&](std::size_t k, const Pair& p, const physics::BondBlocks& blocks, Kind kind) {
      const bool free_a = d_.constraint[p.a] < 0, free_b = d_.constraint[p.b] < 0;
      const auto ra = static_cast<PetscInt>(petsc_row_[p.a]), rb = static_cast<PetscInt>(petsc_row_[p.b]);
      auto diagonal = [&](PetscInt r, const Block6& b) {  // symmetric: row- and column-major alike
        if (!kind.contact) system_.add_block(r, r, b.data());
        else if (kind.diagonal) system_.add_replaceable(r, r, b.data());
      };
      auto off_diagonal = [&](PetscInt r, PetscInt c, const double* b) {
        if (!kind.contact) system_.add_block(r, c, b);
        else system_.add_replaceable(r, c, b, kind.changed);
      };
      if (free_a) diagonal(ra, blocks.aa);
      if (static_cast<std::size_t>(p.b) >= n) {
        if (!free_b) return;
        if (free_a) std::copy_n(blocks.ab.data(), 36, ghost_row);  // block (b, a) row by row = ab column by column
        std::copy_n(blocks.bb.data(), 36, ghost_row + 36);
        ghost_row[72] = ra;
        ghost_row[73] = kind.contact ? kGhostContact | (kind.changed ? kGhostChanged : 0) |
                                           (kind.diagonal ? kGhostDiagonal : 0)
                                     : 0;
        if (free_a) {
          const Block6 ab = blocks.ab;  // row-major
          off_diagonal(ra, rb, ab.data());
        }
        return;
      }
      if (free_b) diagonal(rb, blocks.bb);
      if (!free_a || !free_b) return;
      if (!pair_position_.empty() && pair_position_[k] >= 0) {
        // Only the upper block goes in (the lower one is its transpose, which SBAIJ does not keep).
        const bool column_major = ra < rb;  // else block (b, a) row by row
        if (!kind.contact) system_.add_at(pair_position_[k], blocks.ab.data(), column_major);
        else system_.add_replaceable_at(pair_position_[k], blocks.ab.data(), column_major, kind.changed);
        return;
      }
      const Block6 ab = blocks.ab;  // row-major
      off_diagonal(ra, rb, ab.data());
      off_diagonal(rb, ra, blocks.ab.data());
    };
    auto scale_of = [&](std::int32_t slot) { return physics::BlockScale{scale_[slot][0], scale_[slot][3]}; };
    // S_a H S_b of the 12×12 blocks of a Hessian that is not a Gauss–Newton one (implicit.hessian).
    auto scaled_blocks = [&](const Pair& p, const physics::Hessian12& H, physics::BondBlocks& out) {
      out.aa = scale_[p.a].asDiagonal() * H.topLeftCorner<6, 6>() * scale_[p.a].asDiagonal();
      out.ab = scale_[p.a].asDiagonal() * H.topRightCorner<6, 6>() * scale_[p.b].asDiagonal();
      out.bb = scale_[p.b].asDiagonal() * H.bottomRightCorner<6, 6>() * scale_[p.b].asDiagonal();
    };
    // Σ over the pair terms of |x|·|∂Φ_k/∂x| (+ |∂Φ_k/∂θ|), each pair's taken at the next pair, while its terms are
    // still in cache (the bound on Φ's round-off, below).
    auto noise_of = [&](std::size_t k) {
      auto l1 = [&](int first) { return Eigen::Map<const Eigen::Vector3d>(&c[12 * k + first]).lpNorm<1>(); };
      return xe[d_.pairs[k].a].norm() * l1(0) + l1(3) + xe[d_.pairs[k].b].norm() * l1(6) + l1(9);
    };
    physics::BondBlocks blocks;
    for (std::size_t k = 0; k < np; ++k) {
      if (track_noise && k > 0) noise += noise_of(k - 1);
      const Pair& p = d_.pairs[k];
      double* g = &c[12 * k];
      if (want == Want::Hessian && static_cast<std::size_t>(p.b) >= n) {  // nothing to insert unless set below
        ghost_row = &ghost_rows_[next_ghost_row++ * kGhostRowWidth];
        std::fill_n(ghost_row, 72, 0.0);
        ghost_row[72] = -1;
        ghost_row[73] = 0;
      }
      if (p.bond >= 0) {
        if (refresh && gradient_kept) continue;  // c and pair_energy_ already hold this state's bond terms
        const physics::BondRest& rest = d_.bonds[p.bond].rest;
        if (want == Want::Energy) {
          pair_energy_[k] = physics::bond_energy(xe[p.a], qe[p.a], xe[p.b], qe[p.b], rest);
          continue;
        }
        const physics::ReducedAt at{d_.q[p.a], d_.q[p.b], s};  // derivatives along the iterate
        if (want == Want::Gradient || refresh) {
          physics::Reduced12 gradient;
          physics::bond_reduced_gradient(xe[p.a], qe[p.a], xe[p.b], qe[p.b], rest, at, pair_energy_[k], gradient);
          std::copy_n(gradient.data(), 12, g);
          continue;
        }
        if (gauss_newton && gradient_kept) {
          physics::gauss_newton_blocks(physics::detail::bond_geometry(xe[p.a], qe[p.a], xe[p.b], qe[p.b]), qe[p.a],
                                       rest, at, scale_of(p.a), scale_of(p.b), blocks);
        } else if (gauss_newton) {
          physics::Reduced12 gradient;
          pair_energy_[k] = physics::bond_gauss_newton(xe[p.a], qe[p.a], xe[p.b], qe[p.b], rest, at, scale_of(p.a),
                                                       scale_of(p.b), gradient, blocks);
          std::copy_n(gradient.data(), 12, g);
        } else {
          const physics::BondReduced br = physics::bond_reduced(xe[p.a], qe[p.a], xe[p.b], qe[p.b], rest, psd, at);
          pair_energy_[k] = br.energy;
          std::copy_n(br.gradient.data(), 12, g);
          scaled_blocks(p, br.hessian, blocks);
        }
        insert(k, p, blocks, Kind{});
        continue;
      }
      physics::PairReduced6 cp =
          predicted_normals_ ? physics::contact_penalty_along(xc[p.a], d_.radius[p.a], xc[p.b], d_.radius[p.b],
                                                              contact_k_, pair_normal_[k])
                             : physics::contact_penalty(xc[p.a], d_.radius[p.a], xc[p.b], d_.radius[p.b], contact_k_);
      // An active-set round: the branch the Newton step reaches (only its Hessian is read below).
      if (refresh && gradient_kept && !contact_branch_.empty() && contact_branch_[k] != 0)
        cp = contact_branch_[k] == 1
                 ? physics::detail::pair_penalty(0.0, branch_normal(k, xc[p.a], xc[p.b]), contact_k_)
                 : physics::detail::pair_apart();
      if (want == Want::Hessian) contact_active_[k] = cp.active;
      else if (!contacts_changed && contact_active_[k] != static_cast<char>(cp.active)) contacts_changed = 1;
      if (!gradient_kept) {
        pair_energy_[k] = cp.energy;
        if (want == Want::Energy) continue;
        std::fill_n(g, 12, 0.0);
        for (int a = 0; a < 3; ++a) {
          g[a] = cp.gradient[a];
          g[6 + a] = cp.gradient[3 + a];
        }
      }
      // Inactive candidates insert zero blocks too: the first assembly drops slots never set, and the
      // pattern must hold every candidate until the next rebuild.
      if (want == Want::Hessian) {
        // The pair's Hessian is [H −H; −H H] (manifold_contact.hpp), given whole; a refresh sets the off-diagonal
        // block only where H changed, to the bit, since it was put in.
        // (Most candidates touch neither now nor before: their stored Hessian is not read.)
        const Eigen::Matrix3d h_now = cp.hessian.topLeftCorner<3, 3>();
        const bool held = refresh && pair_contact_held_[k];
        Kind kind{true, !refresh, !h_now.isZero(0.0)};
        if (kind.diagonal || held) {
          kind.changed = kind.changed || !held || h_now != pair_contact_hessian_[k];
          pair_contact_hessian_[k] = h_now;
        }
        pair_contact_held_[k] = kind.diagonal;
        if (!kind.changed && !kind.diagonal) continue;
        const physics::BlockScale sa = scale_of(p.a), sb = scale_of(p.b);
        blocks.aa.setZero();
        blocks.ab.setZero();
        blocks.bb.setZero();
        blocks.aa.topLeftCorner<3, 3>() = (sa.p * sa.p) * h_now;
        blocks.ab.topLeftCorner<3, 3>() = (-sa.p * sb.p) * h_now;
        blocks.bb.topLeftCorner<3, 3>() = (sb.p * sb.p) * h_now;
        insert(k, p, blocks, kind);
      }
    }
    if (track_noise && np > 0) noise += noise_of(np - 1);
  }
  if (track_noise) {
    d_.sum_pairs(gp_, gy_);
    if (midpoint) {  // the bonds' part alone, for the next predictor (contacts have no moment: gy_ is the bonds')
      for (std::size_t k = 0; k < np; ++k)
        if (d_.pairs[k].bond < 0) std::fill_n(&c[12 * k], 12, 0.0);
      d_.sum_pairs(bond_gp_, bond_gy_);
    }
  }
  if (want == Want::Hessian) {
    d_.send_to_owners(ghost_rows_, kGhostRowWidth, ghost_rows_received_);
    ScopedPhase timer(timers_, Phase::Pairs);
    for (std::size_t e = 0; e * kGhostRowWidth < ghost_rows_received_.size(); ++e) {
      const double* in = &ghost_rows_received_[e * kGhostRowWidth];
      const std::int32_t row = d_.incoming_slot(e);
      if (in[72] < 0 || d_.constraint[row] >= 0) continue;  // partner's column dropped (Dirichlet)
      const auto r = static_cast<PetscInt>(petsc_row_[row]), column = static_cast<PetscInt>(in[72]);
      const int kind = static_cast<int>(in[73]);
      if (!(kind & kGhostContact)) {
        system_.add_block(r, column, in);
        system_.add_block(r, r, in + 36);
        continue;
      }
      system_.add_replaceable(r, column, in, (kind & kGhostChanged) != 0);
      if (kind & kGhostDiagonal) system_.add_replaceable(r, r, in + 36);
    }
  }
  ScopedPhase timer(timers_, Phase::Pairs);
  gradient_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (d_.constraint[i] >= 0) {  // prescribed: fixed during the solve, zero gradient, identity block
      particle_energy_[i] = 0;
      gradient_[i].setZero();
      if (want == Want::Hessian && !refresh) {
        const Block6 one = Block6::Identity();
        system_.add_block(static_cast<PetscInt>(petsc_row_[i]), static_cast<PetscInt>(petsc_row_[i]), one.data());
      }
      continue;
    }
    const Eigen::Vector3d& p = d_.x[i];
    const double m = d_.mass[i], r = d_.radius[i];
    double e = -m * scene_.gravity.dot(xe[i]);
    Vec6 g = Vec6::Zero();
    Eigen::Matrix3d plane_hessian = Eigen::Matrix3d::Zero();
    int planes = 0;
    for (std::size_t o = 0; o < scene_.obstacles.size(); ++o)
      geometry::for_each_plane(scene_.obstacles[o], [&](const Eigen::Vector3d& point, const Eigen::Vector3d& normal) {
        const physics::PlaneReduced3 pl = physics::plane_penalty(xc[i], r, point, normal, contact_k_);
        if (!pl.active) return;
        ++planes;
        e += pl.energy;
        g.head<3>() += pl.gradient;
        plane_hessian += pl.hessian;
      });
    if (want == Want::Hessian) planes_active_[i] = planes;
    else if (!contacts_changed && planes_active_[i] != planes) contacts_changed = 1;
    // The diagonal block in the scaled system's units: the inertia's kept, the planes' replaceable (as the pairs').
    auto add_diagonal = [&](const Vec6& inertia_diagonal) {
      const auto row = static_cast<PetscInt>(petsc_row_[i]);
      if (!refresh) {
        const Block6 block = scale_[i].cwiseProduct(scale_[i]).cwiseProduct(inertia_diagonal).asDiagonal();
        system_.add_block(row, row, block.data());
      }
      if (plane_hessian.isZero(0.0)) return;
      Block6 block = Block6::Zero();
      block.topLeftCorner<3, 3>() = scale_[i].head<3>().asDiagonal() * plane_hessian * scale_[i].head<3>().asDiagonal();
      system_.add_replaceable(row, row, block.data());
    };
    if (gradient_kept) {  // only the Hessian
      add_diagonal(refresh ? Vec6::Zero().eval()
                           : Vec6(physics::inertia(p, d_.q[i], p_hat_[i], q_hat_[i], m, r, h).hessian_diag));
      continue;
    }
    if (want == Want::Energy) {
      particle_energy_[i] = e + physics::inertia_energy(p, d_.q[i], p_hat_[i], q_hat_[i], m, r, h);
      continue;
    }
    const physics::InertiaReduced in = physics::inertia(p, d_.q[i], p_hat_[i], q_hat_[i], m, r, h);
    particle_energy_[i] = e + in.energy;
    noise += xe[i].norm() * (g.head<3>().lpNorm<1>() + in.gradient.head<3>().lpNorm<1>() +
                             s * m * scene_.gravity.lpNorm<1>()) + in.gradient.tail<3>().lpNorm<1>();
    if (midpoint) {  // the bonds' and gravity's ∇V at the midpoint (s undone), for the next step's predictor
      vgrad_p_[i] = 2.0 * (bond_gp_[i] - s * m * scene_.gravity);
      vgrad_y_[i] = 2.0 * gy_[i];
    }
    g += in.gradient;
    g.head<3>() += gp_[i] - s * m * scene_.gravity;
    g.tail<3>() += gy_[i];
    gradient_[i] = g;
    if (want == Want::Hessian) add_diagonal(in.hessian_diag);
  }
  if (want == Want::Hessian) {
    system_.assemble();
    if (!refresh) ++hessian_assemblies_;
    else if (contact_branch_.empty()) ++contact_refreshes_;  // (a round counts as active_set_rounds)
    matrix_mixed_ = refresh;
    // What a checkpoint needs to assemble this matrix again (restore_matrix): the state of its full assembly, which a
    // refresh keeps (the refresh at the carried step's start gives the contacts again).
    matrix_state_.resize(kMatrixState * n);
    for (std::size_t i = 0; i < n && !refresh; ++i) {
      double* m = &matrix_state_[kMatrixState * i];
      Eigen::Map<Eigen::Vector3d>(m + 0) = d_.x[i];
      Eigen::Map<Eigen::Vector4d>(m + 3) = d_.q[i];
      Eigen::Map<Eigen::Vector4d>(m + 7) = q_hat_[i];
      Eigen::Map<Eigen::Vector3d>(m + 11) = midpoint ? p_n_[i] : Eigen::Vector3d::Zero();
      Eigen::Map<Eigen::Vector4d>(m + 14) = midpoint ? q_n_[i] : Eigen::Vector4d::Zero();
      Eigen::Map<Eigen::Vector3d>(m + 18) = predicted_normals_ ? normal_positions_[i] : Eigen::Vector3d::Zero();
    }
  }
  contacts_changed_ = contacts_changed;
  if (contacts_changed) ++contact_set_changes_;
  if (track_noise) energy_noise_ = noise;
  double local = 0, total = 0;
  for (double e : pair_energy_) local += e;
  for (double e : particle_energy_) local += e;
  MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, d_.comm);
  return total;
}

double ImplicitBdem::energy_change(Want want) {
  evaluate(want);
  // Element by element: the difference of two large global sums would cancel at tight tolerances.
  double local = 0, total = 0;
  for (std::size_t k = 0; k < pair_energy_.size(); ++k) local += pair_energy_[k] - pair_energy_base_[k];
  for (std::size_t i = 0; i < particle_energy_.size(); ++i) local += particle_energy_[i] - particle_energy_base_[i];
  MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, d_.comm);
  return total;
}

void ImplicitBdem::retract(double alpha) {
  for (std::size_t i = 0; i < d_.n_owned; ++i) {
    if (d_.constraint[i] >= 0) continue;
    d_.x[i] = p_base_[i] + alpha * direction_[i].head<3>();
    d_.q[i] = quat::exp_body(q_base_[i], alpha * direction_[i].tail<3>());
  }
  d_.refresh_ghosts();
}

// A full Newton step whose energy fell much less than its quadratic model predicts overestimated the
// curvature along its direction (the per-pair PSD projection drops a squeezed contact's negative sideways
// curvature). CG from a zero guess satisfies dᵀHd = −gᵀd, so the model's curvature along d is −slope; the
// parabola through Φ(0), its slope and Φ(1) gives the line's own curvature, and its minimiser is tried.
void ImplicitBdem::try_extrapolation(double slope, double change, double alpha_cap, double& alpha) {
  const double curvature = 2.0 * (change - slope);
  if (!(curvature < kExtrapolationRatio * -slope)) return;
  const double target = std::min({alpha_cap, kMaxExtrapolation, curvature > 0 ? -slope / curvature : 1e300});
  if (target < 1.5) return;
  retract(target);
  const double extrapolated = energy_change();
  ++extrapolations_tried_;
  if (extrapolated < change) {
    alpha = target;
    ++extrapolations_;
    return;
  }
  retract(1.0);
  energy_change();  // the accepted state's energies and contact sets
}

double ImplicitBdem::residual() {
  // The step each particle's gradient asks for, relative to its radius: h² M⁻¹ g / r (rotations: half-angles).
  // (Squared norms, and one square root at the end: this runs after every evaluation.)
  compute_scale();
  double local = 0, global = 0;
  for (std::size_t i = 0; i < d_.n_owned; ++i) {
    if (d_.constraint[i] >= 0) continue;
    const Eigen::Matrix<double, 6, 1> step = scale_[i].cwiseProduct(gradient_[i]);
    local = std::max({local, step.head<3>().squaredNorm(), step.tail<3>().squaredNorm()});
  }
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, d_.comm);
  return std::sqrt(global);
}

void ImplicitBdem::set_direction(std::span<const double> y) {
  for (std::size_t i = 0; i < d_.n_owned; ++i) {
    const std::size_t row = static_cast<std::size_t>(system_.local_row(i));
    for (int k = 0; k < 6; ++k) direction_[i][k] = scale_[i][k] * y[6 * row + k];
  }
}

bool ImplicitBdem::minimise() {
  const double h = h_;
  const std::size_t n = d_.n_owned;
  const bool newton = scene_.implicit.optimizer == "newton";
  const bool midpoint = scene_.implicit.form == "midpoint";
  direction_.resize(n);
  std::vector<double> rhs(6 * n), y(6 * n);
  int iterations = 0;
  bool converged = false;
  bool likely_converged = false;  // the last Newton step predicts a residual below the tolerance
  bool block_jacobi_this_step = start_on_block_jacobi_;
  hessian_current_ = false;  // bonds may have broken since the last assembly
  const bool carry = matrix_carries(h);
  bool full_step = false, same_contacts = false;
  // The line search's full step was evaluated with its gradient (not only its energy), and the state has not
  // moved since: the next iteration's gradient evaluation is skipped.
  bool gradient_at_state = false;
  bool assembled_in_step = false;  // the matrix was assembled in full during this minimisation, on these pairs
  double previous_res = 0;
  for (; iterations < scene_.implicit.max_iterations; ++iterations) {
    // A lagged Hessian: the matrix of an earlier iteration is kept while Newton still contracts fast with it and
    // no contact opened or closed (that changes the matrix outright). Within a step the bonded iterates move
    // little, so on the bonded scenes it costs no Newton iterations and saves 60-80 % of the assemblies.
    const double lag = scene_.implicit.hessian_lag_contraction, tolerance = scene_.implicit.tolerance;
    // The first iteration may keep the matrix of the last step (matrix_carries): a bonded step's Hessian hardly
    // differs from the last one's, and on the paper-size cloth that skipped 13 of 16 assemblies and factorisations
    // for 4 % more Krylov iterations. Its contacts are brought up to date (a contact refresh) where the
    // preconditioner follows the matrix alone; otherwise it is kept only if no contact opened or closed.
    const bool carried = carry && iterations == 0;
    const bool refresh_carried = carried && refreshes_carried_contacts();
    const bool lag_candidate = newton && lag > 0 && ((hessian_current_ && full_step && same_contacts) || carried);
    // A state the last step predicts to be converged, or one that may keep the lagged Hessian, is evaluated
    // on its gradient first: the Hessian, the costly part of an evaluation, is assembled only if needed.
    const bool gradient_first = likely_converged || lag_candidate;
    double res = 0;
    bool lagged = false;
    if (gradient_first) {
      if (!gradient_at_state) evaluate(Want::Gradient);
      gradient_at_state = true;  // an assembly here needs only the Hessian
      res = residual();
      if (carried) {
        long changed = contacts_changed_;
        MPI_Allreduce(MPI_IN_PLACE, &changed, 1, MPI_LONG, MPI_MAX, d_.comm);
        lagged = res >= tolerance && (changed == 0 || refresh_carried);
        hessian_current_ = lagged;  // from here on judged as a lagged Hessian of this step
        if (lagged) ++carried_hessians_;
        if (lagged && refresh_carried) {
          contacts_only_ = gradient_at_state_ = true;
          evaluate(Want::Hessian);
          contacts_only_ = gradient_at_state_ = false;
        }
      } else {
        lagged = lag_candidate && res >= tolerance && res < lag * previous_res;
      }
    }
    if (!gradient_first || (res >= tolerance && !lagged)) {
      // After this step's first assembly, later ones may update only the contacts (implicit.contact_refresh).
      contacts_only_ = newton && scene_.implicit.contact_refresh && assembled_in_step;
      gradient_at_state_ = gradient_at_state;
      evaluate(newton ? Want::Hessian : Want::Gradient);
      contacts_only_ = gradient_at_state_ = false;
      assembled_in_step = newton;
      res = residual();
      hessian_current_ = newton;
      matrix_assembled_ = newton;
      matrix_h_ = h;
      matrix_rebuild_ = d_.rebuilds();
      matrix_breaks_ = breaks_;
      preconditioner_of_matrix_ = false;
    }
    if (lagged) ++lagged_hessians_;
    previous_res = res;
    if (monitor_ && d_.rank == 0)
      std::fprintf(stderr, "  newton %2d  residual %.3e%s%s\n", iterations, res,
                   likely_converged ? " (predicted)" : "", lagged ? " (lagged Hessian)" : "");
    likely_converged = false;
    if (res < tolerance) {
      converged = true;
      break;
    }
    // Search direction: Newton on the reduced system (notes eq. 28–31), or inertia-scaled steepest descent.
    const double h2 = h * h;
    auto descent = [&]() {
      for (std::size_t i = 0; i < n; ++i) {
        const double m = d_.mass[i], r = d_.radius[i];
        direction_[i].head<3>() = -gradient_[i].head<3>() * (h2 / m);
        direction_[i].tail<3>() = -gradient_[i].tail<3>() * (h2 / (1.6 * m * r * r));
      }
    };
    if (newton) {
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t row = static_cast<std::size_t>(system_.local_row(i));  // (the system's row order)
        for (int k = 0; k < 6; ++k) rhs[6 * row + k] = -scale_[i][k] * gradient_[i][k];  // [ERRATUM] Alg. 2 line 7 prints +grad
      }
      ScopedPhase timer(timers_, Phase::Solve);
      // The preconditioner is built at the step's first iteration and kept while the lagged one still
      // works (CG needing at most twice its fresh count, plus a margin): the matrix changes little
      // between Newton iterations, and the set-up (a factorisation, a multigrid hierarchy) is the costly part.
      // (A neighbour rebuild mid-step made a new matrix, which has none yet.)
      // A carried matrix keeps the preconditioner built from it; not a multigrid's, whose near-nullspace was taken
      // at the state of its set-up, which a restart does not have.
      const bool carried_pc = carried && lagged && preconditioner_of_matrix_ && !system_.multigrid();
      // A contact that opened or closed since the preconditioner was built (counted from this step's first
      // evaluation on, so that a restart takes the same path) changes the matrix outright: on the broken
      // beam_stretch, lagged D-ILU solves spiked to 105-480 CG iterations against 12-50 as contacts closed;
      // rebuilding then took the run from 8,259 CG iterations to 4,418. Not a multigrid, whose set-up costs more
      // than the iterations it saves (chocolate_drop_small with GAMG: 66 G instructions against 45 G).
      if (iterations == 0) preconditioner_contact_changes_ = contact_set_changes_;
      int contacts_moved =
          !system_.multigrid() && iterations > 0 && contact_set_changes_ != preconditioner_contact_changes_ ? 1 : 0;
      MPI_Allreduce(MPI_IN_PLACE, &contacts_moved, 1, MPI_INT, MPI_MAX, d_.comm);
      bool refresh = !scene_.implicit.reuse_preconditioner || (iterations == 0 && !carried_pc) ||
                     !system_.has_preconditioner() || contacts_moved ||
                     (iterations > 0 && last_krylov_ > 2 * fresh_krylov_ + 10);
      if (refresh) set_rigid_modes_if_multigrid();
      // Forcing term (notes eq. 31, on the scaled residual), capped; but never tighter than what reaches the
      // tolerance: a full step leaves about rtol·res, so the last solve of a step needs only
      // rtol = kToleranceMargin·tolerance/res, however far that is above the cap.
      auto forcing = [&](double cap) {
        return std::max(std::min(cap, std::sqrt(res)), kToleranceMargin * tolerance / res);
      };
      double rtol = forcing(kForcingCap);
      // On a contact-dominated matrix IC(0) meets pivots that are not positive definite. The default
      // preconditioner then shifts its diagonal to stay SPD, which works for that solve; but shifted and lagged
      // it took 20-24 CG iterations per Newton iteration on chocolate_drop, against 15 with point-block Jacobi
      // (6x6 diagonal blocks, rebuilt at every iteration, SPD whatever the matrix), and fewer again with the
      // fallback now, block symmetric Gauss–Seidel (solve_fallback). So after a shifted
      // factorisation or a CG breakdown with another preconditioner, the step's later iterations, whose matrices
      // differ little, go to the fallback at once, as does a solve whose factorisation no shift could make
      // SPD on some rank (a zero or non-finite diagonal entry), every rank alike. (D-ILU never shifts; sending its slow solves there as
      // well cost more than it saved once its preconditioner was rebuilt on contact changes, see docs/implicit_bdem.md.)
      solvers::BlockSystem::Result result{};
      const long fallbacks_before = fallback_solves_;
      auto solve_fallback = [&]() {
        rtol = forcing(kFallbackForcingCap);
        result = system_.solve_fallback(rhs, y, rtol);
        krylov_iterations_ += result.iterations;
        ++fallback_solves_;
        block_jacobi_this_step = true;
      };
      if (block_jacobi_this_step) {
        solve_fallback();
      } else {
        result = system_.solve(rhs, y, rtol, refresh);
        krylov_iterations_ += result.iterations;
        // A lagged preconditioner that failed (e.g. a multigrid smoother's stale eigenvalue bounds after
        // contacts changed) is rebuilt and the system solved again.
        if (!refresh && result.reason < 0) {
          set_rigid_modes_if_multigrid();
          refresh = true;
          result = system_.solve(rhs, y, rtol, refresh);
          krylov_iterations_ += result.iterations;
        }
        if (refresh) factor_tried_ = true;
        if (result.preconditioner_shifted || result.reason == KSP_DIVERGED_PC_FAILED) factor_shifted_ = true;
        if (result.reason < 0 && result.reason != KSP_DIVERGED_ITS) solve_fallback();
        else if (result.preconditioner_shifted) block_jacobi_this_step = true;
      }
      // Inexact Newton: a full step leaves about rtol of the residual (2x margin for the nonlinearity).
      likely_converged = result.reason > 0 && 2.0 * rtol * res < tolerance;
      last_krylov_ = result.iterations;
      if (refresh || iterations == 0) fresh_krylov_ = result.iterations;  // (a carried one: this step's reference)
      if (refresh) preconditioner_of_matrix_ = true;
      if (refresh) preconditioner_contact_changes_ = contact_set_changes_;
      if (monitor_ && d_.rank == 0) {
        const char* how = fallback_solves_ > fallbacks_before ? " (fallback)"
                          : refresh                           ? " (fresh preconditioner)"
                                                              : "";
        std::fprintf(stderr, "  krylov %d%s\n", static_cast<int>(result.iterations), how);
      }
      set_direction(y);
      // Semismooth active-set rounds (implicit_active_set.cpp): the contacts this step closes or opens switch
      // branch in the model, which is solved again from the same iterate.
      for (int round = 0; round < scene_.implicit.active_set_rounds; ++round)
        if (!active_set_round(rhs, y, rtol, res, block_jacobi_this_step, likely_converged)) break;
    } else {
      descent();
    }
    double local[3] = {0, 0, 0}, global[3];  // slope, energy round-off scale, largest translation
    for (std::size_t i = 0; i < n; ++i) {
      if (d_.constraint[i] >= 0) direction_[i].setZero();
      local[0] += gradient_[i].dot(direction_[i]);
      local[2] = std::max(local[2], direction_[i].head<3>().norm());
    }
    local[1] = energy_noise_;
    MPI_Allreduce(&local[0], &global[0], 2, MPI_DOUBLE, MPI_SUM, d_.comm);
    MPI_Allreduce(&local[2], &global[2], 1, MPI_DOUBLE, MPI_MAX, d_.comm);
    // Below this an energy change is round-off: near the minimiser the Armijo test then refuses a correct Newton
    // step (a chain at tolerance 1e-12 stalled at a residual of 1.4e-9 with steps of 2e-7 until the limit).
    const double noise = kEnergyRoundoff * global[1];
    bool cg_direction = newton;  // CG from a zero guess: its curvature along the direction is −slope
    if (!(global[0] < 0)) {  // an inexact solve that is not a descent direction: fall back to descent
      cg_direction = false;
      descent();
      local[0] = 0;
      for (std::size_t i = 0; i < n; ++i) local[0] += gradient_[i].dot(direction_[i]);
      MPI_Allreduce(&local[0], &global[0], 1, MPI_DOUBLE, MPI_SUM, d_.comm);
    }
    // Armijo backtracking along geodesics, every decision collective. A step moves no particle more than one
    // radius (notes §3 step-length cap); contacts it reaches beyond the Verlet lists enter at the rebuild that
    // follows the accepted step, before the next Newton iteration.
    p_base_.assign(d_.x.begin(), d_.x.begin() + static_cast<std::ptrdiff_t>(n));
    q_base_.assign(d_.q.begin(), d_.q.begin() + static_cast<std::ptrdiff_t>(n));
    pair_energy_base_ = pair_energy_;
    particle_energy_base_ = particle_energy_;
    const double alpha_cap = global[2] > 0 ? d_.r_max / global[2] : 1e300;
    double alpha = std::min(1.0, alpha_cap);
    bool accepted = false;
    // A full step the next iteration will take only the gradient of (a predicted convergence, or a lagged
    // Hessian) is evaluated with it at once: on the bonded scenes nearly every full step is accepted, and one
    // pass over the pairs replaces two. (A refused one wasted the gradient's extra over the energy.)
    const bool gradient_next =
        alpha == 1.0 && (likely_converged || (newton && scene_.implicit.hessian_lag_contraction > 0 && hessian_current_));
    {
      ScopedPhase timer(timers_, Phase::LineSearch);
      double change = 0;
      for (int ls = 0; ls < kMaxBacktracks && !accepted; ++ls, alpha *= 0.5) {
        retract(alpha);
        change = energy_change(ls == 0 && gradient_next ? Want::Gradient : Want::Energy);
        accepted = change <= kArmijo * alpha * global[0] || (-alpha * global[0] < noise && change < noise);
        if (accepted) break;
      }
      gradient_at_state = accepted && alpha == 1.0 && gradient_next;
      if (accepted && alpha == 1.0 && cg_direction && scene_.implicit.line_search_extrapolation) {
        const long tried = extrapolations_tried_;
        try_extrapolation(global[0], change, alpha_cap, alpha);
        if (extrapolations_tried_ != tried) gradient_at_state = false;  // its trials evaluated other states
      }
    }
    if (monitor_ && d_.rank == 0) std::fprintf(stderr, "  alpha %.3g\n", alpha);
    likely_converged = likely_converged && accepted && alpha == 1.0;
    full_step = accepted && alpha == 1.0;
    if (full_step && hessian_current_) {  // the accepted state's energy evaluation compared the contact sets
      long changed = contacts_changed_;
      MPI_Allreduce(MPI_IN_PLACE, &changed, 1, MPI_LONG, MPI_MAX, d_.comm);
      same_contacts = changed == 0;
    }
    if (!accepted) {
      retract(0.0);
      ++line_search_failures_;
      if (midpoint && gradient_next) evaluate(Want::Gradient);  // its refused full step wrote the midpoint's ∇V
      break;
    }
    if (refresh_contact_normals()) gradient_at_state = false;  // a new contact energy
    if (d_.needs_rebuild(step_ + 1)) {
      d_.rebuild();
      prepare_matrix();
      hessian_current_ = false;
      gradient_at_state = false;  // new pairs
      assembled_in_step = false;  // and a new matrix
      if (midpoint) d_.forward(p_n_, q_n_);  // x_n of the new ghosts
      take_contact_normals();  // of the new pairs, at the same positions: a kept pair's contact energy is unchanged
    }
  }
  newton_iterations_ += iterations;
  // The next midpoint predictor takes ∇V from the last evaluation: at the final state, unless the iterations
  // ran out after a step.
  if (midpoint && iterations == scene_.implicit.max_iterations) evaluate(Want::Gradient);
  return converged;
}

ImplicitBdem::Bdf2Weights ImplicitBdem::bdf2_weights(double h) const {
  const double omega = h / bdf2_history_step_;
  return {(1.0 + omega) * (1.0 + omega), omega * omega, 1.0 + 2.0 * omega};
}

double ImplicitBdem::inertia_step(double h) const {
  // Backward Euler without a history (the first step, a restart from another form) or after a step more than
  // kMaxBdf2Ratio times the last (variable-step BDF2 is zero-stable only for ratios below 1 + √2).
  if (scene_.implicit.form != "bdf2" || !(bdf2_history_step_ > 0) || h > kMaxBdf2Ratio * bdf2_history_step_) return h;
  const Bdf2Weights w = bdf2_weights(h);
  return h * (1.0 + h / bdf2_history_step_) / w.over;
}

void ImplicitBdem::predict(double t, double h) {
  const std::size_t n = d_.n_owned;
  const bool midpoint = scene_.implicit.form == "midpoint";
  const bool two_step = h_ != h;  // BDF2 with a history (inertia_step)
  const double beta = h_;
  const Bdf2Weights c = two_step ? bdf2_weights(h) : Bdf2Weights{};
  p_n_.assign(d_.x.begin(), d_.x.begin() + static_cast<std::ptrdiff_t>(n));
  q_n_.assign(d_.q.begin(), d_.q.begin() + static_cast<std::ptrdiff_t>(n));
  p_hat_.resize(n);
  q_hat_.resize(n);
  {
    ScopedPhase timer(timers_, Phase::Integrate);
    for (std::size_t i = 0; i < n; ++i) {
      if (d_.constraint[i] >= 0) {  // prescribed: its end-of-step state is known; the solve keeps it there
        prescribed_step(scene_.boundary_conditions[d_.constraint[i]], t, h, d_.x[i], d_.q[i], d_.v[i], d_.w[i]);
        p_hat_[i] = d_.x[i];
        q_hat_[i] = d_.q[i];
        continue;
      }
      // x̂ = x_n + h v_n. Backward Euler keeps the paper's chord q_n + h q̇_n (notes 2.2), which turns a free spin
      // by 2 atan(ωh/2) a step and loses (ωh)²/8 of ω; the midpoint form drifts along the geodesic exp(ωh) ⊗ q_n,
      // the inertia term's minimiser on S³, so a free spin turns by exactly ωh.
      if (two_step) {
        // BDF2: x̂ = x̄ + β v̄ (with ω = 1, (4x_n − x_{n−1})/3 + β (4v_n − v_{n−1})/3), and the same with q and
        // q̇ = ½ (ω, 0) ⊗ q.
        const Bdf2Past past = bdf2_past(i);
        p_hat_[i] = c.bar(d_.x[i], past.x) + beta * (c.now * d_.v[i] - c.past * past.v) / c.over;
        q_hat_[i] = c.bar(d_.q[i], past.q) +
                    beta * (c.now * quat::qdot_from_omega(d_.q[i], d_.w[i]) -
                            c.past * quat::qdot_from_omega(past.q, past.w)) / c.over;
      } else {
        p_hat_[i] = d_.x[i] + h * d_.v[i];
        q_hat_[i] = midpoint ? quat::mul(quat::from_rotation_vector(h * d_.w[i]), d_.q[i])
                             : d_.q[i] + h * quat::qdot_from_omega(d_.q[i], d_.w[i]);
      }
      d_.x[i] = p_hat_[i];
      d_.q[i] = q_hat_[i].normalized();
      if (midpoint) {
        // ẑ = x̂ − ½h² M_s⁻¹ ∇V(x_{n−½}) = x_n + h v⁺, a half kick v⁺ = v_n − ½h M⁻¹∇V then a drift; x̂ stays the
        // initial guess. The rotation takes the same kick in the world frame, ω⁺ = ω_n + ½h I⁻¹ τ with
        // τ = −½ R(q_n) y (y = G_l(q_n)∇_qV, the reduced 3-vector a checkpoint holds; I = 2/5 m r²), and drifts
        // along the geodesic: ẑ_q = exp(h ω⁺) ⊗ q_n. To first order in the kick this shifts q̂ by the chord
        // form's −½h² (8/5 m r²)⁻¹ G_l(q_n)ᵀ y.
        // After a step of another length h_prev the kick is ½h_prev M⁻¹∇V (the variational integrator with steps
        // h_prev, h): ẑ = x_n + h v⁺ with ½h h_prev; with ½h², a step 16x the last one overshot its kick 16x.
        const double m = d_.mass[i], r = d_.radius[i], kick = vgrad_step_ > 0 ? vgrad_step_ : h;
        p_hat_[i] -= (0.5 * h * kick / m) * vgrad_p_[i];
        const Eigen::Vector3d w_kicked = d_.w[i] - (kick / (1.6 * m * r * r)) * quat::rotate(q_n_[i], vgrad_y_[i]);
        q_hat_[i] = quat::mul(quat::from_rotation_vector(h * w_kicked), q_n_[i]);
      }
    }
  }
  if (d_.needs_rebuild(step_ + 1)) d_.rebuild();
  else d_.refresh_ghosts();
  prepare_matrix();
  if (midpoint) d_.forward(p_n_, q_n_);  // the pair terms read x_n of ghosts too
  if (predicted_normals_) {  // at the initial guess x̂
    normal_positions_.assign(d_.x.begin(), d_.x.begin() + static_cast<std::ptrdiff_t>(n));
    take_contact_normals();
  }
}

bool ImplicitBdem::refresh_contact_normals() {
  if (!predicted_normals_) return false;
  const std::size_t n = d_.n_owned;
  long drifted = 0;
  for (std::size_t i = 0; i < n && !drifted; ++i)
    if ((d_.x[i] - normal_positions_[i]).squaredNorm() > std::pow(kNormalDrift * d_.radius[i], 2))
      drifted = 1;
  MPI_Allreduce(MPI_IN_PLACE, &drifted, 1, MPI_LONG, MPI_MAX, d_.comm);
  if (!drifted) return false;
  normal_positions_.assign(d_.x.begin(), d_.x.begin() + static_cast<std::ptrdiff_t>(n));
  take_contact_normals();
  ++contact_normal_updates_;
  return true;
}

void ImplicitBdem::take_contact_normals() {
  // Why a fixed normal: a penalty ½k(r_a + r_b − |p_b − p_a|)² softens sideways by kδ/L, which in a squeezed packing
  // cancels the inertia m/h² at large steps (the incremental potential turns flat or non-convex there) and which the
  // PSD projection drops, so Newton's model was far too stiff and its full steps removed 5-15 % of the residual.
  // Along a fixed normal the gap is linear, the energy convex and k n nᵀ its exact Hessian. Taken at x̂, not x_n:
  // nearer the step's end (drop_small's whole run with fixed normals: 266 Newton iterations from x̂, 346 from x_n).
  if (!predicted_normals_) return;
  d_.forward(normal_positions_);
  const std::size_t np = d_.pairs.size();
  pair_normal_.resize(np);
  for (std::size_t k = 0; k < np; ++k) {
    const Eigen::Vector3d delta = normal_positions_[d_.pairs[k].b] - normal_positions_[d_.pairs[k].a];
    const double L = delta.norm();
    // Coincident centres have no normal; any fixed direction keeps the pair's forces balanced.
    pair_normal_[k] = L > 0.0 ? Eigen::Vector3d(delta / L) : Eigen::Vector3d::UnitX();
  }
}

void ImplicitBdem::advance() {
  // A fracture goes on for several steps once it starts (an impact): a step starts at the depth the last one's
  // fracture cuts reached instead of trying the whole step and failing down to it again, and backs off one
  // halving a step while no cut goes deeper.
  const int start = std::min(schedule_.fracture_depth, scene_.implicit.step_cuts);
  deepest_fracture_cut_ = 0;
  start_on_block_jacobi_ = schedule_.block_jacobi_steps > 0;
  if (start_on_block_jacobi_) {
    --schedule_.block_jacobi_steps;
    ++block_jacobi_steps_;
  }
  factor_tried_ = factor_shifted_ = false;
  if (scene_.implicit.fracture_integrator == "explicit" && schedule_.explicit_intervals > 0) {
    --schedule_.explicit_intervals;  // (explicit_interval opens the window again if bonds break)
    keep_interval_start();
    explicit_interval(time(), dt_);
  } else {
    solve_interval(time(), dt_, scene_.implicit.step_cuts, start);
  }
  schedule_.fracture_depth = std::max(deepest_fracture_cut_, start - 1);
  // A shifted IC(0) is dropped for the fallback at once (minimise), and where it shifts at one step it
  // mostly shifts at the next: the late steps of the paper-size chocolate each factored it, shifted, solved once
  // with it and went on with the fallback (then point-block Jacobi). Skipping those factorisations took 12 such steps from
  // 36.0-40.0 s to 33.8-36.0 s (docs/implicit_bdem.md); IC(0) is tried again after 1, 2, 4, then 8 steps.
  if (factor_tried_ && shifting_blocks_) {
    auto& backoff = schedule_.block_jacobi_backoff;
    backoff = factor_shifted_ ? std::clamp(2 * backoff, 1, kMaxBlockJacobiBackoff) : 0;
    schedule_.block_jacobi_steps = backoff;
  }
  ++step_;
  ++steps_run_;
}

void ImplicitBdem::solve_interval(double t, double h, int cuts_left, int presplit) {
  if (presplit > 0 && cuts_left > 0) {
    solve_interval(t, 0.5 * h, cuts_left - 1, presplit - 1);
    solve_interval(t + 0.5 * h, 0.5 * h, cuts_left - 1, presplit - 1);
    return;
  }
  const std::size_t n = d_.n_owned;
  const bool midpoint = scene_.implicit.form == "midpoint";
  // A failed try is undone from x_n, q_n (predict() keeps the interval's start there; the predictor and the
  // minimisation leave velocities alone, and owned slots survive a try's rebuilds), and, in the midpoint form,
  // from the last midpoint's ∇V, which the try's evaluations overwrite.
  std::vector<Eigen::Vector3d> vgrad_p, vgrad_y;
  if (cuts_left > 0 && midpoint) {
    vgrad_p = vgrad_p_;
    vgrad_y = vgrad_y_;
  }
  h_ = inertia_step(h);
  // The step's start velocities: BDF2's next v_{n−1}, and what an explicit interval starts from.
  const bool explicit_fracture = scene_.implicit.fracture_integrator == "explicit";
  if (scene_.implicit.form == "bdf2" || explicit_fracture) {
    v_n_.assign(d_.v.begin(), d_.v.begin() + static_cast<std::ptrdiff_t>(n));
    w_n_.assign(d_.w.begin(), d_.w.begin() + static_cast<std::ptrdiff_t>(n));
  }
  predict(t, h);
  auto cut = [&](long& counter) {  // every rank sees the same (collective) decision
    std::copy_n(p_n_.begin(), n, d_.x.begin());
    std::copy_n(q_n_.begin(), n, d_.q.begin());
    if (midpoint) {
      vgrad_p_ = std::move(vgrad_p);
      vgrad_y_ = std::move(vgrad_y);
    }
    ++counter;
    solve_interval(t, 0.5 * h, cuts_left - 1);
    solve_interval(t + 0.5 * h, 0.5 * h, cuts_left - 1);
  };
  if (!minimise()) {
    if (cuts_left > 0) return cut(step_cuts_);
    // Explicit steps take what the halvings could not (fragments rattling in contact after a break) instead of
    // keeping an unconverged state.
    if (explicit_fracture) return explicit_interval(t, h);
    ++unconverged_steps_;
  }
  // A bond far over its strength at the end of the step crossed it well inside the step: in an impact the
  // step then breaks too many bonds, too late. Halving brings each break closer to its time.
  const double cut_ratio = scene_.implicit.fracture_cut_ratio;
  const bool may_cut = cut_ratio > 0 && cuts_left > 0;
  const double worst = may_cut || explicit_fracture ? largest_stress_ratio() : 0;  // one pass over the bonds for both
  if (may_cut && worst > cut_ratio) {
    deepest_fracture_cut_ = std::max(deepest_fracture_cut_, scene_.implicit.step_cuts - cuts_left + 1);
    return cut(fracture_cuts_);
  }
  if (explicit_fracture && worst > 1) return explicit_interval(t, h);
  break_in_rounds();

  {
    ScopedPhase timer(timers_, Phase::Integrate);
    const bool two_step = h_ != h;
    const Bdf2Weights c = two_step ? bdf2_weights(h) : Bdf2Weights{};
    for (std::size_t i = 0; i < n; ++i) {
      if (d_.constraint[i] >= 0) continue;
      if (two_step) {  // BDF2: v_{n+1} = (x_{n+1} − x̄)/β, ω from the same chord rate of q
        const Bdf2Past past = bdf2_past(i);
        d_.v[i] = (d_.x[i] - c.bar(p_n_[i], past.x)) / h_;
        d_.w[i] = quat::omega_from_qdot(d_.q[i], (d_.q[i] - c.bar(q_n_[i], past.q)) / h_);
        continue;
      }
      d_.v[i] = (d_.x[i] - p_n_[i]) / h;
      // Midpoint: the exact inverse of its geodesic drift (world frame), so the next predictor repeats this
      // step's turn; backward Euler: the chord (q_{n+1} − q_n)/h, consistent with its chord predictor.
      d_.w[i] = midpoint ? quat::rotation_vector(quat::mul(d_.q[i], quat::conj(q_n_[i]))) / h
                         : quat::omega_from_qdot(d_.q[i], (d_.q[i] - q_n_[i]) / h);
    }
  }
  if (scene_.implicit.form == "bdf2") keep_bdf2_history(h);
  if (midpoint) vgrad_step_ = h;
  d_.refresh_ghosts();
  apply_friction();
  const long before = breaks_;
  break_bonds(1.0);
  if (scene_.implicit.fracture_transient > 0) {
    long broke = breaks_ - before;
    MPI_Allreduce(MPI_IN_PLACE, &broke, 1, MPI_LONG, MPI_SUM, d_.comm);
    if (broke > 0) fracture_transient(t + h, h);
  }
}

ImplicitBdem::Bdf2Past ImplicitBdem::bdf2_past(std::size_t i) const {
  const double* past = &bdf2_history_[GlobalModel::kBdf2HistoryWidth * i];
  Bdf2Past p{Eigen::Map<const Eigen::Vector3d>(past), Eigen::Map<const Eigen::Vector3d>(past + 7),
             Eigen::Map<const Eigen::Vector3d>(past + 10), Eigen::Map<const Eigen::Vector4d>(past + 3)};
  if (p.q.dot(q_n_[i]) < 0) p.q = -p.q;  // the same rotation
  return p;
}

void ImplicitBdem::keep_bdf2_history(double h) {
  constexpr std::size_t w = GlobalModel::kBdf2HistoryWidth;
  bdf2_history_.resize(w * d_.n_owned);
  for (std::size_t i = 0; i < d_.n_owned; ++i) {
    double* past = &bdf2_history_[w * i];
    Eigen::Map<Eigen::Vector3d>(past + 0) = p_n_[i];
    Eigen::Map<Eigen::Vector4d>(past + 3) = q_n_[i];
    Eigen::Map<Eigen::Vector3d>(past + 7) = v_n_[i];
    Eigen::Map<Eigen::Vector3d>(past + 10) = w_n_[i];
  }
  bdf2_history_step_ = h;
}

Observables ImplicitBdem::observables() {
  double energy = 0;
  long contacts = 0;
  for (const Pair& p : d_.pairs) {
    if (p.bond >= 0) {
      energy += physics::bond_energy(d_.x[p.a], d_.q[p.a], d_.x[p.b], d_.q[p.b], d_.bonds[p.bond].rest);
      continue;
    }
    const auto cp = physics::contact_penalty(d_.x[p.a], d_.radius[p.a], d_.x[p.b], d_.radius[p.b], contact_k_);
    energy += cp.energy;
    contacts += cp.active ? 1 : 0;
  }
  for (std::size_t i = 0; i < d_.n_owned; ++i)
    for (const auto& o : scene_.obstacles)
      geometry::for_each_plane(o, [&](const Eigen::Vector3d& point, const Eigen::Vector3d& normal) {
        const auto pl = physics::plane_penalty(d_.x[i], d_.radius[i], point, normal, contact_k_);
        energy += pl.active ? pl.energy : 0.0;
        contacts += pl.active ? 1 : 0;
      });
  return d_.observables(energy, contacts);
}

bool ImplicitBdem::matrix_carries(double h) const {
  // (A lag contraction of 0 assembles at every iteration: nothing carries either.)
  // A refreshed matrix carries where the next step brings its contacts up to date (minimise): it is then the matrix
  // of the kept part's state and that step's start, which a restart assembles again; elsewhere it would not be.
  const bool mixed_ok = refreshes_carried_contacts();
  long local = scene_.implicit.hessian_lag_contraction > 0 && matrix_assembled_ && (!matrix_mixed_ || mixed_ok) &&
               matrix_h_ == h &&
               matrix_rebuild_ == d_.rebuilds() && matrix_breaks_ == breaks_,
       global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_LONG, MPI_MIN, d_.comm);
  return global != 0;
}

bool ImplicitBdem::refreshes_carried_contacts() const {
  return scene_.implicit.contact_refresh && system_.preconditioner_follows_matrix();
}

double ImplicitBdem::first_try_step() const {
  return std::ldexp(dt_, -std::min(schedule_.fracture_depth, scene_.implicit.step_cuts));
}

void ImplicitBdem::restore_matrix(const GlobalModel& model) {
  // The interrupted run's next step would keep this matrix: assemble it at the state it was assembled at, on the
  // pairs the restart rebuilt where that run last built them.
  const std::size_t n = d_.n_owned;
  const bool midpoint = scene_.implicit.form == "midpoint";
  const std::vector<Eigen::Vector3d> x(d_.x.begin(), d_.x.begin() + static_cast<std::ptrdiff_t>(n));
  const std::vector<Eigen::Vector4d> q(d_.q.begin(), d_.q.begin() + static_cast<std::ptrdiff_t>(n));
  const std::vector<Eigen::Vector3d> vgrad_p = vgrad_p_, vgrad_y = vgrad_y_;  // a midpoint evaluation writes them
  p_hat_.assign(n, Eigen::Vector3d::Zero());  // (the inertia Hessian reads q̂ only)
  q_hat_.resize(n);
  normal_positions_.resize(n);
  p_n_.resize(n);
  q_n_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double* m = &model.newton_state[kMatrixState * static_cast<std::size_t>(d_.gid[i])];
    d_.x[i] = Eigen::Map<const Eigen::Vector3d>(m);
    d_.q[i] = Eigen::Map<const Eigen::Vector4d>(m + 3);
    q_hat_[i] = Eigen::Map<const Eigen::Vector4d>(m + 7);
    p_n_[i] = Eigen::Map<const Eigen::Vector3d>(m + 11);
    q_n_[i] = Eigen::Map<const Eigen::Vector4d>(m + 14);
    if (predicted_normals_) normal_positions_[i] = Eigen::Map<const Eigen::Vector3d>(m + 18);
  }
  d_.refresh_ghosts();
  if (midpoint) d_.forward(p_n_, q_n_);
  prepare_matrix();
  take_contact_normals();
  evaluate(Want::Hessian);
  matrix_assembled_ = true;
  matrix_h_ = h_;
  matrix_rebuild_ = d_.rebuilds();
  matrix_breaks_ = breaks_;
  std::copy(x.begin(), x.end(), d_.x.begin());
  std::copy(q.begin(), q.end(), d_.q.begin());
  d_.refresh_ghosts();
  vgrad_p_ = vgrad_p;
  vgrad_y_ = vgrad_y;
}

void ImplicitBdem::write_checkpoint(const std::string& path) {
  // The midpoint form carries ∇V at the last midpoint; backward Euler needs nothing and writes zeros. A Newton
  // matrix the next step may keep goes with the state it was assembled at.
  // (The next step's first try is a whole step, or the halving its fracture cuts start at: first_try_step.)
  // BDF2 adds its x_{n−1}; the midpoint form the length of the step its ∇V is from; fracture cuts their depth.
  const bool carries = matrix_carries(inertia_step(first_try_step()));
  d_.write_checkpoint(path, step_, clock(), vgrad_p_, vgrad_y_, "implicit", scene_.implicit.form,
                      carries ? std::span<const double>(matrix_state_) : std::span<const double>(),
                      carries ? kMatrixState : 0, bdf2_history_, bdf2_history_step_, vgrad_step_, schedule_);
}

std::map<std::string, double> ImplicitBdem::counters() const {
  const double steps = static_cast<double>(std::max(1L, steps_run_));
  const double newton = static_cast<double>(std::max(1L, newton_iterations_));
  return {{"newton_iterations", static_cast<double>(newton_iterations_)},
          {"krylov_iterations", static_cast<double>(krylov_iterations_)},
          {"newton_per_step", static_cast<double>(newton_iterations_) / steps},
          {"krylov_per_newton", static_cast<double>(krylov_iterations_) / newton},
          {"line_search_failures", static_cast<double>(line_search_failures_)},
          {"fallback_solves", static_cast<double>(fallback_solves_)},
          {"fallback_steps", static_cast<double>(block_jacobi_steps_)},
          {"gauss_seidel_partial_set_ups", static_cast<double>(system_.gauss_seidel_updates())},
          {"set_ups_across_ranks", static_cast<double>(system_.set_ups_across_ranks())},
          {"hessian_assemblies", static_cast<double>(hessian_assemblies_)},
          {"block_factorisations", static_cast<double>(system_.block_factorisations())},
          {"lagged_hessians", static_cast<double>(lagged_hessians_)},
          {"contact_refreshes", static_cast<double>(contact_refreshes_)},
          {"active_set_rounds", static_cast<double>(active_set_rounds_)},
          {"branch_switches", static_cast<double>(branch_switches_)},
          {"contact_normal_updates", static_cast<double>(contact_normal_updates_)},
          {"carried_hessians", static_cast<double>(carried_hessians_)},
          {"line_search_extrapolations", static_cast<double>(extrapolations_)},
          {"line_search_extrapolations_tried", static_cast<double>(extrapolations_tried_)},
          {"block_shifted_factorisations", static_cast<double>(system_.block_shifted())},
          {"failed_factorisations", static_cast<double>(system_.failed_set_ups())},
          {"step_cuts", static_cast<double>(step_cuts_)},
          {"fracture_cuts", static_cast<double>(fracture_cuts_)},
          {"fracture_rounds", static_cast<double>(fracture_rounds_)},
          {"explicit_intervals", static_cast<double>(explicit_intervals_)},
          {"explicit_steps", static_cast<double>(explicit_steps_)},
          {"transient_steps", static_cast<double>(transient_steps_)},
          {"unconverged_steps", static_cast<double>(unconverged_steps_)}};
}

}  // namespace percussion::bdem
