#include "percussion/solvers/eisenstat_dilu.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <type_traits>

#include "percussion/core/error.hpp"
#include "percussion/solvers/block_cholesky.hpp"

namespace percussion::solvers {
namespace {
constexpr int B = EisenstatDilu::B;
constexpr int BB = B * B;
constexpr std::size_t S = avx2::kStride;
using Block = EisenstatDilu::Block;
using BlockF = Eigen::Matrix<float, B, B, Eigen::RowMajor>;
using VecF = Eigen::Matrix<float, B, 1>;
using Vec = Eigen::Matrix<double, B, 1>;
template <class V>
using VecOf = Eigen::Matrix<V, B, 1>;  // a row of a vector of doubles or floats
}  // namespace

std::optional<double> EisenstatDilu::factor(Mat A) {
  if (pivots_ == Pivots::Diagonal) return factor_diagonal(A) ? std::optional<double>(0.0) : std::nullopt;
  load(A, true);
  const std::optional<double> shift = factor_with_shift([this](double shift) { return try_factor(shift); });
  made_half(shift.has_value());
  return shift;
}

bool EisenstatDilu::made_half(bool set_up) {  // D-ILU's: from the floats its set-up needs
  half_ready_ = false;
#if PERCUSSION_AVX2_KERNELS
  if (set_up && half_ && avx2_) {
    const std::size_t size = static_cast<std::size_t>(first_[static_cast<std::size_t>(n_)]) * BB + avx2::kPad;
    upper_half_.resize(size);
    half_ready_ = avx2::to_half(upper_.data(), size, upper_half_.data());
  }
#endif
  return set_up;
}

bool EisenstatDilu::factor_diagonal(Mat A) {
  const SbaijBlock block(A, "block Gauss-Seidel");
  return factor_diagonal(block, {}, half_ && avx2_);
}

bool EisenstatDilu::update(Mat A, std::span<const char> changed) {
  const SbaijBlock block(A, "block Gauss-Seidel");
  const bool same = pivots_ == Pivots::Diagonal && set_up_ && set_up_with_avx2_ == avx2_ &&
                    set_up_with_halves_ == (half_ && avx2_) &&
                    changed.size() == static_cast<std::size_t>(n_) && same_pattern(block);
  return factor_diagonal(block, same ? changed : std::span<const char>{}, half_ && avx2_);
}

bool EisenstatDilu::factor_diagonal(const SbaijBlock& block, std::span<const char> changed, bool halves) {
  // Each pivot is its own row's diagonal block, so the scaled blocks are formed straight from A's values in one
  // pass, without D-ILU's copy of A (which its elimination and rescale() need). K̃_k = C_k⁻¹ D_k C_k⁻ᵀ − 2I is −I
  // here, so it is neither formed nor read (k_tilde_ stays empty).
  // With `changed` (the same pattern as the last set-up), Ũ_kl = C_k⁻¹ A_kl C_l⁻ᵀ is formed again only where row
  // k or l changed; elsewhere it is copied from the last set-up: the same arithmetic on the same values, so the
  // result is the full set-up's to the bit. Contacts that open or close change which blocks are zero, so the
  // kept blocks are laid out afresh either way.
  const bool full = changed.empty();
  set_up_ = false;
  if (full) take_pattern(block);
  const std::size_t n = static_cast<std::size_t>(n_);
  c_inverse_.resize(n * BB);
  k_tilde_.clear();
  if (full) kept_.assign(block.column.size(), -1);
#if PERCUSSION_AVX2_KERNELS
  if (avx2_ && full) avx2::resize_padded(c_inverse_columns_, n * BB);
#endif
  // Halves are written as the blocks are formed (and copied as halves), so the floats are never stored.
  bool positive = true, fits = true;
  block.with_values([&](const PetscScalar* values) {
    // With AVX2 the pivots are factored four at a time (avx2::inverse_cholesky_factor4, the scalar kernel's results
    // to the bit): its chains of square roots and divisions are latency-bound one block at a time.
    std::array<Block, 4> d;
    std::array<std::size_t, 4> rows{};
    int count = 0;
    auto factor = [&]() {
      if (count == 0) return;
#if PERCUSSION_AVX2_KERNELS
      if (avx2_) {
        std::array<Block, 4> spare;
        const double* in[4];
        double* out[4];
        for (int lane = 0; lane < 4; ++lane) {
          in[lane] = d[static_cast<std::size_t>(std::min(lane, count - 1))].data();
          out[lane] = lane < count ? &c_inverse_[rows[static_cast<std::size_t>(lane)] * BB] : spare[static_cast<std::size_t>(lane)].data();
        }
        const int all = (1 << count) - 1;
        positive = (avx2::inverse_cholesky_factor4(in, out) & all) == all;
        for (int lane = 0; lane < count; ++lane) {
          const std::size_t k = rows[static_cast<std::size_t>(lane)];
          Eigen::Map<BlockF>{&c_inverse_columns_[k * BB]} =
              Eigen::Map<const Block>(&c_inverse_[k * BB]).transpose().cast<float>();
        }
        count = 0;
        return;
      }
#endif
      positive = inverse_cholesky_factor<B>(d[0].data(), &c_inverse_[rows[0] * BB]);
      count = 0;
    };
    const int batch = avx2_ ? 4 : 1;
    for (std::size_t k = 0; k < n && positive; ++k) {
      if (!full && !changed[k]) continue;
      Block& dk = d[static_cast<std::size_t>(count)];
      dk = Eigen::Map<const Block>(values + static_cast<std::size_t>(block.first[k]) * BB).transpose();
      dk.triangularView<Eigen::StrictlyLower>() = dk.transpose();  // SBAIJ keeps the diagonal block's upper triangle
      rows[static_cast<std::size_t>(count++)] = k;
      if (count == batch) factor();
    }
    if (positive) factor();
    if (!positive) return;
    fits = halves ? lay_out_scaled(block, values, changed, upper_half_, spare_upper_half_)
                  : lay_out_scaled(block, values, changed, upper_, spare_upper_);
  });
  if (!fits) return factor_diagonal(block, {}, false);  // a scaled block beyond the largest half (A not SPD): floats
  if (!full && positive) {  // (a failed update leaves the last layout, which set_up_ = false then disowns)
    if (halves) upper_half_.swap(spare_upper_half_);
    else upper_.swap(spare_upper_);
    first_.swap(spare_first_);
    column_.swap(spare_column_);
    ++partial_set_ups_;
  }
  set_up_ = positive;
  set_up_with_avx2_ = avx2_;
  set_up_with_halves_ = halves;
  half_ready_ = halves && positive;
  return positive;
}

template <class T>
bool EisenstatDilu::lay_out_scaled(const SbaijBlock& block, const PetscScalar* values, std::span<const char> changed,
                                   std::vector<T>& last, std::vector<T>& spare) {
  const bool full = changed.empty();
  const std::size_t n = static_cast<std::size_t>(n_), pattern = block.column.size();
  std::vector<T>& upper = full ? last : spare;
  std::vector<PetscInt>& first = full ? first_ : spare_first_;
  std::vector<PetscInt>& column = full ? column_ : spare_column_;
  upper.resize(pattern * BB + avx2::kPad);
  first.resize(n + 1);
  column.resize(pattern);
  bool fits = true;
  std::size_t kept = 0;  // zero blocks (contact candidates apart) left out, as load() does
  for (std::size_t k = 0; k < n; ++k) {
    const Eigen::Map<const Block> ck(&c_inverse_[k * BB]);
    first[k] = static_cast<PetscInt>(kept);
    const auto begin = static_cast<std::size_t>(block.first[k]), end = static_cast<std::size_t>(block.first[k + 1]);
    for (std::size_t p = begin + 1; p < end; ++p) {
      const auto l = static_cast<std::size_t>(block.column[p]);
      T* out = &upper[kept * BB];
      if (full || changed[k] || changed[l]) {
        const PetscScalar* a = values + p * BB;
        if (SbaijBlock::zero(a)) {
          kept_[p] = -1;
          continue;
        }
        alignas(32) float scaled[BB + avx2::kPad];
#if PERCUSSION_AVX2_KERNELS
        if (avx2_) {
          avx2::scale_block(a, &c_inverse_columns_[k * BB], &c_inverse_columns_[l * BB], scaled);
        } else
#endif
        {
          const Eigen::Map<const Block> cl(&c_inverse_[l * BB]);
          Eigen::Map<BlockF>{scaled} = (ck * Eigen::Map<const Block>(a).transpose() * cl.transpose()).cast<float>();
        }
        if constexpr (std::is_same_v<T, float>) {
          std::copy_n(scaled, BB, out);
        } else {
#if PERCUSSION_AVX2_KERNELS
          fits = avx2::to_half(scaled, BB, out) && fits;
#endif
        }
      } else {
        if (kept_[p] < 0) continue;
        std::copy_n(&last[static_cast<std::size_t>(kept_[p]) * BB], BB, out);
      }
      column[kept] = static_cast<PetscInt>(l);
      kept_[p] = static_cast<PetscInt>(kept);
      ++kept;
    }
  }
  first[n] = static_cast<PetscInt>(kept);
  std::fill_n(upper.begin() + static_cast<std::ptrdiff_t>(kept * BB), avx2::kPad, T{0});  // the sweeps read past
  return fits;
}

bool EisenstatDilu::rescale(Mat A) {
  if (pivots_ == Pivots::Diagonal) return factor_diagonal(A);  // new pivots cost no more than keeping them
  if (!load(A, false)) return false;
  const std::size_t n = static_cast<std::size_t>(n_);
  for (std::size_t k = 0; k < n; ++k) {
    const Eigen::Map<const Block> ck(&c_inverse_[k * BB]);
    set_k_tilde(k);
    for (PetscInt p = first_[k]; p < first_[k + 1]; ++p) {
      const Block scaled = ck * Eigen::Map<const Block>(&a_[static_cast<std::size_t>(p) * BB]);
      Eigen::Map<BlockF>{&upper_[static_cast<std::size_t>(p) * BB]} = scaled.cast<float>();
    }
  }
  scale_columns();
  return made_half(true);
}

bool EisenstatDilu::load(Mat A, bool new_pattern) {
  const SbaijBlock block(A, "Eisenstat D-ILU");
  if (!new_pattern && !same_pattern(block)) return false;
  if (new_pattern) take_pattern(block);  // (the same pattern keeps its sizes)
  // The off-diagonal blocks that are zero (contact candidates apart) are left out: they change no pivot and no
  // sweep, and the sweeps' cost is reading their blocks. (a_ keeps the pattern's full size too.)
  const std::size_t n = static_cast<std::size_t>(n_);
  diagonal_.resize(n * BB);
  a_.resize(block.column.size() * BB);
  block.with_values([&](const PetscScalar* values) {
    std::size_t kept = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const auto begin = static_cast<std::size_t>(block.first[k]), end = static_cast<std::size_t>(block.first[k + 1]);
      Eigen::Map<Block> d(&diagonal_[k * BB]);
      d = Eigen::Map<const Block>(values + begin * BB).transpose();
      d.triangularView<Eigen::StrictlyLower>() = d.transpose();  // SBAIJ keeps the diagonal block's upper triangle
      first_[k] = static_cast<PetscInt>(kept);
      for (std::size_t p = begin + 1; p < end; ++p) {
        const PetscScalar* a = values + p * BB;
        if (SbaijBlock::zero(a)) continue;
        column_[kept] = block.column[p];
        Eigen::Map<Block>{&a_[kept * BB]} = Eigen::Map<const Block>(a).transpose();
        ++kept;
      }
    }
    first_[n] = static_cast<PetscInt>(kept);
  });
  avx2::resize_padded(upper_, static_cast<std::size_t>(first_[n]) * BB);
  avx2::resize_padded(k_tilde_, static_cast<std::size_t>(n_) * BB);
  return true;
}

