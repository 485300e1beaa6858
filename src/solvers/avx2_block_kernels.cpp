#include "percussion/solvers/avx2_block_kernels.hpp"

#include <cstdlib>
#include <string>

#if PERCUSSION_AVX2_KERNELS
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#endif

namespace percussion::solvers::avx2 {
namespace {
// PERCUSSION_AVX2=0 runs the portable kernels: to compare the two, or if a CPU misreports its instruction sets.
[[maybe_unused]] bool turned_off() {
  const char* value = std::getenv("PERCUSSION_AVX2");
  return value && std::string(value) == "0";
}
}  // namespace

#if PERCUSSION_AVX2_KERNELS
namespace {
constexpr std::size_t B = 6, BB = 36, S = kStride;
#define PERCUSSION_AVX2 __attribute__((target("avx2,fma,f16c")))

// Six doubles to floats in lanes 0-5, zeros in 6-7.
PERCUSSION_AVX2 inline __m256 load6(const double* u) {
  const __m128 lo = _mm256_cvtpd_ps(_mm256_loadu_pd(u));
  const __m128 hi = _mm_cvtpd_ps(_mm_loadu_pd(u + 4));
  return _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
}

// Lane r (r < 6) = the sum of a[r]'s eight lanes; lanes 6-7 zero.
PERCUSSION_AVX2 inline __m256 sum_lanes(const __m256* a) {
  const __m256 h01 = _mm256_hadd_ps(a[0], a[1]);
  const __m256 h23 = _mm256_hadd_ps(a[2], a[3]);
  const __m256 h45 = _mm256_hadd_ps(a[4], a[5]);
  const __m256 q0 = _mm256_hadd_ps(h01, h23);  // per half: the sums of a0, a1, a2, a3 over that half's lanes
  const __m256 q1 = _mm256_hadd_ps(h45, _mm256_setzero_ps());
  const __m128 r0 = _mm_add_ps(_mm256_castps256_ps128(q0), _mm256_extractf128_ps(q0, 1));
  const __m128 r1 = _mm_add_ps(_mm256_castps256_ps128(q1), _mm256_extractf128_ps(q1, 1));
  return _mm256_insertf128_ps(_mm256_castps128_ps256(r0), r1, 1);
}

PERCUSSION_AVX2 inline void store6(double* out, __m256 v) {
  _mm256_storeu_pd(out, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
  _mm_storeu_pd(out + 4, _mm_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}

// The same for six floats (4 + 2: nothing read or written past them, the next row being another range's).
PERCUSSION_AVX2 inline __m256 load6(const float* u) {
  const __m128 hi = _mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(u + 4)));
  return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(u)), hi, 1);
}
PERCUSSION_AVX2 inline void store6(float* out, __m256 v) {
  _mm_storeu_ps(out, _mm256_castps256_ps128(v));
  _mm_storel_pi(reinterpret_cast<__m64*>(out + 4), _mm256_extractf128_ps(v, 1));
}

// Accumulates u·o over six lanes in double (lanes 0-3 in dot4, 4-5 in dot2).
PERCUSSION_AVX2 inline void add_dot6(const double* u, __m256 o, __m256d& dot4, __m128d& dot2) {
  dot4 = _mm256_fmadd_pd(_mm256_loadu_pd(u), _mm256_cvtps_pd(_mm256_castps256_ps128(o)), dot4);
  dot2 = _mm_fmadd_pd(_mm_loadu_pd(u + 4), _mm_cvtps_pd(_mm256_extractf128_ps(o, 1)), dot2);
}
PERCUSSION_AVX2 inline void add_dot6(const float* u, __m256 o, __m256d& dot4, __m128d& dot2) {
  const __m256 uv = load6(u);
  dot4 = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(uv)), _mm256_cvtps_pd(_mm256_castps256_ps128(o)), dot4);
  dot2 = _mm_fmadd_pd(_mm_cvtps_pd(_mm256_extractf128_ps(uv, 1)), _mm_cvtps_pd(_mm256_extractf128_ps(o, 1)), dot2);
}

