// Bonded DEM in the method registry: its scene sections, and which integrator continues which checkpoint.
#include "percussion/methods/bdem/create.hpp"

#include <iomanip>
#include <sstream>

#include "percussion/core/error.hpp"
#include "percussion/core/log.hpp"
#include "percussion/methods/bdem/checkpoint.hpp"
#include "percussion/methods/bdem/derived_checks.hpp"
#include "percussion/methods/bdem/explicit_bdem.hpp"
#include "percussion/methods/bdem/implicit_bdem.hpp"
#include "percussion/methods/bdem/scene.hpp"

namespace percussion::bdem {

void validate(const Scene& scene) { check_derived(parse_scene(scene)); }

std::string describe(const Scene& common) {
  const BdemScene scene = parse_scene(common);
  const Model model = model_from_scene(scene);  // generators can still reject a shape
  const double dt = model.time_step;
  std::ostringstream o;
  o << "valid bdem scene (" << scene.integrator << ")\n  particles " << model.particles() << ", bonds "
    << model.bonds() << ", time step " << dt << " s, steps " << model.clock().step_at(scene.time.end)
    << ", a frame every " << scene.output.frame_interval << " s of simulated time";
  return o.str();
}

std::unique_ptr<Method> create(const Scene& common, MPI_Comm comm, const std::string& restart_file) {
  return create_from(parse_scene(common), comm, restart_file);
}

std::unique_ptr<BdemMethod> create_from(const BdemScene& scene, MPI_Comm comm, const std::string& restart_file) {
  Model model = restart_file.empty() ? model_from_scene(scene, comm) : model_from_checkpoint(restart_file, comm);
  // A checkpoint continues the physics it was written under (files without a fingerprint are older: trusted).
  if (!restart_file.empty() && !scene.allow_scene_change && !model.scene_fingerprint.empty() &&
      model.scene_fingerprint != scene_fingerprint(scene))
    throw InputError(restart_file + ": a checkpoint of " + model.scene_path + ", whose materials, bodies, bonds, "
                     "contact, obstacles, boundary conditions or gravity differ from " + scene.path +
                     "'s; pass --allow-scene-change to continue it under " + scene.path + " anyway");
  // A restart continues at the checkpoint's step length, except where the other integrator wrote it: an implicit
  // run's step is 10-1000 critical steps, at which an explicit run would blow up at once, and an explicit run's
  // would make an implicit one crawl. The run then takes its own step from the checkpoint's time on.
  if (!restart_file.empty() && !model.written_by_integrator.empty() &&
      model.written_by_integrator != scene.integrator) {
    const double own = scene_time_step(scene);
    if (own != model.time_step) {
      const StepClock written = model.clock();
      model.origin_time = written.time(model.step);
      model.origin_step = model.step;
      model.time_step = own;
      std::ostringstream text;
      text << std::setprecision(6) << restart_file << ": written by the " << model.written_by_integrator
           << " integrator at a step of " << written.time_step << " s; continuing from t = " << model.origin_time
           << " s (step " << model.step << ") with the " << scene.integrator << " step of " << own << " s";
      log::info(text.str());
    }
  }
  // (A file that does not say which integrator wrote it is continued at its step, which an explicit run refuses
  // above its critical step.)
  if (!restart_file.empty() && scene.integrator == "explicit") {
    const double limit = critical_step(scene);
    if (model.time_step > limit) {
      std::ostringstream text;
      const std::string writer = model.written_by_integrator.empty()
                                     ? "a file that does not name its integrator"
                                     : "written by the " + model.written_by_integrator + " integrator";
      text << std::setprecision(4) << restart_file << ": time_step " << model.time_step << " s (" << writer
           << ") is above the critical step " << limit << " s of " << scene.path
           << "; an explicit run continues such a checkpoint at its time step, so it cannot continue this one";
      throw InputError(text.str());
    }
  }
  return create_from(scene, comm, std::move(model));
}

std::unique_ptr<BdemMethod> create_from(const BdemScene& scene, MPI_Comm comm, Model model) {
  if (scene.integrator == "implicit") return std::make_unique<ImplicitBdem>(scene, comm, std::move(model));
  return std::make_unique<ExplicitBdem>(scene, comm, std::move(model));
}

std::unique_ptr<Method> BdemMethod::rebalanced() {
  Model m = snapshot();
  m.work.assign(m.rows(), 1);  // each particle weighs 1 + the pairs it evaluates
  for (const Pair& p : d_.pairs) ++m.work[static_cast<std::size_t>(p.a)];
  m.owner.clear();  // the partitioner decides afresh, on the graph as it is now
  m.owner_ranks = 0;
  m.placed = false;
  place(m, scene_, d_.comm);
  std::unique_ptr<BdemMethod> next = create_from(scene_, d_.comm, std::move(m));
  next->timers_ = timers_;
  next->carried_ = counters();  // (ratios among them are computed again from the totals)
  return next;
}

}  // namespace percussion::bdem
