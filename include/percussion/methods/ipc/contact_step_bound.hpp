#pragma once
// The largest admissible step of a line search (notes 002 §2.7, §7): α_max = MIN over the candidate pairs of all
// ranks of the time of impact of x → x + step, found by conservative CCD (geometry/ccd) with a minimum separation,
// and in closed form for the vertex–plane pairs. The pair set must have been built with this step (its
// candidates cover the whole sweep) and hold the positions x.
#include <span>

#include "percussion/geometry/ccd/ccd.hpp"
#include "percussion/methods/ipc/contact_set.hpp"

namespace percussion::ipc {

// Collective. step: dim per mesh-local vertex. Returns α in [0, 1]: every pair stays farther apart than
// options.min_distance on x → x + α step (1 when no pair gets that close), by the conservative inclusion CCD. With
// keep > 0 each pair instead keeps at least keep × its current distance (IPC's line search: a step never closes a
// gap entirely, however small it already is), bounded by additive CCD on exact distances.
double max_step(const ContactSet& set, std::span<const double> step, const geometry::CcdOptions& options = {},
                double keep = 0.0);

}  // namespace percussion::ipc
