#include "percussion/physics/ipc/area_weights.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

namespace percussion::ipc {

std::vector<double> vertex_areas_2d(std::span<const geometry::Vec<2>> rest, std::span<const std::array<int, 2>> edges) {
  std::vector<double> area(rest.size(), 0.0);
  for (const auto& [i, j] : edges) {
    const double half = 0.5 * (rest[j] - rest[i]).norm();
    area[i] += half;
    area[j] += half;
  }
  return area;
}

namespace {
double triangle_area(std::span<const geometry::Vec<3>> x, const std::array<int, 3>& t) {
  return 0.5 * (x[t[1]] - x[t[0]]).cross(x[t[2]] - x[t[0]]).norm();
}
}  // namespace

std::vector<double> vertex_areas_3d(std::span<const geometry::Vec<3>> rest,
                                    std::span<const std::array<int, 3>> triangles) {
  std::vector<double> area(rest.size(), 0.0);
  for (const auto& t : triangles) {
    const double third = triangle_area(rest, t) / 3.0;
    for (int v : t) area[v] += third;
  }
  return area;
}

std::vector<double> edge_areas_3d(std::span<const geometry::Vec<3>> rest, std::span<const std::array<int, 3>> triangles,
                                  std::span<const std::array<int, 2>> edges) {
  std::map<std::pair<int, int>, std::size_t> index;
  for (std::size_t e = 0; e < edges.size(); ++e)
    index[std::minmax(edges[e][0], edges[e][1])] = e;
  std::vector<double> area(edges.size(), 0.0);
  for (const auto& t : triangles) {
    const double third = triangle_area(rest, t) / 3.0;
    for (int k = 0; k < 3; ++k) {
      const auto it = index.find(std::minmax(t[k], t[(k + 1) % 3]));
      if (it == index.end()) throw std::invalid_argument("edge_areas_3d: a triangle edge is not in the edge list");
      area[it->second] += third;
    }
  }
  return area;
}

}  // namespace percussion::ipc
