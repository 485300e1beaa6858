#include "percussion/methods/method.hpp"

#include "percussion/core/error.hpp"
#include "percussion/methods/bdem/checkpoint.hpp"
#include "percussion/methods/bdem/explicit_bdem.hpp"
#include "percussion/methods/bdem/implicit_bdem.hpp"

namespace percussion {

std::unique_ptr<Method> create_method(const Scene& scene, MPI_Comm comm, const std::string& restart_file) {
  if (scene.method != "bdem") throw InputError(scene.path + ": /method: unknown method '" + scene.method + "'");
  const bdem::GlobalModel model =
      restart_file.empty() ? bdem::model_from_scene(scene) : bdem::model_from_checkpoint(restart_file, comm);
  if (scene.integrator == "implicit") return std::make_unique<bdem::ImplicitBdem>(scene, comm, model);
  return std::make_unique<bdem::ExplicitBdem>(scene, comm, model);
}

}  // namespace percussion