void EisenstatDilu::size_for(std::size_t rows, std::size_t blocks) {
  if (pivots_ != Pivots::Diagonal) return;  // (D-ILU's copies of A are sized by load())
  // Only grows: a set-up's arrays keep what they hold (update() copies from the last layout).
  auto grow = [](auto& v, std::size_t size) {
    if (v.size() < size) v.resize(size);
  };
  grow(c_inverse_, rows * BB);
#if PERCUSSION_AVX2_KERNELS
  if (avx2_ && c_inverse_columns_.size() < rows * BB + avx2::kPad) avx2::resize_padded(c_inverse_columns_, rows * BB);
#endif
  grow(kept_, blocks);
  for (auto* first : {&first_, &spare_first_}) grow(*first, rows + 1);
  for (auto* column : {&column_, &spare_column_}) grow(*column, blocks);
  if (half_ && avx2_) {
    for (auto* upper : {&upper_half_, &spare_upper_half_}) grow(*upper, blocks * BB + avx2::kPad);
  } else {
    for (auto* upper : {&upper_, &spare_upper_}) grow(*upper, blocks * BB + avx2::kPad);
  }
  grow(t_, rows * S);  // (its padding lanes stay zero)
  grow(acc_, rows * S);
}

void EisenstatDilu::take_pattern(const SbaijBlock& block) {
  n_ = block.rows;
  pattern_first_ = block.first;
  pattern_column_ = block.column;
  // column_ keeps the pattern's full size, as the product's copy does; the first first_[n] blocks are used.
  first_.resize(static_cast<std::size_t>(n_) + 1);
  column_.resize(block.column.size());
}

