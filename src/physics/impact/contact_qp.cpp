// The impact QPs: sparse assembly of N_SᵀM⁻¹N_S and the TAO solve with its exact clean-up (notes 003 Alg. H).
#include "percussion/physics/impact/contact_qp.hpp"

#include <petsctao.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <utility>

#include "percussion/physics/impact/qp_active_set.hpp"
#include "percussion/solvers/petsc_check.hpp"

namespace percussion::impact {

using solvers::petsc_check;

namespace {

constexpr int kStallIterations = 10;  // iterations without a new low residual that count as a stall
constexpr int kMaxRestarts = 10;     // new reference points per solve (each converges or gets closer)

// One TAO run's objective, measured from a reference point x0 with the exact gradient g0 = Ax0 + b there:
// f(x) − f(x0) = dᵀ(g0 + ½Ad), d = x − x0. Near the optimum of an ill-conditioned A the decrease still available
// is far below the round-off of ½xᵀAx + bᵀx itself, so TAO's line searches and trust-region ratios, which compare
// objective values, stall; from a reference next to the optimum the differences are resolved again.
struct Shifted {
  const ImpactQp* qp = nullptr;
  std::vector<double> x0, g0, d;
  PetscReal best_residual = PETSC_INFINITY;
  int unchanged = 0;  // iterations since the residual last reached a new low
};

PetscErrorCode objective_and_gradient(Tao, Vec x, PetscReal* f, Vec g, void* ctx) {
  auto* s = static_cast<Shifted*>(ctx);
  const int n = s->qp->size();
  const PetscScalar* xs = nullptr;
  PetscCall(VecGetArrayRead(x, &xs));
  for (int i = 0; i < n; ++i) s->d[i] = xs[i] - s->x0[i];
  PetscCall(VecRestoreArrayRead(x, &xs));
  Vec dv = nullptr;
  PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, n, s->d.data(), &dv));
  const PetscErrorCode code = MatMult(s->qp->matrix(), dv, g);
  PetscCall(VecDestroy(&dv));
  PetscCall(code);
  PetscScalar* gs = nullptr;
  PetscCall(VecGetArray(g, &gs));
  double value = 0.0;
  for (int i = 0; i < n; ++i) {
    value += s->d[i] * (s->g0[i] + 0.5 * gs[i]);
    gs[i] += s->g0[i];
  }
  *f = value;
  PetscCall(VecRestoreArray(g, &gs));
  return 0;
}

// TAO's Hessian is a copy of A refreshed at every request: the BNK solvers shift it in place to regularise
// their Newton steps, which must not leak into the objective.
PetscErrorCode copy_hessian(Tao, Vec, Mat H, Mat, void* ctx) {
  PetscCall(MatCopy(static_cast<Shifted*>(ctx)->qp->matrix(), H, SAME_NONZERO_PATTERN));
  return 0;
}

// TAO's own test, and a stop once the iterate has stalled (no new low of the projected-gradient residual for a few
// iterations): the solve then restarts from there with a new reference point.
PetscErrorCode converged_or_stalled(Tao tao, void* ctx) {
  PetscCall(TaoDefaultConvergenceTest(tao, nullptr));
  TaoConvergedReason why;
  PetscInt its = 0;
  PetscReal f = 0.0, residual = 0.0, cnorm = 0.0, xdiff = 0.0;
  PetscCall(TaoGetSolutionStatus(tao, &its, &f, &residual, &cnorm, &xdiff, &why));
  auto* s = static_cast<Shifted*>(ctx);
  s->unchanged = residual < s->best_residual ? 0 : s->unchanged + 1;
  s->best_residual = std::min(s->best_residual, residual);
  if (why == TAO_CONTINUE_ITERATING && s->unchanged >= kStallIterations) {
    PetscCall(TaoSetConvergedReason(tao, TAO_DIVERGED_USER));
  }
  return 0;
}

// RAII for the few PETSc objects of one solve.
struct SolveObjects {
  Vec x = nullptr, lo = nullptr, hi = nullptr;
  Mat hessian = nullptr;
  Tao tao = nullptr;
  ~SolveObjects() {
    if (tao) TaoDestroy(&tao);
    if (hessian) MatDestroy(&hessian);
    if (x) VecDestroy(&x);
    if (lo) VecDestroy(&lo);
    if (hi) VecDestroy(&hi);
  }
};

