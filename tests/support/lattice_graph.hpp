#pragma once
// Lattice graphs for the partitioner's tests and benchmark: vertex (i, j, k) of an nx x ny x nz box is row
// i + nx * (j + ny * k). "cubic": 6 face neighbours. "hcp": hexagonal close packing, 12 neighbours (6 in the
// layer, in axial coordinates, and 3 in each of the layers above and below, whose sites sit over alternate
// triangle centres), as the bonds of a close-packed particle block.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace percussion::test {

struct Lattice {
  std::string kind = "cubic";  // or "hcp"
  std::int64_t nx = 1, ny = 1, nz = 1;

  std::int64_t vertices() const { return nx * ny * nz; }

  // Neighbours of row v, ascending.
  std::vector<std::int64_t> neighbours(std::int64_t v) const {
    const std::int64_t i = v % nx, j = v / nx % ny, k = v / (nx * ny);
    std::vector<std::array<std::int64_t, 3>> steps;
    if (kind == "hcp") {
      steps = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {1, -1, 0}, {-1, 1, 0}};
      const std::int64_t s = k % 2 == 0 ? -1 : 1;  // layer A sees B at (0,0), (-1,0), (0,-1); B sees A at +
      for (std::int64_t dk : {-1, 1})
        for (const auto& d : {std::array<std::int64_t, 3>{0, 0, dk}, {s, 0, dk}, {0, s, dk}}) steps.push_back(d);
    } else {
      steps = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
    }
    std::vector<std::int64_t> out;
    for (const auto& d : steps) {
      const std::int64_t a = i + d[0], b = j + d[1], c = k + d[2];
      if (a >= 0 && a < nx && b >= 0 && b < ny && c >= 0 && c < nz) out.push_back(a + nx * (b + ny * c));
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // CSR rows [first, last) with global neighbour numbers.
  void rows(std::int64_t first, std::int64_t last, std::vector<std::int64_t>& xadj,
            std::vector<std::int64_t>& adjncy) const {
    xadj.assign(1, 0);
    adjncy.clear();
    for (std::int64_t v = first; v < last; ++v) {
      for (std::int64_t u : neighbours(v)) adjncy.push_back(u);
      xadj.push_back(static_cast<std::int64_t>(adjncy.size()));
    }
  }

  // Every edge once (i < j), for serial METIS and for counting cut edges.
  std::vector<std::array<std::int64_t, 2>> edges() const {
    std::vector<std::array<std::int64_t, 2>> out;
    for (std::int64_t v = 0; v < vertices(); ++v)
      for (std::int64_t u : neighbours(v))
        if (v < u) out.push_back({v, u});
    return out;
  }
};

// Edges whose ends lie in different parts.
inline std::int64_t edge_cut(const std::vector<std::array<std::int64_t, 2>>& edges, const std::vector<int>& part) {
  std::int64_t cut = 0;
  for (const auto& e : edges) cut += part[static_cast<std::size_t>(e[0])] != part[static_cast<std::size_t>(e[1])];
  return cut;
}

}  // namespace percussion::test
