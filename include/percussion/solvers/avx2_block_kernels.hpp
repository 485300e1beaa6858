#pragma once
// AVX2/FMA versions of the CG iteration's 6×6-block kernels: the D-ILU sweeps of eisenstat_dilu.hpp and the
// single-precision SBAIJ product of single_precision_product.hpp. The build stays portable (no -march): these
// functions alone are compiled for AVX2 and FMA, and are used only where the CPU reports both.
//
// (The IC(0) application shares the sweeps' two patterns: a forward push of Uᵀ's columns, a backward pull of U's rows.)
// Why: Eigen's fixed 6×6 float kernels are compiled for SSE2 and spend their time shuffling 6-vectors in
// 4-wide registers and reducing each block's dot products. Here a block row's dot products accumulate in 8-wide
// registers and are reduced once per row, and the vectors the sweeps write (t, acc) are kept 8 floats apart, so
// loads and stores are whole registers. The gain is largest while the blocks fit in cache; on large matrices the
// sweeps are bound by memory bandwidth (scripts/bench/single_precision_kernels.sh compares both).
#include <petscsys.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PERCUSSION_AVX2_KERNELS 1
#else
#define PERCUSSION_AVX2_KERNELS 0
#endif

namespace percussion::solvers::avx2 {

// Padded stride of the sweeps' 6-vectors (t, acc): one 8-float register each, lanes 6 and 7 kept zero in t.
constexpr int kStride = 8;
// Floats a block array needs after its last block: a block row is loaded as 8 floats, 2 past its 6.
constexpr int kPad = 8;

// IEEE binary16 bits. IC(0)'s factor is stored so: it is only a preconditioner (the halves' rounding, 2⁻¹¹, barely
// moves CG's iteration counts), and its application is bound by reading it. F16C converts 8 at a time to floats.
// The split's blocks (D-ILU, Gauss–Seidel) only on request (-bdem_half_precision_split): they are the operator CG
// solves with, and where CG must resolve a stiff body's slow modes (a slowly pulled beam) rounding them costs
// Newton and CG iterations.
using Half = std::uint16_t;

// Sizes a block array for `size` values of blocks followed by kPad zeros.
template <class T>
void resize_padded(std::vector<T>& blocks, std::size_t size) {
  blocks.resize(size + kPad);
  std::fill(blocks.end() - kPad, blocks.end(), T{0});
}

// True when this build has the kernels, the CPU runs AVX2, FMA and F16C, and the environment does not set
// PERCUSSION_AVX2=0.
bool supported();

#if PERCUSSION_AVX2_KERNELS
// out[i] = in[i] rounded to the nearest half, i < n. False if some |in[i]| is beyond the largest half (65504) or NaN:
// out then holds an infinity or NaN and must not be used.
bool to_half(const float* in, std::size_t n, Half* out);
// The split's sweeps, over row-major 6×6 blocks T = float, or Half (read as halves, the arithmetic in floats).
// Each sweeps the rows begin ≤ k < end (all n rows: 0, n); a sweep split into row ranges, in its order, gives the
// whole sweep's result (the cross-rank sweeps of rank_coupling.hpp run between the ranges).
// The vectors u and out are doubles, or floats (CG's vectors on the split, fused_cg.hpp: the sweeps round u to floats
// and form out in floats anyway, so storing them as floats loses nothing and halves their traffic).
// t_k = u_k − Σ_p Ũ_p t_column(p) for k = end−1 … begin (t with kStride, lanes 6-7 zero).
template <class T, class V>
void dilu_backward(PetscInt begin, PetscInt end, const PetscInt* first, const PetscInt* column, const T* upper,
                   const V* u, float* t);
// For k = begin … end−1: w_k = u_k + K̃_k t_k + acc_k (+ c_k), acc_column(p) −= Ũ_pᵀ w_k, out_k = t_k + w_k. K̃_k is
// symmetric (row-major), or −I for every k when k_tilde is null; acc (kStride) must be zero on entry to the whole
// sweep, and is zero again after it; c may be null. Returns the range's part of u·out.
template <class T, class V>
double dilu_forward(PetscInt begin, PetscInt end, const PetscInt* first, const PetscInt* column, const T* upper,
                    const float* k_tilde, const float* t, const V* u, const double* c, float* acc, V* out);
// For k = begin … end−1: w_k = acc_k, acc_k = 0, acc_column(p) −= Ũ_pᵀ w_k, out_k = w_k: the forward solve
// (I + L̃) out = acc (acc with kStride, zero after the whole sweep).
template <class T>
void dilu_forward_solve(PetscInt begin, PetscInt end, const PetscInt* first, const PetscInt* column, const T* upper,
                        float* acc, double* out);
// The split's scalings by the pivots' C_k⁻¹ (lower triangular, stored column by column as floats, read 2 floats
// past a block's end), for the rows 0 ≤ k < n: acc_k = C_k⁻¹ b_k (acc with kStride, lanes 6-7 zero), and
// y_k = C_k⁻ᵀ t_k (t with kStride, lanes 6-7 zero). In floats, where the double blocks were read before: the
// right-hand side enters the sweeps as floats anyway, and y is CG's solution, good to its forcing term.
void scale_rows(PetscInt n, const float* c_columns, const double* b, float* acc);
void unscale_rows(PetscInt n, const float* c_columns, const float* t, double* y);
// out = C_k⁻¹ A C_l⁻ᵀ as row-major floats: A a 6×6 block in PETSc's order (column by column, doubles), C_k⁻¹ and
// C_l⁻¹ lower triangular, stored column by column (C_l⁻¹ is read 2 floats past its end).
void scale_block(const double* a, const float* ck_columns, const float* cl_columns, float* out);
// inverse_cholesky_factor<6> (block_cholesky.hpp) of four blocks at once, m[i] from a[i], its results to the bit (its
// operations in its order in each lane, no FMA). Returns bit i set where a[i] is positive definite (elsewhere m[i]
// holds junk). Row-major 6×6 blocks; a read from its lower triangle; m may not alias a.
int inverse_cholesky_factor4(const double* const a[4], double* const m[4]);
// y = (Uᵀ D U)⁻¹ x, the IC(0) application of single_precision_icc.hpp: U unit upper triangular from its row-major
// off-diagonal blocks (floats, or halves: the arithmetic stays in floats), D⁻¹ the row-major pivot inverses; t is
// scratch of n·kStride floats.
void icc_apply(PetscInt n, const PetscInt* first, const PetscInt* column, const float* upper,
               const float* pivot_inverse, const double* x, double* y, float* t);
void icc_apply(PetscInt n, const PetscInt* first, const PetscInt* column, const Half* upper,
               const float* pivot_inverse, const double* x, double* y, float* t);
// Row k of the IC(0) factorisation of single_precision_icc.hpp, in single precision: given D_k⁻¹ (row-major), for
// every off-diagonal block p of the row, upper_p = D_k⁻¹ Ũ_p; then the Schur complement on the pattern,
// diag_j −= Ũ_pᵀ upper_p and Ũ_r −= Ũ_pᵀ upper_q for every block r = (j, l) of row j = column(p) whose column
// l = column(q), q > p, is in row k. `work` holds the off-diagonal blocks Ũ, `diag` the diagonal ones; both and
// `upper` are read 2 floats past a block, so they end in avx2::kPad readable floats.
void icc_eliminate_row(PetscInt k, const PetscInt* first, const PetscInt* column, const float* pivot_inverse,
                       float* work, float* diag, float* upper);
// y_r = D_r x_r for n 6×6 float blocks stored one after the other, each column by column (point-block Jacobi's
// inverted diagonal); the arithmetic in double.
void block_diagonal_apply(PetscInt n, const float* blocks, const double* x, double* y);
// y = A x for the upper triangle of a symmetric 6×6-block matrix (PETSc's layout: the diagonal block first in each
// row, every block column by column).
void sbaij_multiply(PetscInt n, const PetscInt* first, const PetscInt* column, const float* values, const double* x,
                    double* y);
#endif

}  // namespace percussion::solvers::avx2
