#pragma once
// Obstacles as the planes that bound them; contact against each plane is physics::sphere_plane.
#include <Eigen/Core>

#include "percussion/core/scene_parts.hpp"

namespace percussion::geometry {

// f(point, unit normal into the free side) for every bounding plane: a Plane yields itself, a Box (which
// keeps particles inside) its six faces with inward normals, in the order −x, +x, −y, +y, −z, +z faces.
template <class F>
void for_each_plane(const Obstacle& o, F&& f) {
  switch (o.kind) {
    case Obstacle::Kind::Plane:
      f(o.point, o.normal);
      return;
    case Obstacle::Kind::Box:
      for (int a = 0; a < 3; ++a) {
        const Eigen::Vector3d e = Eigen::Vector3d::Unit(a);
        f(o.min, e);
        const Eigen::Vector3d inward = -e;
        f(o.max, inward);
      }
      return;
  }
}

}  // namespace percussion::geometry
