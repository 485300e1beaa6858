#pragma once
// Hexagonal close packing of equal spheres filling a generator's shape (notes 001 §4).
#include <Eigen/Core>
#include <vector>

#include "percussion/core/scene_parts.hpp"

namespace percussion::geometry {

// Lattice with spacing 2r: p = r·(2i + ((j+k) mod 2), √3(j + (k mod 2)/3), (2√6/3)k), layers ABAB along the
// third axis. The first site touches the min faces of the shape's bounding box (centre at min + r). Box and
// sphere use the world axes; a cylinder uses a frame whose third axis is its own axis, so layers stack along
// it and the base layer rests on the base. Only spheres lying wholly inside the shape are kept, in the order
// k (outer), j, i (inner). A woven generator is not a lattice: it is passed on to woven_fill (woven.hpp).
// Throws InputError("<shape>: ...") when nothing fits; callers prefix "<path>: <json pointer>: ".
std::vector<Eigen::Vector3d> hcp_fill(const Generator& g);

// Orthonormal right-handed frame (e1, e2, axis) for a unit axis; the z axis yields the world x and y.
void frame_from_axis(const Eigen::Vector3d& axis, Eigen::Vector3d& e1, Eigen::Vector3d& e2);

}  // namespace percussion::geometry
