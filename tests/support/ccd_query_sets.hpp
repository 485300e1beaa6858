#pragma once
// CCD query sets with exactly known answers, for the tests and the CCD bench. Every coordinate is a dyadic
// rational with few bits, so the doubles are the exact rationals a CCD-Query-IO file holds.
//  - constructed: canonical configurations whose answer is known by construction (crossing at a rational time,
//    touching at t = 0 or 1, grazing an edge or a vertex, parallel, coplanar, zero-length edge, zero-area face,
//    no motion, near misses), each under several random invertible integer linear maps plus a translation and a
//    motion shared by all points (contact is invariant under both);
//  - random: random points, the answer from the exact rational reference (queries it cannot decide are dropped).
#include <string>
#include <vector>

#include "ccd_exact_reference.hpp"
#include "percussion/geometry/ccd/ccd.hpp"

namespace percussion::testing {

// Every canonical case of `kind`, under `variants` random maps each.
std::vector<CcdCase> ccd_constructed_cases(CcdKind kind, int variants, unsigned seed);

// Random queries: points uniform in [-1, 1]^3 at t = 0, moved by up to `motion` in each coordinate. *unknown
// counts the queries the exact reference could not decide (dropped).
std::vector<CcdCase> ccd_random_cases(CcdKind kind, int count, double motion, unsigned seed, int* unknown);

// Hits at a rational time and near misses by a gap between 2^-20 and 2^-6, half each, under random maps.
std::vector<CcdCase> ccd_near_touching_cases(CcdKind kind, int count, unsigned seed);

// Parallel motions (in-plane, parallel edges, parallel to the face) at heights 0 (hits) and 2^-k (misses).
std::vector<CcdCase> ccd_parallel_cases(CcdKind kind, int count, unsigned seed);

// The library's CCD on a case of any kind.
geometry::CcdResult run_ccd(const CcdCase& c, const geometry::CcdOptions& options = {});

// Writes the CCD-Query-IO rows (exact rationals of the doubles; point-edge cases cannot be written).
void write_ccd_query_file(const std::string& path, const std::vector<CcdCase>& cases);

}  // namespace percussion::testing