// A block row of 6 values as 8 floats (lanes 6-7 hold the next row's first values).
PERCUSSION_AVX2 inline __m256 load_row(const float* row) { return _mm256_loadu_ps(row); }
PERCUSSION_AVX2 inline __m256 load_row(const Half* row) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row)));
}

// The two sweep patterns over block row k of row-major 6×6 blocks (a block row is loaded as 8 values, so lanes 6-7
// read the next row's first entries).
// Pull: a[r] += (row r of each block) ∘ v_column, lane by lane, for a reduction once per block row; v's lanes 6-7
// must be zero.
template <class T>
PERCUSSION_AVX2 inline void pull_row(PetscInt k, const PetscInt* first, const PetscInt* column, const T* upper,
                                     const float* v, __m256* a) {
  for (PetscInt p = first[k]; p < first[k + 1]; ++p) {
    const __m256 vl = _mm256_loadu_ps(v + static_cast<std::size_t>(column[p]) * S);
    const T* block = upper + static_cast<std::size_t>(p) * BB;
    for (std::size_t r = 0; r < B; ++r) a[r] = _mm256_fmadd_ps(load_row(block + B * r), vl, a[r]);
  }
}

// Push: acc_column −= blockᵀ w = Σ_r w_r (row r of the block), for each block of row k (w: 8 aligned floats, the
// first 6 used); lanes 6-7 of acc collect junk.
template <class T>
PERCUSSION_AVX2 inline void push_row(PetscInt k, const PetscInt* first, const PetscInt* column, const T* upper,
                                     const float* w, float* acc) {
  for (PetscInt p = first[k]; p < first[k + 1]; ++p) {
    float* al = acc + static_cast<std::size_t>(column[p]) * S;
    const T* block = upper + static_cast<std::size_t>(p) * BB;
    __m256 a = _mm256_loadu_ps(al);
    for (std::size_t r = 0; r < B; ++r) a = _mm256_fnmadd_ps(_mm256_set1_ps(w[r]), load_row(block + B * r), a);
    _mm256_storeu_ps(al, a);
  }
}
}  // namespace

bool supported() {
  static const bool yes = [] {
    __builtin_cpu_init();  // in case this runs in a static constructor, before libgcc's own has
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c") &&
           !turned_off();
  }();
  return yes;
}

PERCUSSION_AVX2 bool to_half(const float* in, std::size_t n, Half* out) {
  constexpr float kLargest = 65504.0f;  // the largest finite half
  const __m256 largest = _mm256_set1_ps(kLargest);
  const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  __m256 fits = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(in + i);
    fits = _mm256_and_ps(fits, _mm256_cmp_ps(_mm256_and_ps(v, magnitude), largest, _CMP_LE_OQ));  // false for NaN
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
  }
  bool all = _mm256_movemask_ps(fits) == 0xff;
  for (; i < n; ++i) {
    all = all && std::abs(in[i]) <= kLargest;
    out[i] = _cvtss_sh(in[i], _MM_FROUND_TO_NEAREST_INT);
  }
  return all;
}

