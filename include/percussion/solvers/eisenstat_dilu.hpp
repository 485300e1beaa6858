#pragma once
// Block D-ILU, or block symmetric Gauss–Seidel, of one rank's diagonal block of a symmetric 6×6-block SBAIJ matrix,
// applied with Eisenstat's trick: the Newton systems' preconditioner with -bdem_pc_type percussion_dilu or
// percussion_gs (the default; block Jacobi across ranks, D-ILU or Gauss–Seidel within a rank; block_preconditioners.hpp). Cheaper per CG iteration than IC(0).
//
// Split A = L + D + Lᵀ + O (L: the rank's strictly lower blocks, D: its diagonal blocks, O: the blocks that
// couple it to other ranks). D-ILU keeps L and chooses block pivots P with the same diagonal as the product:
//     M = (P + L) P⁻¹ (P + Lᵀ),   P_k = D_k − Σ_{i<k} L_ki P_i⁻¹ L_kiᵀ.
// With P = C Cᵀ (Cholesky) and the scaled blocks L̃ = C⁻¹ L C⁻ᵀ, K̃ = C⁻¹ D C⁻ᵀ − 2I, Õ = C⁻¹ O C⁻ᵀ, CG runs on
// the split system  Ĉ ŷ = b̂  with  Ĉ = W⁻¹ A W⁻ᵀ,  W = C (I + L̃),  b̂ = W⁻¹ b,  y = W⁻ᵀ ŷ,  and
//     Ĉ u = t + (I + L̃)⁻¹ (u + K̃ t + Õ t),   t = (I + L̃ᵀ)⁻¹ u          (Eisenstat 1981)
// so one CG iteration costs one backward and one forward sweep over L̃: the preconditioned product by A reads
// the off-diagonal blocks twice, where an SBAIJ product followed by an IC(0) application reads them three times,
// and the set-up forms only the pivots (IC(0) also updates every off-diagonal block). Blocks are stored in
// single precision: the sweeps are bound by memory traffic and the Newton forcing asks for 1e-1 to 1e-3. With
// use_half() they are read as halves (half the traffic again); CG then solves the system of the rounded blocks, whose
// split is still symmetric, both sweeps reading the same rounded Ũ.
//
// A pivot block that is not positive definite restarts the set-up on D + α|diag D| (α doubling from 0.01), as
// for IC(0), so CG always sees an SPD operator.
//
// With Pivots::Diagonal the pivots are A's own diagonal blocks, P = D: M = (D + L) D⁻¹ (D + Lᵀ) is block symmetric
// Gauss–Seidel (SSOR at ω = 1), the same trick and cost per CG iteration. Each pivot depends on its row alone, so
// the set-up cannot break down on an SPD diagonal and needs no elimination; on contact-dominated matrices, where
// IC(0) meets indefinite pivots, it needs fewer CG iterations than D-ILU or point-block Jacobi, and on the bonded
// ones about as many as D-ILU.
#include <petscmat.h>

#include <Eigen/Core>
#include <optional>
#include <span>
#include <vector>

#include "percussion/core/aligned_allocator.hpp"
#include "percussion/solvers/avx2_block_kernels.hpp"
#include "percussion/solvers/rank_coupling.hpp"
#include "percussion/solvers/sbaij_block.hpp"

namespace percussion::solvers {

class EisenstatDilu {
 public:
  static constexpr int B = SbaijBlock::kBlock;
  using Block = Eigen::Matrix<double, B, B, Eigen::RowMajor>;
  enum class Pivots { Incomplete, Diagonal };  // D-ILU's, or A's diagonal blocks (block symmetric Gauss–Seidel)
  explicit EisenstatDilu(Pivots pivots = Pivots::Incomplete) : pivots_(pivots) {}

