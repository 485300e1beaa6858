#pragma once
// Exact intersection test of a closed segment and a closed triangle in space (orientation signs only): crossing
// when the segment passes through the triangle's interior from one side to the other, touching for every other
// common point (an endpoint on the triangle, the segment through the triangle's boundary, the segment lying in
// the triangle's plane and meeting it). A degenerate (collinear) triangle is the union of its edges.
#include <Eigen/Core>

#include "percussion/geometry/intersection/intersection_kind.hpp"

namespace percussion::geometry {

Intersection edge_triangle(const Eigen::Vector3d& e0, const Eigen::Vector3d& e1, const Eigen::Vector3d& t0,
                           const Eigen::Vector3d& t1, const Eigen::Vector3d& t2);

// Closed segments in space: touching if they share a point (never crossing: coplanar segments only meet in
// their plane), else none.
Intersection segment_segment_3d(const Eigen::Vector3d& p0, const Eigen::Vector3d& p1, const Eigen::Vector3d& q0,
                                const Eigen::Vector3d& q1);

}  // namespace percussion::geometry