namespace {
template <class T, class V>
PERCUSSION_AVX2 void backward_sweep(PetscInt begin, PetscInt end, const PetscInt* first, const PetscInt* column,
                                    const T* upper, const V* u, float* t) {
  // The sweep runs down the rows, and the hardware prefetchers follow ascending streams: request the blocks of
  // the row four below now (as eisenstat_dilu.cpp does for its own sweep).
  constexpr PetscInt kAhead = 4;
  for (PetscInt k = end; k-- > begin;) {
    if (k >= kAhead) {  // (the rows below the range are the next range's)
      const char* line = reinterpret_cast<const char*>(upper + static_cast<std::size_t>(first[k - kAhead]) * BB);
      const char* stop = reinterpret_cast<const char*>(upper + static_cast<std::size_t>(first[k - kAhead + 1]) * BB);
      for (; line < stop; line += 64) __builtin_prefetch(line);
    }
    __m256 a[6] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    pull_row(k, first, column, upper, t, a);  // the t_l written have zero lanes 6-7
    _mm256_storeu_ps(t + static_cast<std::size_t>(k) * S, _mm256_sub_ps(load6(u + B * k), sum_lanes(a)));
  }
}

template <class T, class V>
PERCUSSION_AVX2 double forward_sweep(PetscInt begin, PetscInt end, const PetscInt* first, const PetscInt* column,
                                     const T* upper, const float* k_tilde, const float* t, const V* u,
                                     const double* c, float* acc, V* out) {
  alignas(32) float tk[S], wk[S];
  __m256d dot4 = _mm256_setzero_pd();
  __m128d dot2 = _mm_setzero_pd();
  for (PetscInt k = begin; k < end; ++k) {
    const std::size_t kk = static_cast<std::size_t>(k);
    const __m256 tv = _mm256_loadu_ps(t + kk * S);
    __m256 w = _mm256_add_ps(load6(u + B * kk), _mm256_loadu_ps(acc + kk * S));
    _mm256_storeu_ps(acc + kk * S, _mm256_setzero_ps());  // read for the last time: zero for the next sweep
    if (c) w = _mm256_add_ps(w, load6(c + B * kk));
    if (k_tilde) {
      // K̃_k t_k as Σ_r t_r (row r of K̃_k), K̃_k being symmetric: no reduction. Lanes 6-7 collect junk, unused.
      _mm256_store_ps(tk, tv);
      const float* kt = k_tilde + kk * BB;
      for (std::size_t r = 0; r < B; ++r) w = _mm256_fmadd_ps(_mm256_set1_ps(tk[r]), _mm256_loadu_ps(kt + B * r), w);
    } else {
      w = _mm256_sub_ps(w, tv);
    }
    _mm256_store_ps(wk, w);
    push_row(k, first, column, upper, wk, acc);  // acc_l −= Ũᵀ w
    const __m256 o = _mm256_add_ps(tv, w);
    store6(out + B * kk, o);
    add_dot6(u + B * kk, o, dot4, dot2);
  }
  alignas(32) double lanes[4], rest[2];
  _mm256_store_pd(lanes, dot4);
  _mm_store_pd(rest, dot2);
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + (rest[0] + rest[1]);
}

template <class T>
PERCUSSION_AVX2 void forward_solve_sweep(PetscInt begin, PetscInt end, const PetscInt* first, const PetscInt* column,
                                         const T* upper, float* acc, double* out) {
  alignas(32) float wk[S];
  for (PetscInt k = begin; k < end; ++k) {
    float* ak = acc + static_cast<std::size_t>(k) * S;
    const __m256 w = _mm256_loadu_ps(ak);
    _mm256_storeu_ps(ak, _mm256_setzero_ps());
    _mm256_store_ps(wk, w);
    push_row(k, first, column, upper, wk, acc);
    store6(out + B * static_cast<std::size_t>(k), w);
  }
}

}  // namespace

// (The AVX2 target is the sweeps', not these entry points', which take no vector arguments.)
template <class T, class V>
void dilu_backward(PetscInt begin, PetscInt end, const PetscInt* first, const PetscInt* column, const T* upper,
                   const V* u, float* t) {
  backward_sweep(begin, end, first, column, upper, u, t);
}
template <class T, class V>
double dilu_forward(PetscInt begin, PetscInt end, const PetscInt* first, const PetscInt* column, const T* upper,
                    const float* k_tilde, const float* t, const V* u, const double* c, float* acc, V* out) {
  return forward_sweep(begin, end, first, column, upper, k_tilde, t, u, c, acc, out);
}
template <class T>
void dilu_forward_solve(PetscInt begin, PetscInt end, const PetscInt* first, const PetscInt* column, const T* upper,
                        float* acc, double* out) {
  forward_solve_sweep(begin, end, first, column, upper, acc, out);
}
// The blocks as floats or as halves; the vectors as doubles or floats.
template void dilu_backward(PetscInt, PetscInt, const PetscInt*, const PetscInt*, const float*, const double*, float*);
template void dilu_backward(PetscInt, PetscInt, const PetscInt*, const PetscInt*, const Half*, const double*, float*);
template void dilu_backward(PetscInt, PetscInt, const PetscInt*, const PetscInt*, const float*, const float*, float*);
template void dilu_backward(PetscInt, PetscInt, const PetscInt*, const PetscInt*, const Half*, const float*, float*);
template double dilu_forward(PetscInt, PetscInt, const PetscInt*, const PetscInt*, const float*, const float*,
                             const float*, const double*, const double*, float*, double*);
