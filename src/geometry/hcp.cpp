#include "percussion/geometry/hcp.hpp"

#include <Eigen/Geometry>
#include <cmath>
#include <string>

#include "percussion/core/error.hpp"
#include "percussion/geometry/woven.hpp"

namespace percussion::geometry {

namespace {

constexpr double kSqrt3 = 1.7320508075688772;
constexpr double kLayer = 1.6329931618554521;  // 2√6/3: distance between close-packed layers / r

// Membership tests get a slack of 1e-9 r so that a sphere touching a face exactly is not lost to round-off.
constexpr double kSlack = 1e-9;

const char* shape_name(Generator::Shape s) {
  switch (s) {
    case Generator::Shape::Box: return "box";
    case Generator::Shape::Cylinder: return "cylinder";
    case Generator::Shape::Sphere: return "sphere";
    case Generator::Shape::Woven: return "woven";
  }
  return "shape";
}

// Lattice sites relative to the anchor, in lattice-frame coordinates (units of length).
Eigen::Vector3d site(double r, long i, long j, long k) {
  return r * Eigen::Vector3d(2.0 * i + ((j + k) % 2), kSqrt3 * (j + (k % 2) / 3.0), kLayer * k);
}

// Walks every lattice site whose centre lies in [0, extent - 2r] (+ slack) per axis, in k, j, i order,
// calling keep(local) and appending origin + frame * local when it returns true.
template <class Keep>
void walk(const Generator& g, const Eigen::Vector3d& extent, const Eigen::Vector3d& origin,
          const Eigen::Matrix3d& frame, Keep&& keep, std::vector<Eigen::Vector3d>& out) {
  const double r = g.particle_radius;
  const Eigen::Vector3d room = extent.array() - 2.0 * r + kSlack * r;  // admissible centre range per axis
  const char* name = shape_name(g.shape);
  if (!(room.minCoeff() >= 0.0)) {
    throw InputError(std::string(name) + ": no particle fits (size < 2 particle radii)");
  }
  // Sites per axis; the x count includes the odd rows' offset of r, filtered below.
  const double nk = std::floor(room.z() / (kLayer * r)) + 1.0;
  const double nj = std::floor(room.y() / (kSqrt3 * r)) + 1.0;
  const double ni = std::floor(room.x() / (2.0 * r)) + 1.0;
  if (ni * nj * nk > 2147483647.0) {
    throw InputError(std::string(name) + ": too many particles (more than 2^31 lattice sites); use a larger "
                     "particle_radius or a smaller shape");
  }
  for (long k = 0; k < static_cast<long>(nk); ++k) {
    for (long j = 0; j < static_cast<long>(nj); ++j) {
      for (long i = 0; i < static_cast<long>(ni); ++i) {
        const Eigen::Vector3d s = site(r, i, j, k);
        if ((s.array() > room.array()).any()) continue;
        if (keep(s)) out.push_back(origin + frame * s);
      }
    }
  }
  if (out.empty()) throw InputError(std::string(name) + ": no particle fits (size < 2 particle radii)");
}

}  // namespace

void frame_from_axis(const Eigen::Vector3d& axis, Eigen::Vector3d& e1, Eigen::Vector3d& e2) {
  // Project the world axis least aligned with `axis`; x for axes near z so an upright frame is the identity.
  const Eigen::Vector3d helper = std::abs(axis.x()) < 0.9 ? Eigen::Vector3d::UnitX() : Eigen::Vector3d::UnitY();
  e1 = (helper - helper.dot(axis) * axis).normalized();
  e2 = axis.cross(e1);
}

std::vector<Eigen::Vector3d> hcp_fill(const Generator& g) {
  const double r = g.particle_radius;
  const char* name = shape_name(g.shape);
  if (!(r > 0.0) || !std::isfinite(r)) {
    throw InputError(std::string(name) + ": particle_radius must be a positive finite number");
  }
  std::vector<Eigen::Vector3d> out;
  switch (g.shape) {
    case Generator::Shape::Woven: return woven_fill(g);  // yarn chains, not a lattice
    case Generator::Shape::Box: {
      walk(g, g.max - g.min, g.min + Eigen::Vector3d::Constant(r), Eigen::Matrix3d::Identity(),
           [](const Eigen::Vector3d&) { return true; }, out);
      break;
    }
    case Generator::Shape::Sphere: {
      // Local coordinates are measured from the bounding box's first site, centre - R + r.
      const double reach = (g.radius - r) * (1.0 + kSlack) + kSlack * r;
      const Eigen::Vector3d centre_local = Eigen::Vector3d::Constant(g.radius - r);
      walk(g, Eigen::Vector3d::Constant(2.0 * g.radius), g.center - centre_local, Eigen::Matrix3d::Identity(),
           [&](const Eigen::Vector3d& s) { return (s - centre_local).squaredNorm() <= reach * reach; }, out);
      break;
    }
    case Generator::Shape::Cylinder: {
      const Eigen::Vector3d axis = g.axis.normalized();
      Eigen::Matrix3d frame;
      Eigen::Vector3d e1, e2;
      frame_from_axis(axis, e1, e2);
      frame << e1, e2, axis;
      const double reach = (g.radius - r) * (1.0 + kSlack) + kSlack * r;
      const Eigen::Vector2d centre_local = Eigen::Vector2d::Constant(g.radius - r);
      // Local origin: first site of the bounding box [-R, R]² × [0, h] in the cylinder frame.
      const Eigen::Vector3d origin = g.center + frame * Eigen::Vector3d(r - g.radius, r - g.radius, r);
      walk(g, Eigen::Vector3d(2.0 * g.radius, 2.0 * g.radius, g.height), origin, frame,
           [&](const Eigen::Vector3d& s) { return (s.head<2>() - centre_local).squaredNorm() <= reach * reach; },
           out);
      break;
    }
  }
  return out;
}

}  // namespace percussion::geometry
