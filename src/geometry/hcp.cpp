#include "percussion/geometry/hcp.hpp"

#include <Eigen/Geometry>
#include <algorithm>
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

// Lattice sites relative to the anchor, in lattice-frame coordinates (units of length).
Eigen::Vector3d site(double r, long i, long j, long k) {
  return r * Eigen::Vector3d(2.0 * i + ((j + k) % 2), kSqrt3 * (j + (k % 2) / 3.0), kLayer * k);
}

// Sites per axis of the lattice over [0, extent - 2r] (+ slack): the x count includes the odd rows' offset of r.
Eigen::Vector3d lattice_counts(const Generator& g, const Eigen::Vector3d& extent) {
  const double r = g.particle_radius;
  const Eigen::Vector3d room = extent.array() - 2.0 * r + kSlack * r;  // admissible centre range per axis
  const char* name = shape_name(g.shape);
  if (!(room.minCoeff() >= 0.0)) {
    throw InputError(std::string(name) + ": no particle fits (size < 2 particle radii)");
  }
  const Eigen::Vector3d n(std::floor(room.x() / (2.0 * r)) + 1.0, std::floor(room.y() / (kSqrt3 * r)) + 1.0,
                          std::floor(room.z() / (kLayer * r)) + 1.0);
  if (n.prod() > 2147483647.0) {
    throw InputError(std::string(name) + ": too many particles (more than 2^31 lattice sites); use a larger "
                     "particle_radius or a smaller shape");
  }
  return n;
}

// Walks the lattice sites of layers [k_begin, k_end) whose centre lies in [0, extent - 2r] (+ slack) per axis, in
// k, j, i order, calling keep(local) and appending origin + frame * local when it returns true; counts one entry
// per layer.
template <class Keep>
void walk(const Generator& g, const Eigen::Vector3d& extent, const Eigen::Vector3d& origin,
          const Eigen::Matrix3d& frame, Keep&& keep, long k_begin, long k_end, std::vector<Eigen::Vector3d>& out,
          std::vector<long>* counts) {
  const double r = g.particle_radius;
  const Eigen::Vector3d room = extent.array() - 2.0 * r + kSlack * r;
  const Eigen::Vector3d n = lattice_counts(g, extent);
  const long ni = static_cast<long>(n.x()), nj = static_cast<long>(n.y());
  for (long k = std::max(0L, k_begin); k < std::min(static_cast<long>(n.z()), k_end); ++k) {
    const std::size_t before = out.size();
    for (long j = 0; j < nj; ++j) {
      for (long i = 0; i < ni; ++i) {
        const Eigen::Vector3d s = site(r, i, j, k);
        if ((s.array() > room.array()).any()) continue;
        if (keep(s)) out.push_back(origin + frame * s);
      }
    }
    if (counts) counts->push_back(static_cast<long>(out.size() - before));
  }
}

// The lattice's bounding extent in its own frame, with the frame and the origin of its first site.
struct Lattice {
  Eigen::Vector3d extent, origin;
  Eigen::Matrix3d frame = Eigen::Matrix3d::Identity();
};

Lattice lattice_of(const Generator& g) {
  const double r = g.particle_radius;
  Lattice l;
  switch (g.shape) {
    case Generator::Shape::Box:
    case Generator::Shape::Woven:  // (not a lattice: woven_fill)
      l.extent = g.max - g.min;
      l.origin = g.min + Eigen::Vector3d::Constant(r);
      break;
    case Generator::Shape::Sphere:
      // Local coordinates are measured from the bounding box's first site, centre - R + r.
      l.extent = Eigen::Vector3d::Constant(2.0 * g.radius);
      l.origin = g.center - Eigen::Vector3d::Constant(g.radius - r);
      break;
    case Generator::Shape::Cylinder: {
      const Eigen::Vector3d axis = g.axis.normalized();
      Eigen::Vector3d e1, e2;
      frame_from_axis(axis, e1, e2);
      l.frame << e1, e2, axis;
      l.extent = Eigen::Vector3d(2.0 * g.radius, 2.0 * g.radius, g.height);
      // Local origin: first site of the bounding box [-R, R]² × [0, h] in the cylinder frame.
      l.origin = g.center + l.frame * Eigen::Vector3d(r - g.radius, r - g.radius, r);
      break;
    }
  }
  return l;
}

void check_radius(const Generator& g) {
  const double r = g.particle_radius;
  if (!(r > 0.0) || !std::isfinite(r)) {
    throw InputError(std::string(shape_name(g.shape)) + ": particle_radius must be a positive finite number");
  }
}

}  // namespace

const char* shape_name(Generator::Shape s) {
  switch (s) {
    case Generator::Shape::Box: return "box";
    case Generator::Shape::Cylinder: return "cylinder";
    case Generator::Shape::Sphere: return "sphere";
    case Generator::Shape::Woven: return "woven";
  }
  return "shape";
}

void frame_from_axis(const Eigen::Vector3d& axis, Eigen::Vector3d& e1, Eigen::Vector3d& e2) {
  // Project the world axis least aligned with `axis`; x for axes near z so an upright frame is the identity.
  const Eigen::Vector3d helper = std::abs(axis.x()) < 0.9 ? Eigen::Vector3d::UnitX() : Eigen::Vector3d::UnitY();
  e1 = (helper - helper.dot(axis) * axis).normalized();
  e2 = axis.cross(e1);
}

long fill_units(const Generator& g) {
  check_radius(g);
  if (g.shape == Generator::Shape::Woven) {
    const WovenLayout w = woven_layout(g);
    return w.warp + w.weft;
  }
  return static_cast<long>(lattice_counts(g, lattice_of(g).extent).z());
}

std::vector<Eigen::Vector3d> hcp_fill(const Generator& g, long begin, long end, std::vector<long>* counts) {
  check_radius(g);
  if (g.shape == Generator::Shape::Woven) return woven_fill(g, begin, end, counts);  // yarn chains, not a lattice
  const double r = g.particle_radius;
  const Lattice l = lattice_of(g);
  std::vector<Eigen::Vector3d> out;
  switch (g.shape) {
    case Generator::Shape::Box:
    case Generator::Shape::Woven:
      walk(g, l.extent, l.origin, l.frame, [](const Eigen::Vector3d&) { return true; }, begin, end, out, counts);
      break;
    case Generator::Shape::Sphere: {
      const double reach = (g.radius - r) * (1.0 + kSlack) + kSlack * r;
      const Eigen::Vector3d centre_local = Eigen::Vector3d::Constant(g.radius - r);
      walk(g, l.extent, l.origin, l.frame,
           [&](const Eigen::Vector3d& s) { return (s - centre_local).squaredNorm() <= reach * reach; }, begin, end,
           out, counts);
      break;
    }
    case Generator::Shape::Cylinder: {
      const double reach = (g.radius - r) * (1.0 + kSlack) + kSlack * r;
      const Eigen::Vector2d centre_local = Eigen::Vector2d::Constant(g.radius - r);
      walk(g, l.extent, l.origin, l.frame,
           [&](const Eigen::Vector3d& s) { return (s.head<2>() - centre_local).squaredNorm() <= reach * reach; },
           begin, end, out, counts);
      break;
    }
  }
  return out;
}

std::vector<Eigen::Vector3d> hcp_fill(const Generator& g) {
  std::vector<Eigen::Vector3d> out = hcp_fill(g, 0, fill_units(g), nullptr);
  if (out.empty()) throw InputError(std::string(shape_name(g.shape)) + ": no particle fits (size < 2 particle radii)");
  return out;
}

}  // namespace percussion::geometry