template double dilu_forward(PetscInt, PetscInt, const PetscInt*, const PetscInt*, const Half*, const float*,
                             const float*, const double*, const double*, float*, double*);
template double dilu_forward(PetscInt, PetscInt, const PetscInt*, const PetscInt*, const float*, const float*,
                             const float*, const float*, const double*, float*, float*);
template double dilu_forward(PetscInt, PetscInt, const PetscInt*, const PetscInt*, const Half*, const float*,
                             const float*, const float*, const double*, float*, float*);
template void dilu_forward_solve(PetscInt, PetscInt, const PetscInt*, const PetscInt*, const float*, float*, double*);
template void dilu_forward_solve(PetscInt, PetscInt, const PetscInt*, const PetscInt*, const Half*, float*, double*);

PERCUSSION_AVX2 void scale_rows(PetscInt n, const float* c_columns, const double* b, float* acc) {
  const __m256 six = _mm256_castsi256_ps(_mm256_setr_epi32(-1, -1, -1, -1, -1, -1, 0, 0));
  for (std::size_t k = 0; k < static_cast<std::size_t>(n); ++k) {
    const float* c = c_columns + k * BB;
    alignas(32) float bk[S];
    _mm256_store_ps(bk, load6(b + B * k));
    // Σ_m (column m) b_m, column m being zero above row m; lanes 6-7 read the next column's first entries.
    __m256 sum = _mm256_mul_ps(_mm256_loadu_ps(c), _mm256_set1_ps(bk[0]));
    for (std::size_t m = 1; m < B; ++m) sum = _mm256_fmadd_ps(_mm256_loadu_ps(c + B * m), _mm256_set1_ps(bk[m]), sum);
    _mm256_storeu_ps(acc + k * S, _mm256_and_ps(sum, six));
  }
}

PERCUSSION_AVX2 void unscale_rows(PetscInt n, const float* c_columns, const float* t, double* y) {
  for (std::size_t k = 0; k < static_cast<std::size_t>(n); ++k) {
    const float* c = c_columns + k * BB;
    const __m256 tk = _mm256_loadu_ps(t + k * S);  // lanes 6-7 zero: the columns' spill-over drops out
    // y_i = (column i)·t_k: lane i of the row sums.
    __m256 a[B];
    for (std::size_t i = 0; i < B; ++i) a[i] = _mm256_mul_ps(_mm256_loadu_ps(c + B * i), tk);
    store6(y + B * k, sum_lanes(a));
  }
}

PERCUSSION_AVX2 void scale_block(const double* a, const float* ck_columns, const float* cl_columns, float* out) {
  // Row i of the result is column i of C_l⁻¹ Aᵀ C_k⁻ᵀ. First Z = C_l⁻¹ Aᵀ, column by column: z_i = Σ_m (column m of
  // C_l⁻¹) A_im, with A_im = a[6m + i]; lanes 6-7 collect junk from the next column's load, never stored.
  alignas(32) float af[BB];
  for (std::size_t q = 0; q < BB; q += 4) _mm_store_ps(af + q, _mm256_cvtpd_ps(_mm256_loadu_pd(a + q)));
  __m256 columns[B];
  for (std::size_t m = 0; m < B; ++m) columns[m] = _mm256_loadu_ps(cl_columns + B * m);
  __m256 z[B];
  for (std::size_t i = 0; i < B; ++i) {
    __m256 acc = _mm256_mul_ps(columns[0], _mm256_broadcast_ss(af + i));
    for (std::size_t m = 1; m < B; ++m) acc = _mm256_fmadd_ps(columns[m], _mm256_broadcast_ss(af + B * m + i), acc);
    z[i] = acc;
  }
  // Then row i = Σ_{m≤i} z_m (C_k⁻¹)_im, C_k⁻¹ being lower triangular; (C_k⁻¹)_im = ck_columns[6m + i].
  for (std::size_t i = 0; i < B; ++i) {
    __m256 acc = _mm256_mul_ps(z[0], _mm256_broadcast_ss(ck_columns + i));
    for (std::size_t m = 1; m <= i; ++m) acc = _mm256_fmadd_ps(z[m], _mm256_broadcast_ss(ck_columns + B * m + i), acc);
    _mm_storeu_ps(out + B * i, _mm256_castps256_ps128(acc));
    _mm_storel_pi(reinterpret_cast<__m64*>(out + B * i + 4), _mm256_extractf128_ps(acc, 1));
  }
}

