#include "percussion/geometry/intersection/orientation.hpp"

#include <gmp.h>

#include <cmath>

namespace percussion::geometry {
namespace {

// Shewchuk's bounds on the rounding error of the plain floating-point determinants (round to nearest, ε = 2⁻⁵³).
constexpr double kEpsilon = 0x1p-53;
constexpr double kOrient2dBound = (3.0 + 16.0 * kEpsilon) * kEpsilon;
constexpr double kOrient3dBound = (7.0 + 56.0 * kEpsilon) * kEpsilon;

// A rational from a double (exact) and the arithmetic the determinants need.
struct Rational {
  mpq_t q;
  Rational() { mpq_init(q); }
  explicit Rational(double v) {
    mpq_init(q);
    mpq_set_d(q, v);
  }
  Rational(const Rational&) = delete;
  Rational& operator=(const Rational&) = delete;
  ~Rational() { mpq_clear(q); }
};

void difference(Rational& out, double a, double b) {
  Rational x(a), y(b);
  mpq_sub(out.q, x.q, y.q);
}

// a·d − b·c
void cross(Rational& out, const Rational& a, const Rational& b, const Rational& c, const Rational& d) {
  Rational ad, bc;
  mpq_mul(ad.q, a.q, d.q);
  mpq_mul(bc.q, b.q, c.q);
  mpq_sub(out.q, ad.q, bc.q);
}

int exact_orient2d(const Eigen::Vector2d& a, const Eigen::Vector2d& b, const Eigen::Vector2d& c) {
  Rational acx, acy, bcx, bcy, det;
  difference(acx, a.x(), c.x());
  difference(acy, a.y(), c.y());
  difference(bcx, b.x(), c.x());
  difference(bcy, b.y(), c.y());
  cross(det, acx, acy, bcx, bcy);
  return mpq_sgn(det.q);
}

int exact_orient3d(const Eigen::Vector3d& a, const Eigen::Vector3d& b, const Eigen::Vector3d& c,
                   const Eigen::Vector3d& d) {
  Rational ad[3], bd[3], cd[3];
  for (int k = 0; k < 3; ++k) {
    difference(ad[k], a[k], d[k]);
    difference(bd[k], b[k], d[k]);
    difference(cd[k], c[k], d[k]);
  }
  // Expansion along the z column: adz (bdx cdy − bdy cdx) + bdz (cdx ady − cdy adx) + cdz (adx bdy − ady bdx).
  Rational m0, m1, m2, t, det;
  cross(m0, bd[0], bd[1], cd[0], cd[1]);
  cross(m1, cd[0], cd[1], ad[0], ad[1]);
  cross(m2, ad[0], ad[1], bd[0], bd[1]);
  mpq_mul(det.q, ad[2].q, m0.q);
  mpq_mul(t.q, bd[2].q, m1.q);
  mpq_add(det.q, det.q, t.q);
  mpq_mul(t.q, cd[2].q, m2.q);
  mpq_add(det.q, det.q, t.q);
  return mpq_sgn(det.q);
}

int sign_of(double v) { return (v > 0) - (v < 0); }

}  // namespace

int orient2d(const Eigen::Vector2d& a, const Eigen::Vector2d& b, const Eigen::Vector2d& c) {
  const double left = (a.x() - c.x()) * (b.y() - c.y());
  const double right = (a.y() - c.y()) * (b.x() - c.x());
  const double det = left - right;
  const double bound = kOrient2dBound * (std::abs(left) + std::abs(right));
  if (det > bound || -det > bound) return sign_of(det);
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
  return exact_orient3d(a, b, c, d);
}

}  // namespace percussion::geometry
