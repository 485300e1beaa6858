// δ, the distance from the origin to the convex hull of the normalised gradients, by PETSc TAO (notes 003 Alg. E).
#include "percussion/physics/impact/lineality_distance.hpp"

#include <petsctao.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace percussion::impact {

namespace {

void tao_check(PetscErrorCode code, const char* what) {
  if (code != 0) throw std::runtime_error(std::string("impact: lineality distance: ") + what + " failed");
}

struct DistanceContext {
  const ImpactSystem* system;
  std::vector<double> w, gw;  // M⁻¹Nμ and Gμ = NᵀM⁻¹Nμ
};

// f = μᵀGμ + (Σμ − 1)², ∇f = 2(Gμ + (Σμ − 1)1).
PetscErrorCode distance_objective_and_gradient(Tao, Vec x, PetscReal* f, Vec g, void* ctx) {
  auto* c = static_cast<DistanceContext*>(ctx);
  const ImpactSystem& s = *c->system;
  const PetscScalar* mu = nullptr;
  PetscScalar* grad = nullptr;
  PetscCall(VecGetArrayRead(x, &mu));
  PetscCall(VecGetArray(g, &grad));
  std::fill(c->w.begin(), c->w.end(), 0.0);
  double sum = 0.0;
  for (int i = 0; i < s.constraints(); ++i) {
    s.apply(i, mu[i], c->w.data());
    sum += mu[i];
  }
  double quadratic = 0.0;
  for (int i = 0; i < s.constraints(); ++i) {
    const double gi = s.slope(i, c->w.data());
    quadratic += mu[i] * gi;
    grad[i] = 2.0 * (gi + (sum - 1.0));
  }
  *f = quadratic + (sum - 1.0) * (sum - 1.0);
  PetscCall(VecRestoreArray(g, &grad));
  PetscCall(VecRestoreArrayRead(x, &mu));
  return 0;
}

// Upper and lower bound of δ at μ: λ = μ/Σμ (clamped to the bounds), x = Nλ, delta = ‖x‖_{M⁻¹}, lower =
// min_i n_iᵀM⁻¹x / ‖x‖ (0 if negative or x = 0).
void bounds(const ImpactSystem& s, const double* mu, std::vector<double>& lambda, std::vector<double>& w,
            double& delta, double& lower) {
  const int m = s.constraints();
  double sum = 0.0;
  lambda.assign(mu, mu + m);
  for (double& x : lambda) sum += (x = std::max(x, 0.0));
  if (!(sum > 0.0)) throw std::runtime_error("impact: lineality distance: the solver returned λ = 0");
  for (double& x : lambda) x /= sum;
  std::fill(w.begin(), w.end(), 0.0);
  for (int i = 0; i < m; ++i) s.apply(i, lambda[i], w.data());
  delta = std::sqrt(s.energy_norm_squared(w.data()));  // ‖M⁻¹Nλ‖_M = ‖Nλ‖_{M⁻¹}
  lower = 0.0;
  if (delta > 0.0) {
    double lowest = std::numeric_limits<double>::infinity();
    for (int i = 0; i < m; ++i) lowest = std::min(lowest, s.slope(i, w.data()));
    lower = std::max(0.0, lowest / delta);
  }
}

struct GapTest {
  const ImpactSystem* system;
  double gap;
  std::vector<double> lambda, w;
};

// Stops when the certified interval is narrow enough; otherwise TAO's own tests (gradient tolerance, iterations).
PetscErrorCode gap_test(Tao tao, void* ctx) {
  auto* t = static_cast<GapTest*>(ctx);
  Vec x;
  PetscCall(TaoGetSolution(tao, &x));
  const PetscScalar* mu = nullptr;
  PetscCall(VecGetArrayRead(x, &mu));
  double delta = 0.0, lower = 0.0;
  bounds(*t->system, mu, t->lambda, t->w, delta, lower);
  PetscCall(VecRestoreArrayRead(x, &mu));
  if (delta - lower <= t->gap * delta) return TaoSetConvergedReason(tao, TAO_CONVERGED_USER);
  return TaoDefaultConvergenceTest(tao, nullptr);
}

struct Objects {
  Tao tao = nullptr;
  Vec x = nullptr, lo = nullptr, hi = nullptr;
  ~Objects() {
    if (tao) TaoDestroy(&tao);
    if (x) VecDestroy(&x);
    if (lo) VecDestroy(&lo);
    if (hi) VecDestroy(&hi);
  }
};

}  // namespace

LinealityDistance lineality_distance(const ImpactSystem& s, const LinealityDistanceOptions& options) {
  LinealityDistance out;
  const int m = s.constraints();
  if (m == 0) {  // the hull of nothing: no constraint can jam
    out.delta = out.lower_bound = std::numeric_limits<double>::infinity();
    out.converged = true;
    out.reason = "no constraints";
    return out;
  }
  DistanceContext ctx{&s, std::vector<double>(s.dofs(), 0.0), {}};
  Objects o;
  tao_check(VecCreateSeq(PETSC_COMM_SELF, m, &o.x), "VecCreateSeq");
  tao_check(VecDuplicate(o.x, &o.lo), "VecDuplicate");
  tao_check(VecDuplicate(o.x, &o.hi), "VecDuplicate");
  tao_check(VecSet(o.x, 1.0 / m), "VecSet");
  tao_check(VecSet(o.lo, 0.0), "VecSet");
  tao_check(VecSet(o.hi, PETSC_INFINITY), "VecSet");
  tao_check(TaoCreate(PETSC_COMM_SELF, &o.tao), "TaoCreate");
  tao_check(TaoSetType(o.tao, TAOBLMVM), "TaoSetType");
  tao_check(TaoSetOptionsPrefix(o.tao, options.prefix.c_str()), "TaoSetOptionsPrefix");
  tao_check(TaoSetSolution(o.tao, o.x), "TaoSetSolution");
  tao_check(TaoSetObjectiveAndGradient(o.tao, nullptr, distance_objective_and_gradient, &ctx),
            "TaoSetObjectiveAndGradient");
  tao_check(TaoSetVariableBounds(o.tao, o.lo, o.hi), "TaoSetVariableBounds");
  tao_check(TaoSetTolerances(o.tao, options.gradient_tolerance, 0.0, 0.0), "TaoSetTolerances");
  tao_check(TaoSetMaximumIterations(o.tao, static_cast<PetscInt>(options.max_iterations)), "TaoSetMaximumIterations");
  GapTest gap{&s, options.relative_gap, {}, std::vector<double>(s.dofs(), 0.0)};
  tao_check(TaoSetConvergenceTest(o.tao, gap_test, &gap), "TaoSetConvergenceTest");
  tao_check(TaoSetFromOptions(o.tao), "TaoSetFromOptions");
  tao_check(TaoSolve(o.tao), "TaoSolve");
  TaoConvergedReason why;
  PetscInt its = 0;
  tao_check(TaoGetConvergedReason(o.tao, &why), "TaoGetConvergedReason");
  tao_check(TaoGetIterationNumber(o.tao, &its), "TaoGetIterationNumber");
  out.converged = why > 0;
  out.reason = TaoConvergedReasons[why];
  out.iterations = its;

  const PetscScalar* mu = nullptr;
  tao_check(VecGetArrayRead(o.x, &mu), "VecGetArrayRead");
  bounds(s, mu, out.weights, gap.w, out.delta, out.lower_bound);
  tao_check(VecRestoreArrayRead(o.x, &mu), "VecRestoreArrayRead");
  return out;
}

}  // namespace percussion::impact