namespace {
template <class T>
PERCUSSION_AVX2 void icc_apply_sweeps(PetscInt n, const PetscInt* first, const PetscInt* column, const T* upper,
                                      const float* pivot_inverse, const double* x, double* y, float* t) {
  for (PetscInt k = 0; k < n; ++k)
    _mm256_storeu_ps(t + static_cast<std::size_t>(k) * S, load6(x + B * static_cast<std::size_t>(k)));
  // Uᵀ s = x: s_k is final when reached, then pushed into the later rows (lanes 6-7 collect junk there).
  alignas(32) float sk[S];
  for (PetscInt k = 0; k < n; ++k) {
    _mm256_store_ps(sk, _mm256_loadu_ps(t + static_cast<std::size_t>(k) * S));
    push_row(k, first, column, upper, sk, t);
  }
  // z_k = D_k⁻¹ s_k − Σ U_kl z_l from the last row up, reduced once per row; the z_l written have zero lanes 6-7,
  // and s_k's junk lanes are cleared before they meet the next row's entries.
  const __m256 six = _mm256_castsi256_ps(_mm256_setr_epi32(-1, -1, -1, -1, -1, -1, 0, 0));
  for (PetscInt k = n; k-- > 0;) {
    const std::size_t kk = static_cast<std::size_t>(k);
    const __m256 s = _mm256_and_ps(_mm256_loadu_ps(t + kk * S), six);
    const float* d = pivot_inverse + kk * BB;
    __m256 a[6];  // −z_k, lane by lane
    for (std::size_t r = 0; r < B; ++r) a[r] = _mm256_fnmadd_ps(_mm256_loadu_ps(d + B * r), s, _mm256_setzero_ps());
    pull_row(k, first, column, upper, t, a);
    const __m256 z = _mm256_sub_ps(_mm256_setzero_ps(), sum_lanes(a));
    _mm256_storeu_ps(t + kk * S, z);
    store6(y + B * kk, z);
  }
}
}  // namespace

PERCUSSION_AVX2 void icc_apply(PetscInt n, const PetscInt* first, const PetscInt* column, const float* upper,
                               const float* pivot_inverse, const double* x, double* y, float* t) {
  icc_apply_sweeps(n, first, column, upper, pivot_inverse, x, y, t);
}
PERCUSSION_AVX2 void icc_apply(PetscInt n, const PetscInt* first, const PetscInt* column, const Half* upper,
                               const float* pivot_inverse, const double* x, double* y, float* t) {
  icc_apply_sweeps(n, first, column, upper, pivot_inverse, x, y, t);
}

