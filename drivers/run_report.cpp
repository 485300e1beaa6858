#include "run_report.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "percussion/core/error.hpp"
#include "percussion/core/log.hpp"
#include "percussion/core/memory.hpp"
#include "percussion/io/h5file.hpp"

namespace fs = std::filesystem;

namespace percussion::cli {
namespace {

nlohmann::json number_json(double v, bool integer) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return integer ? nlohmann::json(std::llround(v)) : nlohmann::json(v);
}

// "kinetic 1.2, potential 3.4, ...; bonds_broken 0": the final observables for the log.
std::string observables_text(const ObservableSet& set) {
  std::ostringstream o;
  o << std::setprecision(4);
  for (const Observable& v : set.values()) {
    o << (&v == &set.values().front() ? "" : ", ") << v.name << " ";
    if (v.value.size() == 1) {
      if (v.integer && std::isfinite(v.value[0])) o << std::llround(v.value[0]);
      else o << v.value[0];
    } else {
      for (std::size_t k = 0; k < v.value.size(); ++k) o << (k ? " " : "[") << v.value[k];
      o << "]";
    }
  }
  return o.str();
}

std::string mebibytes(double bytes) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(1) << bytes / (1024.0 * 1024.0);
  return o.str();
}

}  // namespace

nlohmann::json observables_json(const ObservableSet& set) {
  nlohmann::json out = nlohmann::json::object();
  for (const Observable& o : set.values()) {
    if (o.value.size() == 1) {
      out[o.name] = number_json(o.value[0], o.integer);
    } else {
      nlohmann::json list = nlohmann::json::array();
      for (double v : o.value) list.push_back(number_json(v, o.integer));
      out[o.name] = list;
    }
  }
  return out;
}

void replace_non_finite(nlohmann::json& j) {
  if (j.is_number_float()) {
    const double v = j.get<double>();
    if (!std::isfinite(v)) j = number_json(v, false);
  } else if (j.is_structured()) {
    for (auto& item : j) replace_non_finite(item);
  }
}

void report_run(Method& method, const RunRecord& r, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const Scene& scene = *r.scene;
  const std::map<std::string, std::int64_t> sizes = method.sizes();
  const std::string unit = method.work_unit();
  const std::string unit_name = singular(unit);
  const ObservableSet final_obs = method.observables();

  const double wall = MPI_Wtime() - r.wall_start;
  const double loop = MPI_Wtime() - r.loop_start;  // the time loop alone: no generation, bonding, partitioning
  const auto stats = method.timers().reduce(comm, wall);
  const long steps_run = method.steps() - r.start_step;
  const double work_items = static_cast<double>(sizes.at(unit));
  const double rate = loop > 0 ? work_items * static_cast<double>(steps_run) / loop : 0;
  // Owned and ghost items per rank at the end, min / avg / max (LAMMPS's Nlocal / Nghost): the balance of the
  // partition and the size of the halo.
  const double mine[2] = {static_cast<double>(method.local_items()), static_cast<double>(method.local_ghosts())};
  double lowest[2], highest[2], total[2];
  MPI_Allreduce(mine, lowest, 2, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(mine, highest, 2, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(mine, total, 2, MPI_DOUBLE, MPI_SUM, comm);
  const MemoryStats memory = reduce_peak_memory(comm);
  const std::map<std::string, double> counters = method.counters();
  const std::map<std::string, double> headline = method.headline();

  io::on_rank0(comm, [&] {
    nlohmann::json per_rank = nlohmann::json::object();
    for (int k = 0; k < 2; ++k)
      per_rank[k == 0 ? "owned" : "ghosts"] = {{"min", lowest[k]}, {"avg", total[k] / size}, {"max", highest[k]}};
    std::ostringstream o;
    o << "stopped at step " << method.steps() << ", t = " << method.time() << " s (" << r.reason << ")\n";
    o << std::left << std::setw(20) << "phase" << std::right << std::setw(11) << "min s" << std::setw(11) << "avg s"
      << std::setw(11) << "max s" << std::setw(8) << "%" << "\n";
    for (const auto& s : stats)
      o << std::left << std::setw(20) << s.name << std::right << std::fixed << std::setprecision(3) << std::setw(11)
        << s.min << std::setw(11) << s.avg << std::setw(11) << s.max << std::setw(8) << std::setprecision(1)
        << s.percent << "\n";
    o << std::defaultfloat << std::setprecision(4) << "wall " << wall << " s, " << steps_run << " steps, "
      << rate << " " << unit_name << "-steps/s, " << rate / size << " per core\n";
    o << unit << " per rank (min / avg / max): owned " << lowest[0] << " / " << total[0] / size << " / "
      << highest[0] << ", ghosts " << lowest[1] << " / " << total[1] / size << " / " << highest[1] << "\n";
    o << "peak memory per rank (min / avg / max): " << mebibytes(memory.min) << " / " << mebibytes(memory.avg)
      << " / " << mebibytes(memory.max) << " MiB\n";
    o << observables_text(final_obs);
    for (const auto& [name, value] : counters) o << "\n" << name << " " << value;
    if (!r.balance.is_null())
      o << "\nbalance: " << r.balance["rebalances"] << " re-partitions in " << r.balance["checks"]
        << " checks; work per rank max/mean " << r.balance["last"] << " at the last check, " << r.balance["worst"]
        << " at worst";
    if (r.exit_code == kExitRequeue) o << "\ncheckpointed on signal: restart with --restart " << r.args->out;
    if (r.exit_code == kExitNumerical)
      o << "\nnumerical failure: the last good checkpoint is " << (r.last_checkpoint.empty() ? "none" : r.last_checkpoint);
    log::info(o.str());

    nlohmann::json phases = nlohmann::json::object();
    for (const auto& s : stats) phases[s.name] = {{"min", s.min}, {"avg", s.avg}, {"max", s.max}, {"percent", s.percent}};
    nlohmann::json summary = {
        {"scene", scene.path}, {"method", scene.method}, {"integrator", method.variant()}, {"ranks", size},
        {"sizes", sizes}, {"start_step", r.start_step}, {"steps", method.steps()}, {"steps_run", steps_run},
        {"time_step", method.time_step()}, {"simulated_time", method.time()}, {"wall_seconds", wall},
        {"loop_seconds", loop}, {"work_unit", unit}, {unit_name + "_steps_per_second", rate},
        {unit_name + "_steps_per_second_per_core", rate / size}, {unit + "_per_rank", per_rank},
        {"memory_peak_bytes",
         {{"min", memory.min}, {"avg", memory.avg}, {"max", memory.max}, {"per_rank", memory.per_rank}}},
        {"phases", phases}, {"counters", counters}, {"final", observables_json(final_obs)}, {"exit", r.reason},
        {"restarted_from", r.restart_file}, {"last_checkpoint", r.last_checkpoint}};
    if (!r.failure.empty()) summary["failure"] = r.failure;
    if (!r.balance.is_null()) summary["balance"] = r.balance;
    for (const auto& [name, count] : sizes) summary[name] = count;  // "particles", "bonds", ... at the top, too
    for (const auto& [name, value] : headline) summary[name] = value;
    replace_non_finite(summary);
    const fs::path path = fs::path(r.args->out) / "summary.json";
    std::ofstream file(path);
    file << summary.dump(2) << "\n";
    file.close();
    if (!file) throw OutputError(path.string() + ": cannot write (" + std::strerror(errno) + ")");
  });
}

}  // namespace percussion::cli
