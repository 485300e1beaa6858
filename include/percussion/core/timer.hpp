#pragma once
// Wall-clock time per named phase (LAMMPS-style breakdown at the end of a run). The common phases have ids; a
// method adds its own by name (the same names in the same order on every rank) and times them by the returned id.
#include <mpi.h>

#include <string>
#include <vector>

namespace percussion {

enum class Phase : int { Pairs, Halo, Rebuild, Integrate, Solve, LineSearch, Output, Checkpoint, Setup, Count };
const char* phase_name(Phase p);

class PhaseTimers {
 public:
  PhaseTimers();
  // The id of phase `name`, added at the end of the table if new.
  int phase(const std::string& name);
  void add(int id, double seconds) { seconds_[static_cast<std::size_t>(id)] += seconds; }
  void add(Phase p, double seconds) { add(static_cast<int>(p), seconds); }
  double seconds(int id) const { return seconds_[static_cast<std::size_t>(id)]; }
  double seconds(Phase p) const { return seconds(static_cast<int>(p)); }

  struct Stat { std::string name; double min, avg, max, percent; };
  // Collective: min/avg/max over ranks of each phase; percent of the average total wall time.
  std::vector<Stat> reduce(MPI_Comm comm, double total_wall) const;

 private:
  std::vector<std::string> names_;
  std::vector<double> seconds_;
};

// Adds the time from construction to destruction to one phase.
class ScopedPhase {
 public:
  ScopedPhase(PhaseTimers& t, Phase p) : ScopedPhase(t, static_cast<int>(p)) {}
  ScopedPhase(PhaseTimers& t, int id) : timers_(t), id_(id), start_(MPI_Wtime()) {}
  ~ScopedPhase() { timers_.add(id_, MPI_Wtime() - start_); }
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;

 private:
  PhaseTimers& timers_;
  int id_;
  double start_;
};

}  // namespace percussion
