#pragma once
// Exact intersection test of two closed segments in the plane (orientation signs only, no division): crossing
// when each segment's endpoints lie strictly on both sides of the other's line, touching for every other common
// point (an endpoint on the other segment, collinear overlap). Segments may degenerate to points.
#include <Eigen/Core>

#include "percussion/geometry/intersection/intersection_kind.hpp"

namespace percussion::geometry {

Intersection segment_segment(const Eigen::Vector2d& p0, const Eigen::Vector2d& p1, const Eigen::Vector2d& q0,
                             const Eigen::Vector2d& q1);

}  // namespace percussion::geometry
