// The methods this build knows, by name.
#include "percussion/methods/registry.hpp"

#include "percussion/core/error.hpp"
#include "percussion/core/json_schema.hpp"
#include "percussion/methods/bdem/create.hpp"
#include "percussion/methods/ipc/create.hpp"
#include "percussion/methods/rigid/create.hpp"

namespace percussion {

namespace {

constexpr MethodType kMethods[] = {
    {"bdem", "bonded discrete elements, explicit or implicit (docs/bdem.md)", bdem::validate, bdem::describe,
     bdem::create},
    {"rigid", "simultaneous rigid impact that provably terminates: balls and walls (docs/rigid.md)", rigid::validate,
     rigid::describe, rigid::create},
    {"ipc", "IPC elastodynamics of meshed elastic bodies, static or BDF1/BDF2 (contact to come)", ipc::validate,
     ipc::describe, ipc::create},
};

}  // namespace

std::span<const MethodType> registered_methods() { return kMethods; }

const MethodType& find_method(const Scene& scene) {
  std::string names;
  for (const MethodType& m : kMethods) {
    if (scene.method == m.name) return m;
    names += (names.empty() ? "" : ", ") + std::string(m.name);
  }
  throw InputError(scene.path + ": /method: unknown method '" + scene.method + "' (registered: " + names + ")");
}

void validate_scene(const Scene& scene) {
  const MethodType& type = find_method(scene);
  type.validate(scene);  // first: its messages say what is wrong in the method's own words
  validate_against_schema(scene.document, type.name, scene.path);
}

std::unique_ptr<Method> create_method(const Scene& scene, MPI_Comm comm, const std::string& restart_file) {
  return find_method(scene).create(scene, comm, restart_file);
}

}  // namespace percussion
