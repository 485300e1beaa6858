#include "percussion/methods/method.hpp"

#include "percussion/core/error.hpp"
#include "percussion/methods/bdem/checkpoint.hpp"
#include "percussion/methods/bdem/explicit_bdem.hpp"

namespace percussion {

std::unique_ptr<Method> create_method(const Scene& scene, MPI_Comm comm, const std::string& restart_file) {
  if (scene.method != "bdem") throw InputError(scene.path + ": /method: unknown method '" + scene.method + "'");
  if (scene.integrator != "explicit")
    throw InputError(scene.path + ": /integrator: '" + scene.integrator +
                     "' is not available yet for method 'bdem' (available: explicit)");
  bdem::GlobalModel model =
      restart_file.empty() ? bdem::model_from_scene(scene) : bdem::model_from_checkpoint(restart_file, comm);
  return std::make_unique<bdem::ExplicitBdem>(scene, comm, model);
}

}  // namespace percussion
