#pragma once
// Which owned items every other rank needs as ghosts because they come within reach of its items.
//
// Each item has a reach ρ (for particles: radius plus half the skin); items i and j need each other when
// |x_i − x_j| ≤ ρ_i + ρ_j. The search is conservative, on grids by reach: with b the smallest positive reach,
// level L holds the items of reach in (b 2^(L−1), b 2^L] (level 0: up to b) on cells of edge h_L = 2 b 2^L (a hair
// more, so rounding in floor(x / h) loses no cell). Rank r tells the ranks near it which cells of each level its
// items occupy and the largest reach in each, and an owned item i goes to r when
//     dist(x_i, box of r's items) ≤ ρ_i + ρ_max(r)   and   dist(x_i, cell C) ≤ ρ_i + ρ_C for some cell C of r.
// Scattered fragments make a rank's bounding box span the whole body; the cells keep the ghosts near, and the
// levels keep a small item from being ghosted by cells sized for the largest. With one reach for all there is one
// level: the halo of one global cut-off 2ρ on cells of that edge.
#include <mpi.h>

#include <Eigen/Core>
#include <cstdint>
#include <span>
#include <vector>

namespace percussion::parallel {

// Collective. reach has one value per owned item, or one value for all. Returns per rank the owned slots (indices
// into x) within reach of that rank's items, ascending; empty for this rank.
std::vector<std::vector<std::int32_t>> ghosts_by_reach(MPI_Comm comm, std::span<const Eigen::Vector3d> x,
                                                       std::span<const double> reach);

// The grid of that search (exposed for tests that recompute it): the level of a reach and its cells' edge, for
// base b the smallest positive reach over all ranks.
int ghost_level(double base, double reach);
double ghost_cell_edge(double base, int level);

}  // namespace percussion::parallel