bool EisenstatDilu::same_pattern(const SbaijBlock& block) const {
  return block.rows == n_ && block.first == pattern_first_ && block.column == pattern_column_;
}

void EisenstatDilu::set_k_tilde(std::size_t k) {
  const Eigen::Map<const Block> ck(&c_inverse_[k * BB]);
  const Block kt = ck * Eigen::Map<const Block>(&diagonal_[k * BB]) * ck.transpose() - 2.0 * Block::Identity();
  Eigen::Map<BlockF>{&k_tilde_[k * BB]} = kt.cast<float>();
}

void EisenstatDilu::scale_columns() {
  // Ũ_kl = (C_k⁻¹ A_kl) C_l⁻ᵀ, once every C_l is known.
  for (std::size_t p = 0; p < static_cast<std::size_t>(first_[static_cast<std::size_t>(n_)]); ++p) {
    const Eigen::Map<const Block> cl(&c_inverse_[static_cast<std::size_t>(column_[p]) * BB]);
    Eigen::Map<BlockF> u(&upper_[p * BB]);
    u = (u.cast<double>() * cl.transpose()).cast<float>();
  }
}

void EisenstatDilu::start_pivots(double shift) {
  const std::size_t n = static_cast<std::size_t>(n_);
  c_inverse_ = diagonal_;  // the pivots P_k first; each becomes C_k⁻¹ once final
  if (shift > 0)
    for (std::size_t k = 0; k < n; ++k)
      Eigen::Map<Block>(&c_inverse_[k * BB]).diagonal() +=
          shift * Eigen::Map<const Block>(&diagonal_[k * BB]).diagonal().cwiseAbs();
}

