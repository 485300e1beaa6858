#pragma once
// Unpreconditioned conjugate gradients from x = 0, stopping when |r| ≤ rtol |b| (2-norms), as PETSc's KSPCG with
// PCNONE and the natural norm does, but with an iteration's vector work in two passes after the operator, where
// KSPCG makes six (the identity preconditioner's copy, two dot products and three updates, through the
// reference BLAS). For the Eisenstat split system (eisenstat_dilu.hpp), whose CG iterations are bound by memory
// traffic: its sweeps read about as many bytes per row as KSPCG's vector work.
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

// The local part of x·y, in four partial sums (one would chain every addition on the last).
inline double local_dot(const double* x, const double* y, std::size_t n) {
  double sum[4] = {0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (std::size_t j = 0; j < 4; ++j) sum[j] += x[i + j] * y[i + j];
  for (; i < n; ++i) sum[0] += x[i] * y[i];
  return (sum[0] + sum[1]) + (sum[2] + sum[3]);
}

// Collective. n local values; apply(p, q) must set q = A p (A symmetric positive definite, collective) and return
// the local part of p·q. x receives the solution; `work` is resized to 3n and reused between calls.
template <class Apply>
FusedCgResult fused_cg(MPI_Comm comm, std::size_t n, const double* b, double* x, double rtol, PetscInt max_iterations,
                       std::vector<double>& work, Apply&& apply) {
  work.resize(3 * n);
  double* r = work.data();
  double* p = r + n;
  double* q = p + n;
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = 0;
    r[i] = p[i] = b[i];
  }
  double rr = local_dot(b, b, n);
  MPI_Allreduce(MPI_IN_PLACE, &rr, 1, MPI_DOUBLE, MPI_SUM, comm);
  FusedCgResult result;
  result.residual_norm = std::sqrt(rr);
  if (rr == 0) {
    result.reason = KSP_CONVERGED_ATOL;
    return result;
  }
  const double target = rtol * result.residual_norm;
  while (result.iterations < max_iterations) {
    double pq = apply(static_cast<const double*>(p), q);
    MPI_Allreduce(MPI_IN_PLACE, &pq, 1, MPI_DOUBLE, MPI_SUM, comm);
    if (!(pq > 0)) {  // the same decision on every rank: pq is a global sum
      result.reason = std::isfinite(pq) ? KSP_DIVERGED_INDEFINITE_MAT : KSP_DIVERGED_NANORINF;
      return result;
    }
    const double alpha = rr / pq;
    double next = 0;
    {
      double sum[4] = {0, 0, 0, 0};
      std::size_t i = 0;
      for (; i + 4 <= n; i += 4)
        for (std::size_t j = 0; j < 4; ++j) {
          x[i + j] += alpha * p[i + j];
          r[i + j] -= alpha * q[i + j];
          sum[j] += r[i + j] * r[i + j];
        }
      for (; i < n; ++i) {
        x[i] += alpha * p[i];
        r[i] -= alpha * q[i];
        sum[0] += r[i] * r[i];
      }
      next = (sum[0] + sum[1]) + (sum[2] + sum[3]);
    }
    MPI_Allreduce(MPI_IN_PLACE, &next, 1, MPI_DOUBLE, MPI_SUM, comm);
    ++result.iterations;
    result.residual_norm = std::sqrt(next);
    if (!std::isfinite(next)) {
      result.reason = KSP_DIVERGED_NANORINF;
      return result;
    }
    if (result.residual_norm <= target) {
      result.reason = KSP_CONVERGED_RTOL;
      return result;
    }
    const double beta = next / rr;
    for (std::size_t i = 0; i < n; ++i) p[i] = r[i] + beta * p[i];
    rr = next;
  }
  result.reason = KSP_DIVERGED_ITS;
  return result;
}

}  // namespace percussion::solvers
