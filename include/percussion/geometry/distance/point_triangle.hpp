#pragma once
// Squared distance from a point to a triangle, 3D (stencil [p, t0, t1, t2]). The case says which vertex, edge
// or the interior holds the closest point; the distance is then point–point, point–line or point–plane on that
// sub-stencil, with derivatives scattered into the 12 dofs.
#include "percussion/geometry/distance/point_plane.hpp"

namespace percussion::geometry {

// Barycentric (Voronoi-region) test on the triangle; a degenerate (zero-area) triangle falls back to the
// nearest of its three edges.
PointTriangleCase point_triangle_case(const Vec<3>& p, const Vec<3>& t0, const Vec<3>& t1, const Vec<3>& t2);

double point_triangle_distance(const Vec<3>& p, const Vec<3>& t0, const Vec<3>& t1, const Vec<3>& t2,
                               PointTriangleCase c);
Vec<12> point_triangle_distance_gradient(const Vec<3>& p, const Vec<3>& t0, const Vec<3>& t1, const Vec<3>& t2,
                                         PointTriangleCase c);
Mat<12> point_triangle_distance_hessian(const Vec<3>& p, const Vec<3>& t0, const Vec<3>& t1, const Vec<3>& t2,
                                        PointTriangleCase c);

// The triangle's vertices (stencil indices 1..3) of a point–edge sub-case: E0 = (t0, t1), E1 = (t1, t2),
// E2 = (t2, t0).
inline void point_triangle_edge(PointTriangleCase c, int& i, int& j) {
  i = c == PointTriangleCase::P_E0 ? 1 : c == PointTriangleCase::P_E1 ? 2 : 3;
  j = c == PointTriangleCase::P_E0 ? 2 : c == PointTriangleCase::P_E1 ? 3 : 1;
}

}  // namespace percussion::geometry
