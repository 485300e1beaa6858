#pragma once
// Bond candidates: pairs of spheres that touch at rest (notes 001 §4, "bond creation").
#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace percussion::geometry {

// All pairs i < j with |p_i − p_j| <= (r_i + r_j)(1 + tolerance), sorted by i, then j.
// radius.size() must equal p.size(); radii > 0; tolerance >= 0 (std::invalid_argument otherwise).
std::vector<std::array<std::int64_t, 2>> touching_pairs(std::span<const Eigen::Vector3d> p,
                                                        std::span<const double> radius, double tolerance);

}  // namespace percussion::geometry