PERCUSSION_AVX2 void sbaij_multiply(PetscInt n, const PetscInt* first, const PetscInt* column, const float* values,
                                    const double* x, double* y) {
  std::fill(y, y + static_cast<std::size_t>(n) * B, 0.0);
  for (PetscInt k = 0; k < n; ++k) {
    const std::size_t kk = static_cast<std::size_t>(k);
    const __m256d xk_lo = _mm256_loadu_pd(x + B * kk);
    const __m128d xk_hi = _mm_loadu_pd(x + B * kk + 4);
    __m256d yk_lo = _mm256_setzero_pd();
    __m128d yk_hi = _mm_setzero_pd();
    for (PetscInt p = first[k]; p < first[k + 1]; ++p) {
      const std::size_t j = static_cast<std::size_t>(column[p]);
      const float* a = values + static_cast<std::size_t>(p) * BB;
      const double* xj = x + B * j;
      __m256d s[6];  // column c times x_k, lane by lane: the transposed block's product, reduced below
      for (std::size_t col = 0; col < B; ++col) {
        const __m256d lo = _mm256_cvtps_pd(_mm_loadu_ps(a + B * col));
        const __m128d hi = _mm_cvtps_pd(_mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(a + B * col + 4))));
        const __m256d xc = _mm256_broadcast_sd(xj + col);
        yk_lo = _mm256_fmadd_pd(lo, xc, yk_lo);
        yk_hi = _mm_fmadd_pd(hi, _mm256_castpd256_pd128(xc), yk_hi);
        s[col] = _mm256_fmadd_pd(lo, xk_lo, _mm256_zextpd128_pd256(_mm_mul_pd(hi, xk_hi)));
      }
      if (j == kk) continue;  // the diagonal block is stored whole
      const __m256d h01 = _mm256_hadd_pd(s[0], s[1]);
      const __m256d h23 = _mm256_hadd_pd(s[2], s[3]);
      const __m256d h45 = _mm256_hadd_pd(s[4], s[5]);
      const __m256d sum0123 = _mm256_add_pd(_mm256_permute2f128_pd(h01, h23, 0x21), _mm256_blend_pd(h01, h23, 0xC));
      const __m128d sum45 = _mm_add_pd(_mm256_castpd256_pd128(h45), _mm256_extractf128_pd(h45, 1));
      double* yj = y + B * j;
      _mm256_storeu_pd(yj, _mm256_add_pd(_mm256_loadu_pd(yj), sum0123));
      _mm_storeu_pd(yj + 4, _mm_add_pd(_mm_loadu_pd(yj + 4), sum45));
    }
    double* yk = y + B * kk;
    _mm256_storeu_pd(yk, _mm256_add_pd(_mm256_loadu_pd(yk), yk_lo));
    _mm_storeu_pd(yk + 4, _mm_add_pd(_mm_loadu_pd(yk + 4), yk_hi));
  }
}

PERCUSSION_AVX2 void block_diagonal_apply(PetscInt n, const float* blocks, const double* x, double* y) {
  for (PetscInt r = 0; r < n; ++r) {
    const std::size_t rr = static_cast<std::size_t>(r);
    const float* a = blocks + rr * BB;
    const double* xr = x + B * rr;
    __m256d lo = _mm256_setzero_pd();
    __m128d hi = _mm_setzero_pd();
    for (std::size_t col = 0; col < B; ++col) {  // y_r += column · x_col; the last column's load stays in the block
      const __m256d xc = _mm256_broadcast_sd(xr + col);
      lo = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm_loadu_ps(a + B * col)), xc, lo);
      hi = _mm_fmadd_pd(_mm_cvtps_pd(_mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(a + B * col + 4)))),
                        _mm256_castpd256_pd128(xc), hi);
    }
    _mm256_storeu_pd(y + B * rr, lo);
    _mm_storeu_pd(y + B * rr + 4, hi);
  }
}

// C = A B (the product) or C −= Aᵀ B (the Schur update), row-major 6×6 floats: row i of C is a sum of B's rows,
// each in one 8-wide register whose lanes 6-7 hold the next row's first values and are never stored
// (nor is C read past its block's end unless those floats exist: the arrays end in kPad floats).
// (Masked loads and stores are microcoded on some CPUs: C's row is stored as 4 + 2 floats instead.)
template <bool kSchurUpdate>
PERCUSSION_AVX2 inline void product6(float* c, const float* a, const float* b) {
  __m256 rows[B];
  for (std::size_t k = 0; k < B; ++k) rows[k] = _mm256_loadu_ps(b + B * k);
  for (std::size_t i = 0; i < B; ++i) {
    __m256 acc = kSchurUpdate ? _mm256_loadu_ps(c + B * i) : _mm256_setzero_ps();
    for (std::size_t k = 0; k < B; ++k) {
      const __m256 f = _mm256_broadcast_ss(kSchurUpdate ? a + B * k + i : a + B * i + k);
      acc = kSchurUpdate ? _mm256_fnmadd_ps(f, rows[k], acc) : _mm256_fmadd_ps(f, rows[k], acc);
    }
    _mm_storeu_ps(c + B * i, _mm256_castps256_ps128(acc));
    _mm_storel_pi(reinterpret_cast<__m64*>(c + B * i + 4), _mm256_extractf128_ps(acc, 1));
  }
}

