#pragma once
// Plain-woven cloth at yarn level (notes 001 §4, "cloth / yarn"): every yarn is a chain of touching spheres
// along a crimped centre-line, and crossing yarns touch, so the touching-pair bond finder ties the cloth
// together with chain bonds plus one bond per crossing.
#include <Eigen/Core>
#include <vector>

#include "percussion/core/scene_parts.hpp"

namespace percussion::geometry {

// Geometry of a woven generator (Generator::Shape::Woven; min, size, spacing, particle_radius r).
// Centre-lines, with o = min + (r, r, 2r):
//   warp j (along x): y = o_y + j s,  z = o_z + (-1)^j r cos(π (x - o_x) / s)
//   weft i (along y): x = o_x + i s,  z = o_z - (-1)^i r cos(π (y - o_y) / s)
// so at every crossing one yarn is at +r and the other at -r: their spheres touch (centre distance 2r), and
// the over/under order alternates along each yarn. Every yarn runs from the first to the last crossing; the
// spheres span [min, min + ((weft-1) s + 2r, (warp-1) s + 2r, 4r)].
// Between two crossings a yarn has `steps` chords of length exactly 2r whose end points lie on the crimp
// curve. Exactness fixes the spacing to a discrete set, so `spacing` is the realisable value nearest the
// requested one (|spacing - requested| < 2r; steps >= 3, spacing > 4r).
struct WovenLayout {
  double spacing = 0;   // realised yarn spacing s, m
  int steps = 0;        // chords between neighbouring crossings
  long warp = 0;        // yarns along x
  long weft = 0;        // yarns along y
  // (along-yarn offset, crimp height) of the spheres from one crossing (0, r) to the next (s, -r); steps + 1.
  std::vector<Eigen::Vector2d> half_wave;

  // warp ((weft-1) steps + 1) + weft ((warp-1) steps + 1)
  long particles() const { return warp * ((weft - 1) * steps + 1) + weft * ((warp - 1) * steps + 1); }
};

// Throws InputError("woven: ...") when spacing is outside [4r, 1000r], fewer than two yarns fit either way, more
// than 2^31 particles would result, or r is invalid.
WovenLayout woven_layout(const Generator& g);

// Sphere centres: the warp yarns (j = 0.., x increasing), then the weft yarns (i = 0.., y increasing).
std::vector<Eigen::Vector3d> woven_fill(const Generator& g);
// The spheres of yarns [begin, end) (warp yarns 0 .. warp-1, then weft yarns), one count per yarn in counts.
std::vector<Eigen::Vector3d> woven_fill(const Generator& g, long begin, long end, std::vector<long>* counts);

}  // namespace percussion::geometry
