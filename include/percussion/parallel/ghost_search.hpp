#pragma once
// Which owned items every other rank needs as ghosts because they come within reach of its items.
//
// Each item has a reach ρ (for particles: radius plus half the skin); items i and j need each other when
// |x_i − x_j| ≤ ρ_i + ρ_j. The search is conservative on a grid of cells of edge h = 2 max ρ (a hair more, so
// rounding in floor(x / h) loses no cell): rank r tells the ranks near it which cells its items occupy and the
// largest reach in each, and an owned item i goes to r when
//     dist(x_i, box of r's items) ≤ ρ_i + ρ_max(r)   and   dist(x_i, cell C) ≤ ρ_i + ρ_C for some cell C of r.
// Scattered fragments make a rank's bounding box span the whole body; the cells keep the ghosts near. With one
// reach for all items this is the halo of one global cut-off 2ρ.
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

// The grid edge that search uses for the largest reach over all ranks (exposed for tests that recompute it).
double ghost_cell_edge(double largest_reach);

}  // namespace percussion::parallel
