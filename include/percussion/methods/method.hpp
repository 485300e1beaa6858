#pragma once
// What the driver runs: a simulator that owns a distributed state, advances it and saves it.
// The driver (time loop, frames and checkpoints by simulated time, signals, summary) never knows which method it
// runs; methods are found by name in the registry (methods/registry.hpp).
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "percussion/core/observable_set.hpp"
#include "percussion/core/timer.hpp"
#include "percussion/io/trajectory.hpp"

namespace percussion {

class Method {
 public:
  virtual ~Method() = default;
  // What variant of the method runs ("explicit", "implicit", ...), for the log and summary.json.
  virtual std::string variant() const { return {}; }
  virtual double time() const = 0;
  // Steps (or events) taken since time 0, carried across restarts: progress and checkpoint.every_steps count them.
  virtual long steps() const = 0;
  // True once the method's time has reached t (a fixed-step method: the first step at or after t, within its
  // round-off). Frames, checkpoints and the end of the run fall at the first state that reaches their time.
  virtual bool reached(double t) const = 0;
  // Collective: one step, or up to the next event; an event-driven method stops at `limit` (the next time the driver
  // needs a state at: a frame, a checkpoint or the end), a fixed-step method takes its step.
  virtual void advance(double limit) = 0;
  // The fixed time step, or 0 when steps vary (for the log).
  virtual double time_step() const { return 0; }
  // Global counts of what the method holds, by name ("particles", "bonds", "bodies", "vertices", "elements", ...);
  // the same on every rank.
  virtual std::map<std::string, std::int64_t> sizes() const = 0;
  // What a step's work scales with, for throughput ("particle-steps/s"): a key of sizes().
  virtual std::string work_unit() const = 0;
  // This rank's owned and ghost items (the balance of the partition and the size of its halo).
  virtual std::int64_t local_items() const = 0;
  virtual std::int64_t local_ghosts() const { return 0; }
  // This rank's share of the work of a step, in the method's own unit (BDEM: owned particles plus the pairs they
  // evaluate); what load balancing evens out.
  virtual double local_work() const { return static_cast<double>(local_items()); }
  virtual ObservableSet observables() = 0;                     // collective, same on every rank
  // The method's bound on how its observables can change between two of the driver's checks (before each frame and
  // checkpoint): a message naming the quantity that went beyond it ("kinetic energy grew from 1 J to 5e+09 J ..."),
  // or empty. The driver stops the run with exit 3 on it, as on any observable that is not finite. Same verdict on
  // every rank (it sees only the observables).
  virtual std::string implausible_change(const ObservableSet& /*before*/, const ObservableSet& /*now*/) const {
    return {};
  }
  // What every frame holds: by default the particles of sizes()["particles"].
  virtual io::TrajectoryLayout trajectory_layout() const {
    io::TrajectoryLayout layout;
    const auto s = sizes();
    layout.particles = s.count("particles") ? s.at("particles") : 0;
    return layout;
  }
  virtual void write_frame(io::TrajectoryWriter& writer) = 0;  // collective
  // Collective, once at the end of a run that reached its end: files of results beside the trajectory
  // (a rigid impact resolution's resolution.json). Nothing by default.
  virtual void write_results(const std::string& /*out_dir*/) {}
  virtual void write_checkpoint(const std::string& path) = 0;  // collective
  // Collective. The same state with its items re-partitioned over the ranks (as a checkpoint and a restart on the
  // same ranks would carry it, timers included), or nullptr for a method whose items cannot move.
  virtual std::unique_ptr<Method> rebalanced() { return nullptr; }
  virtual PhaseTimers& timers() = 0;
  // Totals for the summary (solver iterations, rebuilds, ...); empty by default. Frames record the growth of
  // "newton_iterations" and "krylov_iterations" since the previous frame, where a method counts them.
  virtual std::map<std::string, double> counters() const { return {}; }
  // Results of the whole run that the summary shows at its top level (e.g. IPC's min_distance); empty by default.
  virtual std::map<std::string, double> headline() const { return {}; }
};

}  // namespace percussion