bool EisenstatDilu::eliminate(PetscInt begin, PetscInt end) {
  // Row by row: P_k is final once the earlier rows have subtracted A_ikᵀ P_i⁻¹ A_ik = (C_i⁻¹A_ik)ᵀ(C_i⁻¹A_ik).
  for (std::size_t k = static_cast<std::size_t>(begin); k < static_cast<std::size_t>(end); ++k) {
    Eigen::Map<Block> ck(&c_inverse_[k * BB]);
    if (!inverse_cholesky_factor<B>(ck.data(), ck.data())) return false;
    set_k_tilde(k);
    for (PetscInt p = first_[k]; p < first_[k + 1]; ++p) {
      const Block scaled = ck * Eigen::Map<const Block>(&a_[static_cast<std::size_t>(p) * BB]);
      Eigen::Map<Block>(&c_inverse_[static_cast<std::size_t>(column_[static_cast<std::size_t>(p)]) * BB]).noalias() -=
          scaled.transpose() * scaled;
      Eigen::Map<BlockF>{&upper_[static_cast<std::size_t>(p) * BB]} = scaled.cast<float>();
    }
  }
  return true;
}

bool EisenstatDilu::try_factor(double shift) {
  start_pivots(shift);
  if (!eliminate(0, n_)) return false;
  scale_columns();
  return true;
}

