#pragma once
// METIS k-way partition of an item graph (particles joined by bonds and touching neighbours).
// Every rank calls it with the same graph and gets the same answer: METIS is deterministic for a fixed seed.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace percussion::parallel {

// part[i] in [0, nparts) for each of n items; edges are unordered pairs (i, j), i != j.
// Balances item counts; minimises the number of cut edges.
std::vector<int> partition_graph(std::int64_t n, std::span<const std::array<std::int64_t, 2>> edges, int nparts);

}  // namespace percussion::parallel
