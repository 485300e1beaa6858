#pragma once
// A sum of doubles that is exact, so it does not depend on the order of its terms nor on how ranks split them: each
// term lands in a fixed-point accumulator spanning every double's exponent (32-bit digits held in int64 with room
// for carries). Partial sums of several ranks add digit by digit. What a component's norm needs to be the same bit
// for bit on any rank count.
#include <array>
#include <cmath>
#include <cstdint>

namespace percussion::parallel {

class ExactSum {
 public:
  // Digit i weighs 2^(32 i - kBias); kBias places the smallest subnormal's last mantissa bit at bit 0 or above.
  static constexpr int kDigits = 70;
  static constexpr int kBias = 1127;

  void add(double x) {
    if (x == 0.0 || !std::isfinite(x)) return;
    int e = 0;
    const double m = std::frexp(x, &e);  // x = m 2^e, 0.5 <= |m| < 1
    const auto mantissa = static_cast<std::int64_t>(std::ldexp(m, 53));
    const int bit = e - 53 + kBias;
    const std::uint64_t magnitude = static_cast<std::uint64_t>(mantissa < 0 ? -mantissa : mantissa);
    const std::int64_t sign = mantissa < 0 ? -1 : 1;
    const int shift = bit % 32, at = bit / 32;
    // The 53-bit mantissa as 32 + 21 bits, each shifted into place (below 2^63): at most 2^33 per digit per term.
    const std::uint64_t low = (magnitude & 0xffffffffu) << shift, high = (magnitude >> 32) << shift;
    digit_[at] += sign * static_cast<std::int64_t>(low & 0xffffffffu);
    digit_[at + 1] += sign * static_cast<std::int64_t>((low >> 32) + (high & 0xffffffffu));
    digit_[at + 2] += sign * static_cast<std::int64_t>(high >> 32);
    if (++terms_ >= (std::int64_t{1} << 28)) normalise();
  }
  void add(const ExactSum& other) {
    normalise();
    for (int i = 0; i < kDigits; ++i) digit_[i] += other.digit_[i];
    normalise();
  }
  // The sum rounded to a double, most significant digit first: the same digits give the same double.
  double value() {
    normalise();
    double out = 0.0;
    for (int i = kDigits - 1; i >= 0; --i)
      if (digit_[i] != 0) out += std::ldexp(static_cast<double>(digit_[i]), 32 * i - kBias);
    return out;
  }
  // Carries moved up: every digit but the last in [0, 2^32). A unique representation of the sum.
  void normalise() {
    for (int i = 0; i + 1 < kDigits; ++i) {
      const std::int64_t carry = digit_[i] >> 32;  // floor division by 2^32
      digit_[i] -= carry * (std::int64_t{1} << 32);
      digit_[i + 1] += carry;
    }
    terms_ = 0;
  }
  std::array<std::int64_t, kDigits>& digits() { return digit_; }
  const std::array<std::int64_t, kDigits>& digits() const { return digit_; }

 private:
  std::array<std::int64_t, kDigits> digit_{};
  std::int64_t terms_ = 0;
};

}  // namespace percussion::parallel
