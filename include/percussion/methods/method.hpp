#pragma once
// What the driver runs: a simulator that owns a distributed state, advances it and saves it.
// The driver (time loop, cadence, checkpoints, signals, summary) never knows which method it runs.
#include <mpi.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "percussion/core/observables.hpp"
#include "percussion/core/scene.hpp"
#include "percussion/core/timer.hpp"

namespace percussion {
namespace io {
class TrajectoryWriter;
}

class Method {
 public:
  virtual ~Method() = default;
  virtual long step() const = 0;
  virtual double time() const = 0;
  virtual double time_step() const = 0;
  // The first step at or after time t, and the step the run's time origin is at (frames fall every frame interval
  // from it): 0 unless the run continues a checkpoint at another step length.
  virtual long step_at(double t) const = 0;
  virtual long step_origin() const { return 0; }
  virtual std::int64_t global_particles() const = 0;
  virtual std::int64_t global_bonds() const = 0;
  virtual std::int64_t local_particles() const = 0;
  virtual std::int64_t local_ghosts() const { return 0; }     // copies of other ranks' items held here
  virtual void advance() = 0;                                  // one time step, collective
  virtual Observables observables() = 0;                       // collective, same on every rank
  virtual void write_frame(io::TrajectoryWriter& writer) = 0;  // collective
  virtual void write_checkpoint(const std::string& path) = 0;  // collective
  virtual PhaseTimers& timers() = 0;
  // Method-specific totals for the summary (solver iterations, ...); empty by default.
  virtual std::map<std::string, double> counters() const { return {}; }
};

// Build the method a scene names, from the scene or (restart_file non-empty) from a checkpoint.
std::unique_ptr<Method> create_method(const Scene& scene, MPI_Comm comm, const std::string& restart_file);

}  // namespace percussion
