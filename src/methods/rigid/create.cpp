// The rigid-impact method's registry entry.
#include "percussion/methods/rigid/create.hpp"

#include <sstream>

#include "percussion/methods/rigid/rigid_method.hpp"
#include "percussion/methods/rigid/scene.hpp"
#include "percussion/parallel/slices.hpp"

namespace percussion::rigid {

// One process builds and checks the whole scene here; on many, each rank builds only its slice of the bodies when the
// method starts, and the placement is checked there across ranks.
void validate(const Scene& scene) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  parse_scene(scene, size == 1 ? BodySlice{} : BodySlice{0, 0});
}

std::string describe(const Scene& common) {
  const RigidScene scene = parse_scene(common, BodySlice{0, 0});
  std::int64_t fixed = 0;
  for (const BodyEntry& e : scene.entries) fixed += e.fixed;
  const auto boxes = static_cast<std::int64_t>(scene.boxes.size());
  std::ostringstream o;
  o << scene.dimension << "D, " << scene.body_count - boxes << " balls, " << boxes << " boxes (" << fixed
    << " fixed), " << scene.walls.size() << " walls; ";
  if (scene.mode == "resolve") o << "one impact resolution";
  else o << scene.integrator << ", time step " << scene.time_step << " s, to t = " << scene.time.end << " s";
  o << "; operator " << (scene.impact.op == Operator::gauss_seidel ? "gauss_seidel" : "generalized_reflections");
  return o.str();
}

std::unique_ptr<Method> create(const Scene& scene, MPI_Comm comm, const std::string& restart_file) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const RigidScene counted = parse_scene(scene, BodySlice{0, 0});
  const BodySlice slice{parallel::share_begin(counted.body_count, rank, size),
                        parallel::share_begin(counted.body_count, rank + 1, size)};
  return std::make_unique<RigidMethod>(parse_scene(scene, slice), comm, restart_file);
}

}  // namespace percussion::rigid