std::vector<double> to_vector(Vec v, int n) {
  std::vector<double> out(static_cast<std::size_t>(n));
  const PetscScalar* a = nullptr;
  petsc_check(VecGetArrayRead(v, &a), "VecGetArrayRead");
  std::copy(a, a + n, out.begin());
  petsc_check(VecRestoreArrayRead(v, &a), "VecRestoreArrayRead");
  return out;
}

Vec from_vector(std::span<const double> values) {
  Vec v = nullptr;
  petsc_check(VecCreateSeq(PETSC_COMM_SELF, static_cast<PetscInt>(values.size()), &v), "VecCreateSeq");
  PetscScalar* a = nullptr;
  petsc_check(VecGetArray(v, &a), "VecGetArray");
  std::copy(values.begin(), values.end(), a);
  petsc_check(VecRestoreArray(v, &a), "VecRestoreArray");
  return v;
}

}  // namespace

ImpactQp::ImpactQp(const ImpactSystem& system, std::span<const int> subset, const double* v) {
  const int n = static_cast<int>(subset.size());
  scale_ = std::sqrt(system.energy_norm_squared(v));
  b_.resize(static_cast<std::size_t>(n));
  std::vector<int> position(static_cast<std::size_t>(system.constraints()), -1);
  for (int p = 0; p < n; ++p) {
    position[subset[p]] = p;
    b_[p] = system.slope(subset[p], v);
  }
  // Column j: w = M⁻¹n_j on j's bodies, read by every constraint of the subset sharing a body with j. Only the lower
  // triangle is computed and mirrored, so A is symmetric bit for bit.
  std::vector<std::vector<std::pair<int, double>>> rows(static_cast<std::size_t>(n));
  std::vector<double> w(static_cast<std::size_t>(system.dofs()), 0.0);
  std::vector<int> seen(static_cast<std::size_t>(n), -1);
  for (int q = 0; q < n; ++q) {
    const int j = subset[q];
    system.apply(j, 1.0, w.data());
    for (const int body : {system.end_a(j), system.end_b(j)}) {
      if (body < 0) continue;
      for (const int i : system.constraints_of(body)) {
        const int p = position[i];
        if (p < q || seen[p] == q) continue;
        seen[p] = q;
        const double a = system.slope(i, w.data());
        rows[p].emplace_back(q, a);
        if (p != q) rows[q].emplace_back(p, a);
      }
    }
    for (const int body : {system.end_a(j), system.end_b(j)}) {
      if (body < 0) continue;
      std::fill_n(w.begin() + system.body_offset(body), system.body_dofs(body), 0.0);
    }
  }
  std::vector<PetscInt> nnz(static_cast<std::size_t>(n));
  for (int p = 0; p < n; ++p) {
    std::sort(rows[p].begin(), rows[p].end());
    nnz[p] = static_cast<PetscInt>(rows[p].size());
  }
  petsc_check(MatCreateSeqAIJ(PETSC_COMM_SELF, n, n, 0, n ? nnz.data() : nullptr, &A_), "MatCreateSeqAIJ");
  std::vector<PetscInt> cols;
  std::vector<PetscScalar> vals;
  for (PetscInt p = 0; p < n; ++p) {
    cols.clear();
    vals.clear();
    for (const auto& [q, a] : rows[p]) cols.push_back(q), vals.push_back(a);
    petsc_check(MatSetValues(A_, 1, &p, nnz[p], cols.data(), vals.data(), INSERT_VALUES), "MatSetValues");
  }
  petsc_check(MatAssemblyBegin(A_, MAT_FINAL_ASSEMBLY), "MatAssemblyBegin");
  petsc_check(MatAssemblyEnd(A_, MAT_FINAL_ASSEMBLY), "MatAssemblyEnd");
  petsc_check(MatSetOption(A_, MAT_SYMMETRIC, PETSC_TRUE), "MatSetOption");
}

ImpactQp::~ImpactQp() {
  if (A_) MatDestroy(&A_);
}

void ImpactQp::gradient(const double* x, double* g) const {
  Vec xv = nullptr, gv = nullptr;
  petsc_check(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, size(), x, &xv), "VecCreateSeqWithArray");
  petsc_check(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, size(), g, &gv), "VecCreateSeqWithArray");
  const PetscErrorCode code = MatMult(A_, xv, gv);
  VecDestroy(&xv);
  VecDestroy(&gv);
  petsc_check(code, "MatMult");
  for (int i = 0; i < size(); ++i) g[i] += b_[i];
}

