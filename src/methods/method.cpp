#include "percussion/methods/method.hpp"

#include <iomanip>
#include <sstream>

#include "percussion/core/error.hpp"
#include "percussion/methods/bdem/checkpoint.hpp"
#include "percussion/methods/bdem/explicit_bdem.hpp"
#include "percussion/methods/bdem/implicit_bdem.hpp"

namespace percussion {

std::unique_ptr<Method> create_method(const Scene& scene, MPI_Comm comm, const std::string& restart_file) {
  if (scene.method != "bdem") throw InputError(scene.path + ": /method: unknown method '" + scene.method + "'");
  const bdem::GlobalModel model =
      restart_file.empty() ? bdem::model_from_scene(scene) : bdem::model_from_checkpoint(restart_file, comm);
  // A restart continues at the checkpoint's step (time = step x step length). An implicit run's step is 10-1000
  // critical steps: an explicit run would blow up at once, so it is refused before anything is written.
  if (!restart_file.empty() && scene.integrator == "explicit") {
    const double limit = bdem::critical_step(scene);
    if (model.time_step > limit) {
      std::ostringstream text;
      text << std::setprecision(4) << restart_file << ": time_step " << model.time_step << " s (written by the "
           << model.written_by_integrator << " integrator) is above the critical step " << limit << " s of "
           << scene.path << "; an explicit run continues a checkpoint at its time step, so it cannot continue this one";
      throw InputError(text.str());
    }
  }
  if (scene.integrator == "implicit") return std::make_unique<bdem::ImplicitBdem>(scene, comm, model);
  return std::make_unique<bdem::ExplicitBdem>(scene, comm, model);
}

}  // namespace percussion
