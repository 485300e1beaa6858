#pragma once
// Conjugate gradients from x = 0, stopping when |r| ≤ rtol |b| (2-norms), as PETSc's KSPCG does (with PCNONE and
// the natural norm, or a preconditioner and the unpreconditioned norm), but with an iteration's vector work in
// fewer passes: x, r and rᵀr in one, p in another, where KSPCG makes a pass per operation through the reference
// BLAS, whose dot products are one serial chain. For the Newton systems, whose CG iterations are bound by memory
// traffic: on sparse matrices the vectors are as many bytes per row as the matrix.
#include <mpi.h>
#include <petscksp.h>

#include <cmath>
#include <cstddef>
#include <vector>

namespace percussion::solvers {

struct FusedCgResult {
  PetscInt iterations = 0;
  KSPConvergedReason reason = KSP_CONVERGED_ITERATING;  // PETSc's codes: RTOL, ATOL (b = 0), DIVERGED_ITS, ...
  double residual_norm = 0;
};

// What the loops report after the initial residual (iteration 0) and after every iteration: nothing, or the KSP's
// monitors (fused_cg_ksp.hpp). It only reads: the iteration's arithmetic is the same with or without it.
struct NoObserver {
  void operator()(PetscInt, double) const {}
};

// The local part of x·y, in four partial sums (one would chain every addition on the last); in double.
template <class T>
double local_dot(const T* x, const T* y, std::size_t n) {
  double sum[4] = {0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (std::size_t j = 0; j < 4; ++j) sum[j] += double(x[i + j]) * double(y[i + j]);
  for (; i < n; ++i) sum[0] += double(x[i]) * double(y[i]);
  return (sum[0] + sum[1]) + (sum[2] + sum[3]);
}

// x += αp, r −= αq in one pass, returning the local rᵀr of the new r (four partial sums, as local_dot). The
// arithmetic in double, x and r rounded to T.
template <class T>
double cg_step(T* x, T* r, const T* p, const T* q, double alpha, std::size_t n) {
  double sum[4] = {0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (std::size_t j = 0; j < 4; ++j) {
      x[i + j] = T(double(x[i + j]) + alpha * double(p[i + j]));
      r[i + j] = T(double(r[i + j]) - alpha * double(q[i + j]));
      sum[j] += double(r[i + j]) * double(r[i + j]);
    }
  for (; i < n; ++i) {
    x[i] = T(double(x[i]) + alpha * double(p[i]));
    r[i] = T(double(r[i]) - alpha * double(q[i]));
    sum[0] += double(r[i]) * double(r[i]);
  }
  return (sum[0] + sum[1]) + (sum[2] + sum[3]);
}

// Collective. n local values; apply(p, q) must set q = A p (A symmetric positive definite, collective) and return
// the local part of p·q. x receives the solution; `work` is resized to 3n and reused between calls.
// x, r, p and q are stored as T: double, or float where A rounds p to floats and forms q in floats anyway (the
// split's sweeps), which halves the traffic of a loop bound by it. Every sum stays in double, and p, the direction
// both q and x's update take, is the same rounded p; x and r are rounded each iteration, 6e-8 of themselves, far
// below the forcing terms (1e-2 to 1e-4) they are used with (BlockSystem::kFloatVectorsRtol), and the split's
// solution map rounds x to floats anyway. observe(iteration, |r|) as NoObserver says.
template <class T, class Apply, class Observe = NoObserver>
FusedCgResult fused_cg(MPI_Comm comm, std::size_t n, const double* b, T* x, double rtol, PetscInt max_iterations,
                       std::vector<T>& work, Apply&& apply, Observe&& observe = Observe{}) {
  work.resize(3 * n);
  T* r = work.data();
  T* p = r + n;
  T* q = p + n;
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = 0;
    r[i] = p[i] = T(b[i]);
  }
  double rr = local_dot(static_cast<const T*>(r), static_cast<const T*>(r), n);
  MPI_Allreduce(MPI_IN_PLACE, &rr, 1, MPI_DOUBLE, MPI_SUM, comm);
  FusedCgResult result;
  result.residual_norm = std::sqrt(rr);
  observe(0, result.residual_norm);
  if (rr == 0) {
    result.reason = KSP_CONVERGED_ATOL;
    return result;
  }
  const double target = rtol * result.residual_norm;
  while (result.iterations < max_iterations) {
    double pq = apply(static_cast<const T*>(p), q);
    MPI_Allreduce(MPI_IN_PLACE, &pq, 1, MPI_DOUBLE, MPI_SUM, comm);
    if (!(pq > 0)) {  // the same decision on every rank: pq is a global sum
      result.reason = std::isfinite(pq) ? KSP_DIVERGED_INDEFINITE_MAT : KSP_DIVERGED_NANORINF;
      return result;
    }
    const double alpha = rr / pq;
    double next = cg_step(x, r, p, q, alpha, n);
    MPI_Allreduce(MPI_IN_PLACE, &next, 1, MPI_DOUBLE, MPI_SUM, comm);
    ++result.iterations;
    result.residual_norm = std::sqrt(next);
    observe(result.iterations, result.residual_norm);
    if (!std::isfinite(next)) {
      result.reason = KSP_DIVERGED_NANORINF;
      return result;
    }
    if (result.residual_norm <= target) {
      result.reason = KSP_CONVERGED_RTOL;
      return result;
    }
    const double beta = next / rr;
    for (std::size_t i = 0; i < n; ++i) p[i] = T(double(r[i]) + beta * double(p[i]));
    rr = next;
  }
  result.reason = KSP_DIVERGED_ITS;
  return result;
}

// Collective. Preconditioned CG: as fused_cg, with precondition(r, z) setting z = M⁻¹ r (M symmetric positive
// definite; local to the rank or collective), and `work` resized to 4n. Stops on the true residual |r|, as
// KSP_NORM_UNPRECONDITIONED; apply returns the local p·q as before. rᵀr and rᵀz are summed over the ranks together,
// after the preconditioner, which is therefore applied once more at the last iteration than KSPCG does.
template <class Apply, class Precondition, class Observe = NoObserver>
FusedCgResult fused_pcg(MPI_Comm comm, std::size_t n, const double* b, double* x, double rtol,
                        PetscInt max_iterations, std::vector<double>& work, Apply&& apply,
                        Precondition&& precondition, Observe&& observe = Observe{}) {
  work.resize(4 * n);
  double* r = work.data();
  double* z = r + n;
  double* p = z + n;
  double* q = p + n;
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = 0;
    r[i] = b[i];
  }
  precondition(static_cast<const double*>(r), z);
  double sums[2] = {local_dot(r, r, n), local_dot(r, z, n)};  // rᵀr, rᵀz
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, comm);
  FusedCgResult result;
  result.residual_norm = std::sqrt(sums[0]);
  observe(0, result.residual_norm);
  if (sums[0] == 0) {
    result.reason = KSP_CONVERGED_ATOL;
    return result;
  }
  const double target = rtol * result.residual_norm;
  double rz = sums[1];
  for (std::size_t i = 0; i < n; ++i) p[i] = z[i];
  while (result.iterations < max_iterations) {
    if (!(rz > 0)) {  // global sums: the same decision on every rank
      result.reason = rz < 0 ? KSP_DIVERGED_INDEFINITE_PC : std::isfinite(rz) ? KSP_CONVERGED_ATOL
                                                                                 : KSP_DIVERGED_NANORINF;
      return result;
    }
    double pq = apply(static_cast<const double*>(p), q);
    MPI_Allreduce(MPI_IN_PLACE, &pq, 1, MPI_DOUBLE, MPI_SUM, comm);
    if (!(pq > 0)) {
      result.reason = std::isfinite(pq) ? KSP_DIVERGED_INDEFINITE_MAT : KSP_DIVERGED_NANORINF;
      return result;
    }
    sums[0] = cg_step(x, r, p, q, rz / pq, n);
    ++result.iterations;
    precondition(static_cast<const double*>(r), z);
    sums[1] = local_dot(r, z, n);
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, comm);
    result.residual_norm = std::sqrt(sums[0]);
    observe(result.iterations, result.residual_norm);
    if (!std::isfinite(sums[0])) {
      result.reason = KSP_DIVERGED_NANORINF;
      return result;
    }
    if (result.residual_norm <= target) {
      result.reason = KSP_CONVERGED_RTOL;
      return result;
    }
    const double beta = sums[1] / rz;
    for (std::size_t k = 0; k < n; ++k) p[k] = z[k] + beta * p[k];
    rz = sums[1];
  }
  result.reason = KSP_DIVERGED_ITS;
  return result;
}

}  // namespace percussion::solvers
