// The rigid-impact method's registry entry.
#include "percussion/methods/rigid/create.hpp"

#include <sstream>

#include "percussion/methods/rigid/rigid_method.hpp"
#include "percussion/methods/rigid/scene.hpp"

namespace percussion::rigid {

void validate(const Scene& scene) { parse_scene(scene); }

std::string describe(const Scene& common) {
  const RigidScene scene = parse_scene(common);
  std::size_t fixed = 0, boxes = 0;
  for (const Ball& b : scene.balls) fixed += b.fixed, boxes += b.is_box();
  std::ostringstream o;
  o << scene.dimension << "D, " << scene.balls.size() - boxes << " balls, " << boxes << " boxes (" << fixed
    << " fixed), " << scene.walls.size() << " walls; ";
  if (scene.mode == "resolve") o << "one impact resolution";
  else o << scene.integrator << ", time step " << scene.time_step << " s, to t = " << scene.time.end << " s";
  o << "; operator " << (scene.impact.op == Operator::gauss_seidel ? "gauss_seidel" : "generalized_reflections");
  return o.str();
}

std::unique_ptr<Method> create(const Scene& scene, MPI_Comm comm, const std::string& restart_file) {
  return std::make_unique<RigidMethod>(parse_scene(scene), comm, restart_file);
}

}  // namespace percussion::rigid
