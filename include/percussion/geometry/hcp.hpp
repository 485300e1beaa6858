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

// A generator's units, in the order hcp_fill lists their spheres: close-packed layers k of a lattice, yarns of a
// woven cloth. Splitting the units among ranks splits a body by space, and each unit's spheres are consecutive.
long fill_units(const Generator& g);
// The spheres of units [begin, end) (clamped to the units there are), in hcp_fill's order; counts, if given,
// receives one count per unit. Throws as hcp_fill does, except that an empty range or a range without
// spheres returns nothing.
std::vector<Eigen::Vector3d> hcp_fill(const Generator& g, long begin, long end, std::vector<long>* counts);

// "box", "cylinder", "sphere", "woven".
const char* shape_name(Generator::Shape shape);

// Orthonormal right-handed frame (e1, e2, axis) for a unit axis; the z axis yields the world x and y.
void frame_from_axis(const Eigen::Vector3d& axis, Eigen::Vector3d& e1, Eigen::Vector3d& e2);

}  // namespace percussion::geometry