void ImpactQp::roundoff_floor(const double* x, double* bound) const {
  constexpr double u = std::numeric_limits<double>::epsilon() / 2;
  for (PetscInt i = 0; i < size(); ++i) {
    PetscInt count = 0;
    const PetscInt* cols = nullptr;
    const PetscScalar* vals = nullptr;
    petsc_check(MatGetRow(A_, i, &count, &cols, &vals), "MatGetRow");
    double sum = std::abs(b_[i]);
    for (PetscInt k = 0; k < count; ++k) sum += std::abs(vals[k] * x[cols[k]]);
    petsc_check(MatRestoreRow(A_, i, &count, &cols, &vals), "MatRestoreRow");
    const double terms = static_cast<double>(count + 1);
    bound[i] = terms * u / (1 - terms * u) * sum;
  }
}

double ImpactQp::objective(const double* x) const {
  std::vector<double> g(b_.size());
  gradient(x, g.data());
  double f = 0.0;
  for (int i = 0; i < size(); ++i) f += 0.5 * x[i] * (g[i] + b_[i]);
  return f;
}

QpResult ImpactQp::solve(std::span<const double> lower, std::span<const double> upper,
                         const QpOptions& options) const {
  QpResult result;
  const int n = size();
  if (n == 0) {
    result.converged = true;
    result.reason = "empty";
    return result;
  }
  // A start inside the bounds (0 when it is).
  std::vector<double> start(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) start[i] = std::clamp(0.0, lower[i], upper[i]);
  Shifted shifted;
  shifted.qp = this;
  shifted.d.resize(static_cast<std::size_t>(n));
  std::vector<double> lower_v(lower.begin(), lower.end()), upper_v(upper.begin(), upper.end());
  std::vector<double> x = start;
  TaoConvergedReason why = TAO_CONTINUE_ITERATING;
  PetscInt budget = static_cast<PetscInt>(options.max_iterations);
  for (int round = 0; round <= kMaxRestarts && budget > 0; ++round) {
    shifted.x0 = x;
    shifted.g0.resize(static_cast<std::size_t>(n));
    gradient(x.data(), shifted.g0.data());
    shifted.unchanged = 0;
    shifted.best_residual = PETSC_INFINITY;
    SolveObjects pv;
    pv.x = from_vector(x);
    pv.lo = from_vector(lower_v);
    pv.hi = from_vector(upper_v);
    petsc_check(MatDuplicate(A_, MAT_COPY_VALUES, &pv.hessian), "MatDuplicate");
    petsc_check(TaoCreate(PETSC_COMM_SELF, &pv.tao), "TaoCreate");
    petsc_check(TaoSetType(pv.tao, TAOTRON), "TaoSetType");
    petsc_check(TaoSetOptionsPrefix(pv.tao, options.prefix.c_str()), "TaoSetOptionsPrefix");
    // A has a unit diagonal, so Jacobi is no preconditioning; TRON's default ILU breaks down on the singular A of
    // redundant contacts and friction generators (its trust-region steps then stall far above the tolerance).
    KSP ksp = nullptr;
    PC pc = nullptr;
    petsc_check(TaoGetKSP(pv.tao, &ksp), "TaoGetKSP");
    if (ksp) {
      petsc_check(KSPGetPC(ksp, &pc), "KSPGetPC");
      petsc_check(PCSetType(pc, PCNONE), "PCSetType");
    }
    petsc_check(TaoSetSolution(pv.tao, pv.x), "TaoSetSolution");
    petsc_check(TaoSetObjectiveAndGradient(pv.tao, nullptr, objective_and_gradient, &shifted),
                "TaoSetObjectiveAndGradient");
    petsc_check(TaoSetHessian(pv.tao, pv.hessian, pv.hessian, copy_hessian, &shifted), "TaoSetHessian");
    petsc_check(TaoSetVariableBounds(pv.tao, pv.lo, pv.hi), "TaoSetVariableBounds");
    // TAO's test is on the 2-norm of its projected gradient (which bounds our ∞-norm), set a decade below the
    // acceptance so that the clean-up's rounding does not push an accepted solve over it.
    petsc_check(TaoSetTolerances(pv.tao, 0.1 * options.residual * scale_, 0.0, 0.0), "TaoSetTolerances");
    petsc_check(TaoSetMaximumIterations(pv.tao, budget), "TaoSetMaximumIterations");
    petsc_check(TaoSetConvergenceTest(pv.tao, converged_or_stalled, &shifted), "TaoSetConvergenceTest");
    petsc_check(TaoSetFromOptions(pv.tao), "TaoSetFromOptions");
    petsc_check(TaoSolve(pv.tao), "TaoSolve");
    PetscInt its = 0;
    petsc_check(TaoGetConvergedReason(pv.tao, &why), "TaoGetConvergedReason");
    petsc_check(TaoGetIterationNumber(pv.tao, &its), "TaoGetIterationNumber");
    result.iterations += its;
    budget -= std::max<PetscInt>(its, 1);
    ++result.restarts;
    Vec solution = nullptr;
    petsc_check(TaoGetSolution(pv.tao, &solution), "TaoGetSolution");
    x = to_vector(solution, n);
    // A stall, or a line search or trust region that failed on objective round-off, is cured by a new reference.
    if (why > 0 || why == TAO_DIVERGED_MAXITS || why == TAO_DIVERGED_NAN) break;
  }
  result.x = std::move(x);
  --result.restarts;

  // Clean-up: exactly inside the bounds; a component within the tolerance of a bound its gradient pushes against
  // (an interior-point solver's near-zeros) goes onto it, so complementarity is exact. Returns the residual.
  std::vector<double> g(static_cast<std::size_t>(n)), floor(static_cast<std::size_t>(n));
  const auto clean = [&](std::vector<double>& xs) {
    for (int i = 0; i < n; ++i) xs[i] = std::clamp(xs[i], lower[i], upper[i]);
    gradient(xs.data(), g.data());
    const double snap = options.residual * scale_;
    for (int i = 0; i < n; ++i) {
      double& x = xs[i];
      if (x - lower[i] <= snap && g[i] > 0) x = lower[i];
      if (upper[i] - x <= snap && g[i] < 0) x = upper[i];
    }
    gradient(xs.data(), g.data());
    roundoff_floor(xs.data(), floor.data());
    double worst = 0.0;
    for (int i = 0; i < n; ++i) {
      const double x = xs[i];
      double r = g[i];
      if (lower[i] == upper[i]) r = 0.0;
      else if (x == lower[i]) r = std::min(r, 0.0);
      else if (x == upper[i]) r = std::max(r, 0.0);
      worst = std::max(worst, std::abs(r) - floor[i]);
    }
    return scale_ > 0 ? worst / scale_ : worst;
  };
  result.residual = clean(result.x);
  // Redundant contacts (a box's face on a face, a settled pile's nearly dependent loops) make A singular, and
  // TRON's last digits slow or stalled: an active-set finish from TAO's iterate, which keeps its null-space part.
  // TAO's support can span a nearly singular face whose solves amplify round-off: then from the start, releasing
  // every bound that points inside, and last releasing one per face (slower, but its faces stay independent).
  for (const int stage : {0, 1, 2}) {
    if (result.residual <= options.residual) break;
    ActiveSetOptions finish;
    finish.tolerance = 0.5 * options.residual * scale_;
    finish.single_release = stage == 2;
    if (finish.single_release) finish.max_iterations = 4 * n + 100;
    std::vector<double> polished = stage == 0 ? result.x : start;
    const ActiveSetReport report = active_set_finish(A_, b_, lower, upper, polished, finish);
    result.finish_iterations += report.iterations;
    const double r = clean(polished);
    if (r < result.residual) result.x = std::move(polished), result.residual = r;
  }
  result.converged = std::isfinite(result.residual) && result.residual <= options.residual;
  std::ostringstream reason;
  reason << (why == TAO_DIVERGED_USER ? "stalled" : TaoConvergedReasons[why]);
  if (!result.converged) {
    reason << ": KKT residual " << result.residual << " x |v|_M above " << options.residual << " after "
           << result.iterations << " TAO iterations, " << result.restarts << " restarts and "
           << result.finish_iterations << " active-set face solves";
  } else if (result.finish_iterations > 0) {
    reason << ", finished by " << result.finish_iterations << " active-set face solves";
  }
  result.reason = reason.str();
  return result;
}

QpResult ImpactQp::solve_nonnegative(const QpOptions& options) const {
  const std::vector<double> lower(b_.size(), 0.0), upper(b_.size(), PETSC_INFINITY);
  return solve(lower, upper, options);
}

}  // namespace percussion::impact
