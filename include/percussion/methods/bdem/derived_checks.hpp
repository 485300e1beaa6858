#pragma once
// Quantities the bonded DEM derives from a scene, checked like the inputs they come from: particle masses and
// critical steps, the time step, the counts of steps, frame times and checkpoint times, the particles the bodies
// will hold and the memory that takes. A bad one is an InputError naming the file and the JSON path that caused it.
#include <cstdint>

#include "percussion/methods/bdem/scene.hpp"

namespace percussion::bdem {

// Counts that times are derived from (step x time step, k x interval) stay exact in a double up to 2^53.
inline constexpr double kMaxCount = 9007199254740992.0;  // 2^53

// Particles body `b` will hold, estimated from its shape without generating it: volume over the HCP lattice's
// volume per sphere (4 sqrt2 r^3) for boxes, cylinders and spheres, the woven layout's exact count for cloth.
double estimated_particles(const BdemScene& scene, std::size_t b);

// Throws InputError("<file>: <pointer>: ...") at the first derived quantity that is not a usable number or count:
// a particle mass or critical step that is not a positive finite number, a time step that is not, an explicit
// `time.step` above the critical step (unless time.allow_above_critical), more than 2^53 steps, frame times or
// checkpoint times up to time.end, or more than 2^53 particles.
void check_derived(const BdemScene& scene);

}  // namespace percussion::bdem