  // Factor the calling rank's diagonal block of A (SBAIJ or MPISBAIJ, block size 6, every diagonal block
  // present). Returns the shift α that was needed (0 when D-ILU of A itself has positive definite pivots), or
  // nothing when no shift gives positive definite pivots (the split is then unusable).
  std::optional<double> factor(Mat A);
  // The same pivots for a new A with the same pattern (the Newton iterations of one time step): only the scaled
  // blocks are formed again, and the split stays SPD whatever A, as C is kept. False (nothing done) if the
  // pattern changed.
  bool rescale(Mat A);
  // Pivots::Diagonal: factor(A) for an A that differs from the one of the last successful set-up only in the rows
  // k with changed[k] (their diagonal blocks, and the off-diagonal blocks of row k or column k). The work is that
  // of those rows plus a copy of the others' scaled blocks; the result is factor(A)'s, bit for bit. A full set-up
  // when `changed` is empty, when there was no set-up to start from, or when the pattern changed. False if a
  // diagonal block is not SPD (then the next set-up is a full one).
  bool update(Mat A, std::span<const char> changed);
  long partial_set_ups() const { return partial_set_ups_; }  // update()s that formed only the changed rows
  // Pivots::Diagonal: sizes what a set-up on `rows` rows and a pattern of `blocks` blocks (the diagonal ones
  // included) fills, when the pattern is known (at set-up, at a rebuild) rather than in the first solve after it:
  // there, first touching the new pages took several times a set-up's own work. Changes no result.
  void size_for(std::size_t rows, std::size_t blocks);
  PetscInt rows() const { return n_; }
  // The sweeps run the AVX2 kernels (avx2_block_kernels.hpp) where the CPU has them, unless turned off here.
  void use_avx2(bool on) { avx2_ = on && avx2::supported(); }
  // The AVX2 sweeps read the scaled blocks as halves (Gauss–Seidel's set-up writes them, D-ILU's rounds its floats;
  // floats where a value exceeds the largest half).
  void use_half(bool on) { half_ = on; }

  // b̂ = W⁻¹ b and y = W⁻ᵀ ŷ on the rank's 6·rows() values.
  void to_split(const double* b, double* b_hat) const;
  template <class V>
  void from_split(const V* y_hat, double* y) const;  // (ŷ as doubles, or as CG's floats)

  // out = Ĉ u, and returns u·out (the rank's part: CG's curvature along u, taken while both are in cache).
  // `coupling(z, w)` must set w = O z (the other ranks' blocks times z, a collective product); it is called only
  // when `coupled` is true. O reads z and writes w only on `interface` (the rows coupled to another rank):
  // elsewhere z is left as it is and w must come back zero. V: double or float (the sweeps round u to floats and
  // form out in floats, so float vectors give the same out for the same rounded u, with half the traffic).
  template <class V, class Coupling>
  double apply(const V* u, V* out, bool coupled, std::span<const PetscInt> interface, Coupling&& coupling) const;
  // Pivots::Diagonal, more than one rank: block symmetric Gauss–Seidel of the whole matrix, its sweeps running
  // across the ranks in the global order of rank_coupling.hpp (whose set_up() must have succeeded for this set-up's
  // matrix): apply(), to_split() and from_split() of the split that leaves no block out.
  template <class V>
  double apply_across(const V* u, V* out, const RankCoupling& coupling) const;
  // Collective. Pivots::Incomplete: factor(A) with the elimination in the same global order, after
  // coupling.set_up(A); every rank takes the same shift. Then apply_across() and the like, also after rescale(A).
  std::optional<double> factor_across(Mat A, const RankCoupling& coupling, MPI_Comm comm);
  void to_split_across(const double* b, double* b_hat, const RankCoupling& coupling) const;
  template <class V>
  void from_split_across(const V* y_hat, double* y, const RankCoupling& coupling) const;

 private:
  bool load(Mat A, bool new_pattern);  // A's blocks into a_ and diagonal_; false if the pattern is not the last one
  bool same_pattern(const SbaijBlock& block) const;  // block's pattern is the last factored one
  void take_pattern(const SbaijBlock& block);        // block's pattern as the current one; first_, column_ sized
  bool try_factor(double shift);       // D-ILU's set-up; false at the first pivot block that is not positive definite
  bool try_factor_across(double shift, const RankCoupling& coupling);  // the same across ranks (all rows swept)
  void start_pivots(double shift);     // c_inverse_ = D (+ the shift)
  bool eliminate(PetscInt begin, PetscInt end);  // the rows begin..end−1 of the elimination; false at a bad pivot
  bool factor_diagonal(Mat A);         // Pivots::Diagonal's set-up; false if a diagonal block is not SPD
  // The same, or with `changed` (non-empty, the pattern of the last set-up) update()'s; the blocks kept as halves
  // if `halves` (as floats where one does not fit).
  bool factor_diagonal(const SbaijBlock& block, std::span<const char> changed, bool halves);
  // factor_diagonal's scaled blocks Ũ_kl into `last` (a full set-up) or `spare` (an update, which copies the
  // unchanged ones from `last`), as floats or halves; false if a value does not fit a half.
  template <class T>
  bool lay_out_scaled(const SbaijBlock& block, const PetscScalar* values, std::span<const char> changed,
                      std::vector<T>& last, std::vector<T>& spare);
  void set_k_tilde(std::size_t k);     // K̃_k from C_k⁻¹ and D_k
  bool made_half(bool set_up);         // upper_half_ from upper_ after a successful set-up (if asked for); set_up
  // f(the AVX2 sweeps' blocks): the halves when made, else the floats.
  template <class F>
  decltype(auto) with_blocks(F&& f) const {
    return half_ready_ ? f(upper_half_.data()) : f(upper_.data());
  }
  void scale_columns();                // upper_: C_k⁻¹ A_kl → C_k⁻¹ A_kl C_l⁻ᵀ
  // The sweeps over the rows begin ≤ k < end (a whole sweep: 0, n_):
  template <class V>
  void backward(const V* u, PetscInt begin, PetscInt end) const;  // t_ = (I + L̃ᵀ)⁻¹ u
  // out = t + (I + L̃)⁻¹ (u + K̃ t + c); the range's part of u·out
  template <class V>
  double forward(const V* u, const double* c, V* out, PetscInt begin, PetscInt end) const;
  // Gauss–Seidel's AVX2 set-up keeps C⁻¹ as floats too: then the scalings below read those (half the bytes).
  bool float_columns() const { return avx2_ && set_up_with_avx2_ && pivots_ == Pivots::Diagonal; }
  void scale_into_acc(const double* b) const;                           // acc_ = C⁻¹ b
  void forward_solve(double* b_hat, PetscInt begin, PetscInt end) const;  // b̂ = (I + L̃)⁻¹ acc_
  void scaled_t(PetscInt row, double* z) const;                         // z = C_k⁻ᵀ t_k
  void scale_out_of_t(double* y) const;                                 // y = C⁻ᵀ t_
  template <class V>
  void backward_across(const V* u, const RankCoupling& coupling) const;
  void add_pushed(PetscInt row, const double* v) const;                 // acc_k −= C_k⁻¹ v
  void scale_coupling(std::span<const PetscInt> rows, double* z) const;  // z_k = C_k⁻ᵀ t_k on the rows
  void unscale_coupling(std::span<const PetscInt> rows, double* w) const;  // w_k ← C_k⁻¹ w_k on the rows