std::optional<double> EisenstatDilu::factor_across(Mat A, const RankCoupling& coupling, MPI_Comm comm) {
  load(A, true);
  const std::optional<double> shift = factor_with_shift([&](double s) {
    int ok = try_factor_across(s, coupling) ? 1 : 0;  // every rank tries every shift: the pivots depend on all
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    return ok != 0;
  });
  made_half(shift.has_value());
  return shift;
}

bool EisenstatDilu::try_factor_across(double shift, const RankCoupling& coupling) {
  // The elimination in the global order (rank_coupling.hpp): the rows X and L also subtract the lower ranks' rows j,
  // Σ_j (C_j⁻¹ A_jk)ᵀ (C_j⁻¹ A_jk), which those ranks send once their rows H and X are final. A pivot that fails
  // does not end the sweep early: the other ranks wait for its messages.
  start_pivots(shift);
  bool ok = true;
  coupling.start_forward_blocks();
  coupling.in_forward_order([&](PetscInt begin, PetscInt end) { ok = eliminate(begin, end) && ok; },
                            [&] {
                              coupling.finish_push_blocks([this](PetscInt k, const double* s) {
                                Eigen::Map<Block>(&c_inverse_[static_cast<std::size_t>(k) * BB]) -=
                                    Eigen::Map<const Block>(s);
                              });
                            },
                            [&] {
                              coupling.send_up_blocks([this](PetscInt k, const double* a, double* out) {
                                const Block scaled =
                                    Eigen::Map<const Block>(&c_inverse_[static_cast<std::size_t>(k) * BB]) *
                                    Eigen::Map<const Block>(a);
                                Eigen::Map<Block>(out).noalias() += scaled.transpose() * scaled;
                              });
                            });
  coupling.end_forward();
  if (ok) scale_columns();
  return ok;
}

template <class V>
void EisenstatDilu::backward(const V* u, PetscInt begin, PetscInt end) const {
  const std::size_t n = static_cast<std::size_t>(n_);
  t_.resize(n * S);  // padding lanes: zero when created, never written
#if PERCUSSION_AVX2_KERNELS
  if (avx2_)
    return with_blocks([&](const auto* upper) {
      avx2::dilu_backward(begin, end, first_.data(), column_.data(), upper, u, t_.data());
    });
#endif
  // The sweep runs down the rows, and the hardware prefetchers follow ascending streams: the blocks of the row
  // four below are requested now, which takes a good share off the sweep's cost.
  constexpr std::size_t kAhead = 4;
  for (std::size_t k = static_cast<std::size_t>(end); k-- > static_cast<std::size_t>(begin);) {
    if (k >= kAhead) {
      const char* line = reinterpret_cast<const char*>(&upper_[static_cast<std::size_t>(first_[k - kAhead]) * BB]);
      const char* stop = reinterpret_cast<const char*>(&upper_[static_cast<std::size_t>(first_[k - kAhead + 1]) * BB]);
      for (; line < stop; line += 64) __builtin_prefetch(line);
    }
    VecF t = Eigen::Map<const VecOf<V>>(u + k * B).template cast<float>();
    for (PetscInt p = first_[k]; p < first_[k + 1]; ++p)
      t.noalias() -= Eigen::Map<const BlockF>(&upper_[static_cast<std::size_t>(p) * BB]) *
                     Eigen::Map<const VecF>(&t_[static_cast<std::size_t>(column_[static_cast<std::size_t>(p)]) * S]);
    Eigen::Map<VecF>{&t_[k * S]} = t;
  }
}

