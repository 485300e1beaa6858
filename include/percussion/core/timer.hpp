#pragma once
// Wall-clock time per named phase (LAMMPS-style breakdown at the end of a run).
#include <mpi.h>
#include <array>
#include <string>
#include <vector>

namespace percussion {

enum class Phase : int { Pairs, Halo, Rebuild, Integrate, Solve, LineSearch, Output, Checkpoint, Setup, Count };
const char* phase_name(Phase p);

class PhaseTimers {
 public:
  void add(Phase p, double seconds) { seconds_[static_cast<int>(p)] += seconds; }
  double seconds(Phase p) const { return seconds_[static_cast<int>(p)]; }

  struct Stat { std::string name; double min, avg, max, percent; };
  // Collective: min/avg/max over ranks of each phase; percent of the average total wall time.
  std::vector<Stat> reduce(MPI_Comm comm, double total_wall) const;

 private:
  std::array<double, static_cast<int>(Phase::Count)> seconds_{};
};

// Adds the time from construction to destruction to one phase.
class ScopedPhase {
 public:
  ScopedPhase(PhaseTimers& t, Phase p) : timers_(t), phase_(p), start_(MPI_Wtime()) {}
  ~ScopedPhase() { timers_.add(phase_, MPI_Wtime() - start_); }
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;

 private:
  PhaseTimers& timers_;
  Phase phase_;
  double start_;
};

}  // namespace percussion