  PetscInt n_ = 0;
  std::vector<PetscInt> pattern_first_, pattern_column_;  // A's pattern (SBAIJ's block CSR) when last factored
  std::vector<PetscInt> first_, column_;  // A's nonzero upper off-diagonal blocks of row k: first_[k] .. first_[k+1]
  std::vector<double> a_, diagonal_;     // A's off-diagonal and diagonal blocks (row-major, double)
  std::vector<double> c_inverse_;         // P_k during the set-up, then C_k⁻¹ (lower triangular), row-major
  std::vector<float> c_inverse_columns_;  // C_k⁻¹ column by column: the AVX2 Gauss–Seidel set-up's copy
  // Gauss–Seidel's update(): where each block of A's pattern sits among the kept blocks (−1: left out, zero), and
  // the arrays the next layout is built in while the last one is read.
  std::vector<PetscInt> kept_;
  std::vector<float> spare_upper_;
  std::vector<PetscInt> spare_first_, spare_column_;
  bool set_up_ = false;  // the last Gauss–Seidel set-up succeeded: update() may start from it
  bool set_up_with_avx2_ = false;
  long partial_set_ups_ = 0;
  // (Both float arrays end in avx2::kPad zeros: the AVX2 sweeps load a block row as 8 floats.)
  std::vector<float> upper_;              // Ũ_kl = C_k⁻¹ A_kl C_l⁻ᵀ = L̃_lkᵀ, row-major
  std::vector<float> k_tilde_;            // K̃_k, row-major; empty for Gauss–Seidel's pivots, where K̃_k = −I
  // Ũ as halves, if half_ready_ (D-ILU: a copy of upper_; Gauss–Seidel: in place of upper_), and update()'s spare.
  std::vector<avx2::Half> upper_half_, spare_upper_half_;
  bool half_ = false, half_ready_ = false, set_up_with_halves_ = false;
  // The sweeps' vectors, avx2::kStride floats per row (6 values, then padding; t_'s padding stays zero), each row
  // within one cache line.
  mutable std::vector<float, CacheAligned<float>> t_, acc_;
  bool avx2_ = avx2::supported();
  Pivots pivots_;
  mutable std::vector<double> z_, w_;
};

template <class V, class Coupling>
double EisenstatDilu::apply(const V* u, V* out, bool coupled, std::span<const PetscInt> interface,
                            Coupling&& coupling) const {
  backward(u, 0, n_);
  if (coupled) {
    // Only the interface rows are scaled and unscaled: most rows of a rank have no partner on another rank.
    const std::size_t n = static_cast<std::size_t>(n_) * B;
    z_.resize(n);
    w_.resize(n);
    scale_coupling(interface, z_.data());
    coupling(z_.data(), w_.data());
    unscale_coupling(interface, w_.data());
    return forward(u, w_.data(), out, 0, n_);
  }
  return forward(u, nullptr, out, 0, n_);
}

}  // namespace percussion::solvers