template <class V>
double EisenstatDilu::forward(const V* u, const double* c, V* out, PetscInt begin, PetscInt end) const {
  const std::size_t n = static_cast<std::size_t>(n_);
  // −Σ_{i<k} Ũ_ikᵀ w_i, pushed by the rows already done. Each row is zeroed once read, so the array is zero
  // again at the end and needs no clearing pass before the next sweep.
  if (acc_.size() != n * S) acc_.assign(n * S, 0.0f);
#if PERCUSSION_AVX2_KERNELS
  if (avx2_)
    return with_blocks([&](const auto* upper) {
      return avx2::dilu_forward(begin, end, first_.data(), column_.data(), upper,
                                k_tilde_.empty() ? nullptr : k_tilde_.data(), t_.data(), u, c, acc_.data(), out);
    });
#endif
  double dot = 0;
  for (std::size_t k = static_cast<std::size_t>(begin); k < static_cast<std::size_t>(end); ++k) {
    const Eigen::Map<const VecF> t(&t_[k * S]);
    Eigen::Map<VecF> acc(&acc_[k * S]);
    VecF w = Eigen::Map<const VecOf<V>>(u + k * B).template cast<float>() + acc;
    if (k_tilde_.empty())
      w -= t;  // K̃ = −I (Gauss–Seidel's pivots)
    else
      w.noalias() += Eigen::Map<const BlockF>(&k_tilde_[k * BB]) * t;
    acc.setZero();
    if (c) w += Eigen::Map<const Vec>(c + k * B).cast<float>();
    for (PetscInt p = first_[k]; p < first_[k + 1]; ++p)
      Eigen::Map<VecF>(&acc_[static_cast<std::size_t>(column_[static_cast<std::size_t>(p)]) * S]).noalias() -=
          Eigen::Map<const BlockF>(&upper_[static_cast<std::size_t>(p) * BB]).transpose() * w;
    const Vec o = (t + w).cast<double>();
    Eigen::Map<VecOf<V>>(out + k * B) = o.template cast<V>();
    dot += o.dot(Eigen::Map<const VecOf<V>>(u + k * B).template cast<double>());
  }
  return dot;
}
template void EisenstatDilu::backward(const double*, PetscInt, PetscInt) const;
template void EisenstatDilu::backward(const float*, PetscInt, PetscInt) const;
template double EisenstatDilu::forward(const double*, const double*, double*, PetscInt, PetscInt) const;
template double EisenstatDilu::forward(const float*, const double*, float*, PetscInt, PetscInt) const;

void EisenstatDilu::to_split(const double* b, double* b_hat) const {
  scale_into_acc(b);
  forward_solve(b_hat, 0, n_);
}

void EisenstatDilu::scale_into_acc(const double* b) const {
  const std::size_t n = static_cast<std::size_t>(n_);
  acc_.resize(n * S);
#if PERCUSSION_AVX2_KERNELS
  if (float_columns()) return avx2::scale_rows(n_, c_inverse_columns_.data(), b, acc_.data());
#endif
  for (std::size_t k = 0; k < n; ++k)
    Eigen::Map<VecF>{&acc_[k * S]} =
        (Eigen::Map<const Block>(&c_inverse_[k * BB]) * Eigen::Map<const Vec>(b + k * B)).cast<float>();
}

