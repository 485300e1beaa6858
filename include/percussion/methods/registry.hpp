#pragma once
// Methods by name, as LAMMPS finds its styles: a scene's "method" picks the entry that parses and checks its
// sections (against docs/schema/<name>.schema.json and in code) and builds the method, fresh or from a checkpoint.
#include <mpi.h>

#include <memory>
#include <span>
#include <string>

#include "percussion/core/scene.hpp"
#include "percussion/methods/method.hpp"

namespace percussion {

struct MethodType {
  const char* name;
  const char* summary;  // one line for `percussion --help`
  // Throws InputError naming the file and JSON pointer at the first problem of the method's sections.
  void (*validate)(const Scene& scene);
  // `percussion check`: validate, build what a run would start from (on one rank), and describe it in a few lines.
  std::string (*describe)(const Scene& scene);
  // Collective. restart_file empty: from the scene; otherwise continue that checkpoint (which the method reads).
  std::unique_ptr<Method> (*create)(const Scene& scene, MPI_Comm comm, const std::string& restart_file);
};

std::span<const MethodType> registered_methods();
// The entry for scene.method; InputError "<file>: /method: unknown method 'x' (registered: ...)" otherwise.
const MethodType& find_method(const Scene& scene);

// Everything a run checks before it writes anything: the method exists, its sections parse and the whole file
// matches the method's published schema.
void validate_scene(const Scene& scene);
// The method built from a scene that passed validate_scene, fresh or continuing `restart_file`. (A run validates
// before it looks at its output directory, so a bad scene is reported first.)
std::unique_ptr<Method> create_method(const Scene& scene, MPI_Comm comm, const std::string& restart_file);

}  // namespace percussion
