#pragma once
// Squared distance between two edges, 3D (stencil [ea0, ea1, eb0, eb1]). The case comes from the closest points
// of the two segments: both interiors is line–line (point–plane kernel on (ea0 − eb0, ea1 − ea0, eb1 − eb0)),
// otherwise point–edge or point–point on the sub-stencil. Parallel edges, where line–line is undefined, take the
// nearest of the four endpoint–edge distances.
#include "percussion/geometry/distance/point_plane.hpp"

namespace percussion::geometry {

// Edges whose ‖a × b‖² is below this times ‖a‖²‖b‖² (sine of the angle below 1e-10) count as parallel.
inline constexpr double kParallelEdgesSin2 = 1e-20;

EdgeEdgeCase edge_edge_case(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1);

double line_line_distance(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1);
Vec<12> line_line_distance_gradient(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1);
Mat<12> line_line_distance_hessian(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1);

double edge_edge_distance(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1, EdgeEdgeCase c);
Vec<12> edge_edge_distance_gradient(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1,
                                    EdgeEdgeCase c);
Mat<12> edge_edge_distance_hessian(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1,
                                   EdgeEdgeCase c);

// Stencil indices of the point and the edge of a point–edge sub-case, or of the two points of a point–point one
// (j unused then): EA0_EB → point 0, edge (2, 3); EA_EB1 → point 3, edge (0, 1); EA1_EB0 → points 1, 2.
struct EdgeEdgeSub {
  int point, i, j;
};
EdgeEdgeSub edge_edge_sub_stencil(EdgeEdgeCase c);

}  // namespace percussion::geometry