PERCUSSION_AVX2 void icc_eliminate_row(PetscInt k, const PetscInt* first, const PetscInt* column,
                                       const float* pivot_inverse, float* work, float* diag, float* upper) {
  const PetscInt begin = first[k], end = first[k + 1];
  for (PetscInt q = begin; q < end; ++q)
    product6<false>(upper + static_cast<std::size_t>(q) * BB, pivot_inverse, work + static_cast<std::size_t>(q) * BB);
  for (PetscInt p = begin; p < end; ++p) {
    const PetscInt j = column[p];
    const float* ukj = work + static_cast<std::size_t>(p) * BB;
    product6<true>(diag + static_cast<std::size_t>(j) * BB, ukj, upper + static_cast<std::size_t>(p) * BB);
    PetscInt r = first[j];  // both rows are sorted: walk row j along row k
    const PetscInt r_end = first[j + 1];
    for (PetscInt q = p + 1; q < end && r < r_end; ++q) {
      const PetscInt l = column[q];
      while (r < r_end && column[r] < l) ++r;
      if (r < r_end && column[r] == l)
        product6<true>(work + static_cast<std::size_t>(r) * BB, ukj, upper + static_cast<std::size_t>(q) * BB);
    }
  }
}

// Entry `index` of four blocks, one per lane.
static PERCUSSION_AVX2 inline __m256d gather4(const double* const a[4], std::size_t index) {
  return _mm256_set_pd(a[3][index], a[2][index], a[1][index], a[0][index]);
}

PERCUSSION_AVX2 int inverse_cholesky_factor4(const double* const a[4], double* const m[4]) {
  // inverse_cholesky_factor<6>'s operations in its order, one block per lane; no FMA (this file is compiled with
  // -ffp-contract=off), so each lane rounds as the scalar code.
  __m256d l[BB], inverse_diagonal[B];
  const __m256d one = _mm256_set1_pd(1.0), zero = _mm256_setzero_pd();
  __m256d positive = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
  for (std::size_t j = 0; j < B; ++j) {
    __m256d d = gather4(a, j * B + j);
    for (std::size_t k = 0; k < j; ++k) d = _mm256_sub_pd(d, _mm256_mul_pd(l[j * B + k], l[j * B + k]));
    positive = _mm256_and_pd(positive, _mm256_cmp_pd(d, zero, _CMP_GT_OQ));  // (false for a NaN)
    inverse_diagonal[j] = _mm256_div_pd(one, _mm256_sqrt_pd(d));
    for (std::size_t i = j + 1; i < B; ++i) {
      __m256d sum = gather4(a, i * B + j);
      for (std::size_t k = 0; k < j; ++k) sum = _mm256_sub_pd(sum, _mm256_mul_pd(l[i * B + k], l[j * B + k]));
      l[i * B + j] = _mm256_mul_pd(sum, inverse_diagonal[j]);
    }
  }
  __m256d out[BB];
  const __m256d sign = _mm256_set1_pd(-0.0);
  for (std::size_t i = 0; i < B; ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      __m256d sum = zero;
      for (std::size_t k = j; k < i; ++k) sum = _mm256_add_pd(sum, _mm256_mul_pd(l[i * B + k], out[k * B + j]));
      out[i * B + j] = _mm256_mul_pd(_mm256_xor_pd(sum, sign), inverse_diagonal[i]);
    }
    out[i * B + i] = inverse_diagonal[i];
    for (std::size_t j = i + 1; j < B; ++j) out[i * B + j] = zero;
  }
  alignas(32) double lanes[4];
  for (std::size_t e = 0; e < BB; ++e) {
    _mm256_store_pd(lanes, out[e]);
    for (std::size_t lane = 0; lane < 4; ++lane) m[lane][e] = lanes[lane];
  }
  return _mm256_movemask_pd(positive);
}

#undef PERCUSSION_AVX2
#else
bool supported() { return false; }
#endif

}  // namespace percussion::solvers::avx2
