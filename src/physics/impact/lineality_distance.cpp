// δ, the distance from the origin to the convex hull of the normalised gradients, by PETSc TAO (notes 003 Alg. E).
#include "percussion/physics/impact/lineality_distance.hpp"

#include <petsctao.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace percussion::impact {

namespace {

void petsc_check(PetscErrorCode code, const char* what) {
  if (code != 0) throw std::runtime_error(std::string("impact: lineality distance: ") + what + " failed");
}

struct Context {
  const ImpactSystem* system;
  std::vector<double> w, gw;  // M⁻¹Nμ and Gμ = NᵀM⁻¹Nμ
};

// f = μᵀGμ + (Σμ − 1)², ∇f = 2(Gμ + (Σμ − 1)1).
PetscErrorCode objective_and_gradient(Tao, Vec x, PetscReal* f, Vec g, void* ctx) {
  auto* c = static_cast<Context*>(ctx);
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
  Context ctx{&s, std::vector<double>(s.dofs(), 0.0), {}};
  Objects o;
  petsc_check(VecCreateSeq(PETSC_COMM_SELF, m, &o.x), "VecCreateSeq");
  petsc_check(VecDuplicate(o.x, &o.lo), "VecDuplicate");
  petsc_check(VecDuplicate(o.x, &o.hi), "VecDuplicate");
  petsc_check(VecSet(o.x, 1.0 / m), "VecSet");
  petsc_check(VecSet(o.lo, 0.0), "VecSet");
  petsc_check(VecSet(o.hi, PETSC_INFINITY), "VecSet");
  petsc_check(TaoCreate(PETSC_COMM_SELF, &o.tao), "TaoCreate");
  petsc_check(TaoSetType(o.tao, TAOBQNLS), "TaoSetType");
  petsc_check(TaoSetOptionsPrefix(o.tao, options.prefix.c_str()), "TaoSetOptionsPrefix");
  petsc_check(TaoSetSolution(o.tao, o.x), "TaoSetSolution");
  petsc_check(TaoSetObjectiveAndGradient(o.tao, nullptr, objective_and_gradient, &ctx), "TaoSetObjectiveAndGradient");
  petsc_check(TaoSetVariableBounds(o.tao, o.lo, o.hi), "TaoSetVariableBounds");
  petsc_check(TaoSetTolerances(o.tao, options.gradient_tolerance, 0.0, 0.0), "TaoSetTolerances");
  petsc_check(TaoSetMaximumIterations(o.tao, static_cast<PetscInt>(options.max_iterations)), "TaoSetMaximumIterations");
  petsc_check(TaoSetFromOptions(o.tao), "TaoSetFromOptions");
  petsc_check(TaoSolve(o.tao), "TaoSolve");
  TaoConvergedReason why;
  PetscInt its = 0;
  petsc_check(TaoGetConvergedReason(o.tao, &why), "TaoGetConvergedReason");
  petsc_check(TaoGetIterationNumber(o.tao, &its), "TaoGetIterationNumber");
  out.converged = why > 0;
  out.reason = TaoConvergedReasons[why];
  out.iterations = its;

  // λ = μ / Σμ on the simplex (clamped: the bounds hold to TAO's projection), then both bounds from it.
  const PetscScalar* mu = nullptr;
  petsc_check(VecGetArrayRead(o.x, &mu), "VecGetArrayRead");
  out.weights.assign(mu, mu + m);
  petsc_check(VecRestoreArrayRead(o.x, &mu), "VecRestoreArrayRead");
  double sum = 0.0;
  for (double& x : out.weights) sum += (x = std::max(x, 0.0));
  if (!(sum > 0.0)) throw std::runtime_error("impact: lineality distance: the solver returned λ = 0");
  for (double& x : out.weights) x /= sum;
  std::vector<double> w(s.dofs(), 0.0);
  for (int i = 0; i < m; ++i) s.apply(i, out.weights[i], w.data());
  const double norm = std::sqrt(s.energy_norm_squared(w.data()));  // ‖M⁻¹Nλ‖_M = ‖Nλ‖_{M⁻¹}
  out.delta = norm;
  if (norm > 0.0) {
    double lowest = std::numeric_limits<double>::infinity();
    for (int i = 0; i < m; ++i) lowest = std::min(lowest, s.slope(i, w.data()));
    out.lower_bound = std::max(0.0, lowest / norm);
  }
  return out;
}

}  // namespace percussion::impact
