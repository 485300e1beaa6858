#pragma once
// The end of `percussion run`: the log's end table (time per phase, throughput, items and peak memory per rank,
// final observables) and summary.json.
#include <mpi.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "cli.hpp"
#include "percussion/core/observable_set.hpp"
#include "percussion/core/scene.hpp"
#include "percussion/methods/method.hpp"

namespace percussion::cli {

struct RunRecord {
  const RunArgs* args = nullptr;
  const Scene* scene = nullptr;
  std::string restart_file, last_checkpoint;
  std::string reason;      // why the run stopped: "end time", "steps", "signal", "numerical failure"
  std::string failure;     // the numerical failure's message, if any
  int exit_code = 0;
  long start_step = 0;
  double wall_start = 0, loop_start = 0;
  nlohmann::json balance;  // the Balancer's summary when the scene balances, else null
};

// Collective: reduces the timers, items and peak memory over ranks; rank 0 logs the table and writes
// summary.json (OutputError, on every rank, if it cannot).
void report_run(Method& method, const RunRecord& record, MPI_Comm comm);

// Observables as JSON by name; a value that is not finite becomes the string "nan", "inf" or "-inf" (JSON has no
// such numbers, and null would read as "missing").
nlohmann::json observables_json(const ObservableSet& set);
// A work unit's singular for "particle-steps/s": "particles" -> "particle", "bodies" -> "body".
inline std::string singular(const std::string& unit) {
  if (unit.size() > 3 && unit.ends_with("ies")) return unit.substr(0, unit.size() - 3) + "y";
  return unit.size() > 1 && unit.back() == 's' ? unit.substr(0, unit.size() - 1) : unit;
}
// Replaces every non-finite number in `j` as observables_json does.
void replace_non_finite(nlohmann::json& j);

}  // namespace percussion::cli