void EisenstatDilu::forward_solve(double* b_hat, PetscInt begin, PetscInt end) const {
  // b̂ = (I + L̃)⁻¹ C⁻¹ b: the scaling (scale_into_acc), then the forward solve.
#if PERCUSSION_AVX2_KERNELS
  if (avx2_)
    return with_blocks([&](const auto* upper) {
      avx2::dilu_forward_solve(begin, end, first_.data(), column_.data(), upper, acc_.data(), b_hat);
    });
#endif
  for (std::size_t k = static_cast<std::size_t>(begin); k < static_cast<std::size_t>(end); ++k) {
    const VecF w = Eigen::Map<const VecF>(&acc_[k * S]);
    Eigen::Map<VecF>{&acc_[k * S]}.setZero();  // as forward() leaves it
    for (PetscInt p = first_[k]; p < first_[k + 1]; ++p)
      Eigen::Map<VecF>(&acc_[static_cast<std::size_t>(column_[static_cast<std::size_t>(p)]) * S]).noalias() -=
          Eigen::Map<const BlockF>(&upper_[static_cast<std::size_t>(p) * BB]).transpose() * w;
    Eigen::Map<Vec>(b_hat + k * B) = w.cast<double>();
  }
}

template <class V>
void EisenstatDilu::from_split(const V* y_hat, double* y) const {
  // y = C⁻ᵀ (I + L̃ᵀ)⁻¹ ŷ: the backward solve, then the scaling back.
  backward(y_hat, 0, n_);
  scale_out_of_t(y);
}
template void EisenstatDilu::from_split(const double*, double*) const;
template void EisenstatDilu::from_split(const float*, double*) const;

void EisenstatDilu::scale_out_of_t(double* y) const {
#if PERCUSSION_AVX2_KERNELS
  if (float_columns()) return avx2::unscale_rows(n_, c_inverse_columns_.data(), t_.data(), y);
#endif
  for (std::size_t k = 0; k < static_cast<std::size_t>(n_); ++k) scaled_t(static_cast<PetscInt>(k), y + k * B);
}

void EisenstatDilu::scaled_t(PetscInt row, double* z) const {
  const std::size_t k = static_cast<std::size_t>(row);
  Eigen::Map<Vec>(z).noalias() =
      Eigen::Map<const Block>(&c_inverse_[k * BB]).transpose() * Eigen::Map<const VecF>(&t_[k * S]).cast<double>();
}

// The sweeps across ranks (rank_coupling.hpp): the same as apply(), to_split() and from_split() on one rank, with
// the blocks coupling ranks in the global order instead of left out (block Jacobi) or added as Õ t.

template <class V>
void EisenstatDilu::backward_across(const V* u, const RankCoupling& coupling) const {
  // Rows [0, x) sweep u_k − C_k⁻¹ Σ_j A_kj C_j⁻ᵀ t_j (in w_), the higher ranks' part of the row subtracted.
  const std::size_t top = static_cast<std::size_t>(coupling.groups().x);
  if (z_.size() < top * B) z_.resize(top * B);
  if (w_.size() < top * B) w_.resize(top * B);
  coupling.start_backward();
  coupling.in_backward_order(
      [&](PetscInt begin, PetscInt end) {
        if (begin < coupling.groups().x)
          backward(w_.data(), begin, end);
        else
          backward(u, begin, end);
      },
      [&] {
        coupling.finish_pull(z_.data());
        for (std::size_t k = 0; k < top; ++k)
          Eigen::Map<Vec>{&w_[k * B]} =
              Eigen::Map<const VecOf<V>>(u + k * B).template cast<double>() -
              Eigen::Map<const Block>(&c_inverse_[k * BB]) * Eigen::Map<const Vec>(&z_[k * B]);
      },
      [&] { coupling.send_down([this](PetscInt k, double* z) { scaled_t(k, z); }); });
  coupling.end_backward();
}

