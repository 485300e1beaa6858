// The active-set finish of the impact QPs: faces solved by a shifted sparse LDLᵀ with refinement.
#include "percussion/physics/impact/qp_active_set.hpp"

#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>

#include <algorithm>
#include <cmath>
#include <limits>

#include "percussion/solvers/petsc_check.hpp"

namespace percussion::impact {

using solvers::petsc_check;

namespace {

using Sparse = Eigen::SparseMatrix<double>;

constexpr double kFirstShift = 1e-10;  // relative to A's largest diagonal entry; lowered when the refinement stalls
constexpr double kLastShift = 1e-14;
constexpr int kRefinements = 60;       // refinement steps per shift

Sparse to_eigen(Mat A) {
  PetscInt n = 0;
  petsc_check(MatGetSize(A, &n, nullptr), "MatGetSize");
  std::vector<Eigen::Triplet<double>> entries;
  for (PetscInt i = 0; i < n; ++i) {
    PetscInt count = 0;
    const PetscInt* cols = nullptr;
    const PetscScalar* vals = nullptr;
    petsc_check(MatGetRow(A, i, &count, &cols, &vals), "MatGetRow");
    for (PetscInt k = 0; k < count; ++k) entries.emplace_back(static_cast<int>(i), static_cast<int>(cols[k]), vals[k]);
    petsc_check(MatRestoreRow(A, i, &count, &cols, &vals), "MatRestoreRow");
  }
  Sparse s(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n));
  s.setFromTriplets(entries.begin(), entries.end());
  return s;
}

// A_SS d = rhs for a consistent right-hand side (rhs lies in the range of A_SS for the impact QPs: b_S + A_SW x_W
// = N_Sᵀ(v + M⁻¹N_W x_W)). Proximal-point refinement d ← d + (A_SS + ρI)⁻¹(rhs − A_SS d) from d = 0 keeps d in
// the range of A_SS, so it tends to the minimum-norm solution whatever ρ; a smaller ρ is tried when it stalls.
struct FaceSolution {
  Eigen::VectorXd d;
  double residual = std::numeric_limits<double>::infinity();  // ‖rhs − A_SS d‖∞
  int factorisations = 0;
};

FaceSolution solve_face(const Sparse& A, std::span<const int> face, std::span<const int> position,
                        const Eigen::VectorXd& rhs, double target) {
  const auto m = static_cast<Eigen::Index>(face.size());
  std::vector<Eigen::Triplet<double>> entries;
  double diagonal = 0.0;
  for (Eigen::Index q = 0; q < m; ++q) {
    for (Sparse::InnerIterator it(A, face[q]); it; ++it) {
      const int p = position[it.row()];
      if (p < 0) continue;
      entries.emplace_back(p, static_cast<int>(q), it.value());
      if (p == q) diagonal = std::max(diagonal, it.value());
    }
  }
  Sparse a(m, m);
  a.setFromTriplets(entries.begin(), entries.end());
  Sparse identity(m, m);
  identity.setIdentity();
  FaceSolution best;
  best.d = Eigen::VectorXd::Zero(m);
  best.residual = rhs.lpNorm<Eigen::Infinity>();
  Eigen::SimplicialLDLT<Sparse> ldlt;
  bool analysed = false;
  for (double shift = kFirstShift; shift >= kLastShift && best.residual > target; shift *= 1e-2) {
    const Sparse shifted = a + (shift * std::max(diagonal, 1.0)) * identity;
    if (!analysed) ldlt.analyzePattern(shifted), analysed = true;
    ldlt.factorize(shifted);
    ++best.factorisations;
    if (ldlt.info() != Eigen::Success) continue;
    Eigen::VectorXd d = best.d, r = rhs - a * d;
    double last = best.residual;
    int slow = 0;
    for (int k = 0; k < kRefinements && best.residual > target; ++k) {
      d += ldlt.solve(r);
      r = rhs - a * d;
      const double now = r.lpNorm<Eigen::Infinity>();
      if (!std::isfinite(now)) break;
      if (now < best.residual) best.d = d, best.residual = now;
      slow = now > 0.5 * last ? slow + 1 : 0;  // the shift dominates the eigenvalues left, or round-off is reached
      if (slow >= 3) break;
      last = now;
    }
  }
  return best;
}

// Where x_i sits: -1 at lower, +1 at upper, 2 fixed (lower = upper), 0 free.
int where(double x, double lower, double upper) {
  if (lower == upper) return 2;
  if (x == lower) return -1;
  if (x == upper) return 1;
  return 0;
}

// How far the gradient of a variable on a bound points into the box (its release is a descent); 0 when free.
double inward(int at, double g) { return at == -1 ? -g : at == 1 ? g : 0.0; }

}  // namespace

double projected_residual(std::span<const double> x, std::span<const double> g, std::span<const double> lower,
                          std::span<const double> upper) {
  double worst = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const int at = where(x[i], lower[i], upper[i]);
    const double r = at == 0 ? std::abs(g[i]) : at == 2 ? 0.0 : std::max(inward(at, g[i]), 0.0);
    worst = std::max(worst, r);
  }
  return worst;
}

