// The IPC method's registry entry.
#include "percussion/methods/ipc/create.hpp"

#include <sstream>

#include "percussion/core/error.hpp"
#include "percussion/methods/ipc/ipc_method.hpp"
#include "percussion/methods/ipc/scene.hpp"

namespace percussion::ipc {
namespace {

const char* kind_name(MeshSpec::Kind k) {
  switch (k) {
    case MeshSpec::Kind::box: return "box";
    case MeshSpec::Kind::disk: return "disk";
    case MeshSpec::Kind::ball: return "ball";
    case MeshSpec::Kind::file: return "file";
  }
  return "?";
}

}  // namespace

void validate(const Scene& scene) { parse_scene(scene); }

std::string describe(const Scene& common) {
  const IpcScene s = parse_scene(common);
  std::ostringstream o;
  o << s.dimension << "D, " << s.bodies.size() << " bodies (";
  for (std::size_t k = 0; k < s.bodies.size(); ++k)
    o << (k ? ", " : "") << kind_name(s.bodies[k].mesh.kind) << " P" << s.bodies[k].order << " "
      << s.materials[static_cast<std::size_t>(s.bodies[k].material)].model;
  o << "), " << s.planes.size() << " planes, " << s.prescribed.size() << " prescribed regions, " << s.loads.size()
    << " loads; " << s.integrator;
  if (s.integrator != "static") o << ", time step " << s.time_step << " s, to t = " << s.time.end << " s";
  return o.str();
}

std::unique_ptr<Method> create(const Scene& scene, MPI_Comm comm, const std::string& restart_file) {
  IpcScene s = parse_scene(scene);
  return std::make_unique<IpcMethod>(std::move(s), comm, restart_file);
}

}  // namespace percussion::ipc