void EisenstatDilu::add_pushed(PetscInt row, const double* v) const {
  // acc_k −= C_k⁻¹ Σ_j A_jkᵀ C_j⁻ᵀ w_j, the lower ranks' rows j (v = their sum of A_jkᵀ C_j⁻ᵀ w_j).
  const std::size_t k = static_cast<std::size_t>(row);
  Eigen::Map<VecF>{&acc_[k * S]} -=
      (Eigen::Map<const Block>(&c_inverse_[k * BB]) * Eigen::Map<const Vec>(v)).cast<float>();
}

template <class V>
double EisenstatDilu::apply_across(const V* u, V* out, const RankCoupling& coupling) const {
  backward_across(u, coupling);
  const std::size_t n = static_cast<std::size_t>(n_);
  if (acc_.size() != n * S) acc_.assign(n * S, 0.0f);
  double dot = 0;
  coupling.start_forward();
  coupling.in_forward_order(
      [&](PetscInt begin, PetscInt end) { dot += forward(u, nullptr, out, begin, end); },
      [&] { coupling.finish_push([this](PetscInt k, const double* v) { add_pushed(k, v); }); },
      [&] {
        coupling.send_up([&](PetscInt k, double* z) {  // w_k = out_k − t_k, the value row k pushed
          const std::size_t kk = static_cast<std::size_t>(k);
          const Vec w = Eigen::Map<const VecOf<V>>(out + kk * B).template cast<double>() -
                        Eigen::Map<const VecF>(&t_[kk * S]).cast<double>();
          Eigen::Map<Vec>(z).noalias() = Eigen::Map<const Block>(&c_inverse_[kk * BB]).transpose() * w;
        });
      });
  coupling.end_forward();
  return dot;
}
template double EisenstatDilu::apply_across(const double*, double*, const RankCoupling&) const;
template double EisenstatDilu::apply_across(const float*, float*, const RankCoupling&) const;

void EisenstatDilu::to_split_across(const double* b, double* b_hat, const RankCoupling& coupling) const {
  scale_into_acc(b);
  coupling.start_forward();
  coupling.in_forward_order(
      [&](PetscInt begin, PetscInt end) { forward_solve(b_hat, begin, end); },
      [&] { coupling.finish_push([this](PetscInt k, const double* v) { add_pushed(k, v); }); },
      [&] {
        coupling.send_up([&](PetscInt k, double* z) {
          const std::size_t kk = static_cast<std::size_t>(k);
          Eigen::Map<Vec>(z).noalias() =
              Eigen::Map<const Block>(&c_inverse_[kk * BB]).transpose() * Eigen::Map<const Vec>(b_hat + kk * B);
        });
      });
  coupling.end_forward();
}

template <class V>
void EisenstatDilu::from_split_across(const V* y_hat, double* y, const RankCoupling& coupling) const {
  backward_across(y_hat, coupling);
  scale_out_of_t(y);
}
template void EisenstatDilu::from_split_across(const double*, double*, const RankCoupling&) const;
template void EisenstatDilu::from_split_across(const float*, double*, const RankCoupling&) const;

void EisenstatDilu::scale_coupling(std::span<const PetscInt> rows, double* z) const {
  for (const PetscInt row : rows) {
    const std::size_t k = static_cast<std::size_t>(row);
    Eigen::Map<Vec>(z + k * B).noalias() =
        Eigen::Map<const Block>(&c_inverse_[k * BB]).transpose() * Eigen::Map<const VecF>(&t_[k * S]).cast<double>();
  }
}

void EisenstatDilu::unscale_coupling(std::span<const PetscInt> rows, double* w) const {
  for (const PetscInt row : rows) {
    const std::size_t k = static_cast<std::size_t>(row);
    const Vec v = Eigen::Map<const Vec>(w + k * B);
    Eigen::Map<Vec>(w + k * B).noalias() = Eigen::Map<const Block>(&c_inverse_[k * BB]) * v;
  }
}

}  // namespace percussion::solvers
