#pragma once
// Area weights A_k of the contact pairs, from the rest geometry (notes 002 §2.7, IPC Toolkit's convergent
// formulation): a vertex's area is half its incident boundary edges' lengths (2D) or a third of its incident
// boundary triangles' areas (3D); an edge's area is a third of its incident triangles' areas. A pair's weight
// divides by the number of times the same contact is counted: 2D point–edge by 2 (once from each side), 3D
// point–triangle and edge–edge by 4 (each side, and both pair types integrate the same surface).
#include <array>
#include <span>
#include <vector>

#include "percussion/geometry/distance/distance_type.hpp"

namespace percussion::ipc {

std::vector<double> vertex_areas_2d(std::span<const geometry::Vec<2>> rest, std::span<const std::array<int, 2>> edges);
std::vector<double> vertex_areas_3d(std::span<const geometry::Vec<3>> rest,
                                    std::span<const std::array<int, 3>> triangles);
// Per entry of `edges` (each edge once, either orientation); every triangle edge must be listed.
std::vector<double> edge_areas_3d(std::span<const geometry::Vec<3>> rest, std::span<const std::array<int, 3>> triangles,
                                  std::span<const std::array<int, 2>> edges);

inline double point_edge_weight_2d(double vertex_area) { return vertex_area / 2.0; }
inline double point_triangle_weight(double vertex_area) { return vertex_area / 4.0; }
inline double edge_edge_weight(double edge_area_a, double edge_area_b) { return (edge_area_a + edge_area_b) / 4.0; }

}  // namespace percussion::ipc