ActiveSetReport active_set_finish(Mat A_petsc, std::span<const double> b, std::span<const double> lower,
                                  std::span<const double> upper, std::vector<double>& x,
                                  const ActiveSetOptions& options) {
  ActiveSetReport report;
  const Sparse A = to_eigen(A_petsc);
  const auto n = static_cast<int>(b.size());
  const Eigen::Map<const Eigen::VectorXd> bv(b.data(), n);
  Eigen::Map<Eigen::VectorXd> xv(x.data(), n);
  const double tol = options.tolerance;
  // Released bounds must point inside by more than this, and a face counts as solved below it: the residual left
  // after the last release is then at most the tolerance.
  const double release = 0.5 * tol;
  std::vector<int> position(static_cast<std::size_t>(n), -1), face, released;
  for (int i = 0; i < n; ++i) x[i] = std::clamp(x[i], lower[i], upper[i]);
  for (report.iterations = 0; report.iterations < options.max_iterations;) {
    const Eigen::VectorXd g = A * xv + bv;
    report.residual = projected_residual(x, {g.data(), static_cast<std::size_t>(n)}, lower, upper);
    if (report.residual <= tol) {
      report.converged = true;
      return report;
    }
    std::vector<int> free;
    double face_residual = 0.0;
    for (int i = 0; i < n; ++i) {
      if (where(x[i], lower[i], upper[i]) != 0) continue;
      free.push_back(i);
      face_residual = std::max(face_residual, std::abs(g[i]));
    }
    // Lawson–Hanson: finish the face first; from its minimiser release every bound whose gradient points inside.
    released.clear();
    if (face_residual <= release) {
      for (int i = 0; i < n; ++i) {
        if (inward(where(x[i], lower[i], upper[i]), g[i]) > release) released.push_back(i);
      }
      std::sort(released.begin(), released.end(), [&](int p, int q) {
        return inward(where(x[p], lower[p], upper[p]), g[p]) > inward(where(x[q], lower[q], upper[q]), g[q]);
      });
      if (options.single_release && released.size() > 1) released.resize(1);
    }
    FaceSolution step;
    for (;;) {
      face = free;
      face.insert(face.end(), released.begin(), released.end());
      for (std::size_t k = 0; k < face.size(); ++k) position[face[k]] = static_cast<int>(k);
      Eigen::VectorXd rhs(static_cast<Eigen::Index>(face.size()));
      for (std::size_t k = 0; k < face.size(); ++k) rhs[static_cast<Eigen::Index>(k)] = -g[face[k]];
      step = solve_face(A, face, position, rhs, 0.25 * tol);
      ++report.iterations;
      report.factorisations += step.factorisations;
      for (const int i : face) position[i] = -1;
      // A released variable the face's minimiser pushes out again stays on its bound. One alone always moves
      // inside (its column is independent of the face's: Lawson–Hanson's lemma); none then means round-off won.
      std::vector<int> moving;
      for (std::size_t k = free.size(); k < face.size(); ++k) {
        const int i = face[k];
        const double d = step.d[static_cast<Eigen::Index>(k)];
        if ((x[i] == lower[i] && d > 0) || (x[i] == upper[i] && d < 0)) moving.push_back(i);
      }
      if (moving.size() == released.size()) break;
      if (moving.empty() && released.size() == 1) return report;
      if (moving.empty()) released.resize(1);  // the most violated
      else released = moving;
    }
    // The step towards the face's minimiser, stopped at the first bound it meets.
    double t = 1.0;
    for (std::size_t k = 0; k < face.size(); ++k) {
      const int i = face[k];
      const double d = step.d[static_cast<Eigen::Index>(k)];
      if (d < 0 && lower[i] - x[i] > t * d) t = (lower[i] - x[i]) / d;
      if (d > 0 && upper[i] - x[i] < t * d) t = (upper[i] - x[i]) / d;
    }
    t = std::max(t, 0.0);
    bool moved = false;
    for (std::size_t k = 0; k < face.size(); ++k) {
      const int i = face[k];
      const double d = step.d[static_cast<Eigen::Index>(k)];
      const double before = x[i];
      double next = x[i] + t * d;
      // The blocking variables land exactly on their bound (within the rounding of the ratio).
      if (d < 0 && next - lower[i] <= 4 * std::numeric_limits<double>::epsilon() * std::abs(t * d)) next = lower[i];
      if (d > 0 && upper[i] - next <= 4 * std::numeric_limits<double>::epsilon() * std::abs(t * d)) next = upper[i];
      x[i] = std::clamp(next, lower[i], upper[i]);
      moved = moved || x[i] != before;
    }
    if (!moved) return report;
    // A full step that leaves the face unsolved (the refinement met round-off above the target) will not improve.
    if (t == 1.0 && released.empty() && step.residual > release) {
      const Eigen::VectorXd g_after = A * xv + bv;
      report.residual = projected_residual(x, {g_after.data(), static_cast<std::size_t>(n)}, lower, upper);
      report.converged = report.residual <= tol;
      return report;
    }
  }
  const Eigen::VectorXd g = A * xv + bv;
  report.residual = projected_residual(x, {g.data(), static_cast<std::size_t>(n)}, lower, upper);
  report.converged = report.residual <= tol;
  return report;
}

}  // namespace percussion::impact
