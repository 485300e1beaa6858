#include "percussion/geometry/intersection/orientation.hpp"

#include <gmp.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace percussion::geometry {
namespace {

// Shewchuk's bounds on the rounding error of the plain floating-point determinants (round to nearest, ε = 2⁻⁵³).
constexpr double kEpsilon = 0x1p-53;
constexpr double kOrient2dBound = (3.0 + 16.0 * kEpsilon) * kEpsilon;
constexpr double kOrient3dBound = (7.0 + 56.0 * kEpsilon) * kEpsilon;

// Exact evaluation: the coordinates as integers over their common power of two (a double is m·2^e with an integer
// m of at most 53 bits), then integer arithmetic, whose sign is the determinant's. The integers are reused
// across calls (no allocation once they have grown).
struct Exact {
  static constexpr int kSlots = 24;
  mpz_t z[kSlots];
  Exact() {
    for (auto& v : z) mpz_init(v);
  }
  Exact(const Exact&) = delete;
  Exact& operator=(const Exact&) = delete;
  ~Exact() {
    for (auto& v : z) mpz_clear(v);
  }
  // z[0 .. n) = v[i] · 2^−e_min; false (and nothing loaded) if a value is not finite.
  bool load(const double* v, int n) {
    int exponent[12], low = std::numeric_limits<int>::max();
    double mantissa[12];
    for (int i = 0; i < n; ++i) {
      if (!std::isfinite(v[i])) return false;
      mantissa[i] = std::ldexp(std::frexp(v[i], &exponent[i]), 53);
      exponent[i] -= 53;
      if (v[i] != 0) low = std::min(low, exponent[i]);
    }
    for (int i = 0; i < n; ++i) {
      mpz_set_d(z[i], mantissa[i]);
      if (v[i] != 0) mpz_mul_2exp(z[i], z[i], static_cast<mp_bitcnt_t>(exponent[i] - low));
    }
    return true;
  }
  // z[out] = z[a]·z[d] − z[b]·z[c]
  void cross(int out, int a, int b, int c, int d) {
    mpz_mul(z[out], z[a], z[d]);
    mpz_submul(z[out], z[b], z[c]);
  }
};

thread_local Exact exact;

int exact_orient2d(const Eigen::Vector2d& a, const Eigen::Vector2d& b, const Eigen::Vector2d& c) {
  const double v[6] = {a.x(), a.y(), b.x(), b.y(), c.x(), c.y()};
  if (!exact.load(v, 6)) return 0;
  auto& z = exact.z;
  for (int k = 0; k < 2; ++k) {
    mpz_sub(z[6 + k], z[k], z[4 + k]);  // a − c
    mpz_sub(z[8 + k], z[2 + k], z[4 + k]);  // b − c
  }
  exact.cross(10, 6, 7, 8, 9);
  return mpz_sgn(z[10]);
}

int exact_orient3d(const Eigen::Vector3d& a, const Eigen::Vector3d& b, const Eigen::Vector3d& c,
                   const Eigen::Vector3d& d) {
  const double v[12] = {a.x(), a.y(), a.z(), b.x(), b.y(), b.z(), c.x(), c.y(), c.z(), d.x(), d.y(), d.z()};
  if (!exact.load(v, 12)) return 0;
  auto& z = exact.z;
  for (int k = 0; k < 9; ++k) mpz_sub(z[12 + k], z[k], z[9 + k % 3]);  // a − d, b − d, c − d at 12, 15, 18
  // Expansion along the z column: adz (bdx cdy − bdy cdx) + bdz (cdx ady − cdy adx) + cdz (adx bdy − ady bdx).
  exact.cross(21, 15, 16, 18, 19);
  exact.cross(22, 18, 19, 12, 13);
  exact.cross(23, 12, 13, 15, 16);
  mpz_mul(z[0], z[14], z[21]);
  mpz_addmul(z[0], z[17], z[22]);
  mpz_addmul(z[0], z[20], z[23]);
  return mpz_sgn(z[0]);
}

}  // namespace

int orient2d(const Eigen::Vector2d& a, const Eigen::Vector2d& b, const Eigen::Vector2d& c) {
  const double left = (a.x() - c.x()) * (b.y() - c.y());
  const double right = (a.y() - c.y()) * (b.x() - c.x());
  const double det = left - right;
  const double bound = kOrient2dBound * (std::abs(left) + std::abs(right));
  if (det > bound || -det > bound) return sign_of(det);
  // On one axis-parallel line (mesh sides often are): exactly collinear without the exact evaluation.
  if ((a.x() == b.x() && b.x() == c.x()) || (a.y() == b.y() && b.y() == c.y())) return 0;
  return exact_orient2d(a, b, c);
}

int orient3d(const Eigen::Vector3d& a, const Eigen::Vector3d& b, const Eigen::Vector3d& c, const Eigen::Vector3d& d) {
  const Eigen::Vector3d ad = a - d, bd = b - d, cd = c - d;
  const double bc = bd.x() * cd.y(), cb = bd.y() * cd.x();
  const double ca = cd.x() * ad.y(), ac = cd.y() * ad.x();
  const double ab = ad.x() * bd.y(), ba = ad.y() * bd.x();
  const double det = ad.z() * (bc - cb) + bd.z() * (ca - ac) + cd.z() * (ab - ba);
  const double permanent = (std::abs(bc) + std::abs(cb)) * std::abs(ad.z()) +
                           (std::abs(ca) + std::abs(ac)) * std::abs(bd.z()) +
                           (std::abs(ab) + std::abs(ba)) * std::abs(cd.z());
  const double bound = kOrient3dBound * permanent;
  if (det > bound || -det > bound) return sign_of(det);
  // In one axis-parallel plane (box faces are): exactly coplanar without the exact evaluation.
  for (int k = 0; k < 3; ++k)
    if (a[k] == b[k] && b[k] == c[k] && c[k] == d[k]) return 0;
  return exact_orient3d(a, b, c, d);
}

}  // namespace percussion::geometry
