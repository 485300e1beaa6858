// `percussion run`: the one time loop every method shares — output cadence, checkpoints, signals, progress,
// and the end-of-run summary.
#include <csignal>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <iomanip>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "balance.hpp"
#include "cli.hpp"
#include "percussion/core/error.hpp"
#include "percussion/core/log.hpp"
#include "percussion/core/scene.hpp"
#include "percussion/io/checkpoint_files.hpp"
#include "percussion/io/trajectory.hpp"
#include "percussion/methods/registry.hpp"

namespace fs = std::filesystem;

namespace percussion::cli {
namespace {

volatile std::sig_atomic_t g_signal = 0;
extern "C" void on_signal(int s) { g_signal = s; }

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGUSR1, &sa, nullptr);
}

// Rank 0 reads the file; every rank parses the same text, so every rank reaches the same verdict.
Scene read_scene(const std::string& path, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string text;
  long size = -1;
  if (rank == 0) {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::ostringstream s;
      s << in.rdbuf();
      text = s.str();
      size = static_cast<long>(text.size());
    }
  }
  MPI_Bcast(&size, 1, MPI_LONG, 0, comm);
  if (size < 0) throw InputError(path + ": cannot read file");
  text.resize(static_cast<std::size_t>(size));
  MPI_Bcast(text.data(), static_cast<int>(size), MPI_CHAR, 0, comm);
  return parse_scene_text(text, path);
}

// Fresh runs need an empty (or --overwrite) output directory; restarts continue in theirs.
void check_output_dir(const RunArgs& args, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int bad = 0;
  if (rank == 0 && args.restart.empty() && !args.overwrite && fs::exists(args.out) &&
      !(fs::is_directory(args.out) && fs::is_empty(args.out)))
    bad = 1;
  if (rank == 0 && fs::exists(args.out) && !fs::is_directory(args.out)) bad = 2;
  MPI_Bcast(&bad, 1, MPI_INT, 0, comm);
  if (bad == 1)
    throw InputError(args.out + ": output directory exists and is not empty; use --overwrite to replace it, or --out");
  if (bad == 2) throw InputError(args.out + ": exists and is not a directory");
}

void prepare_output_dir(const RunArgs& args, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    fs::create_directories(args.out);
    if (args.restart.empty())
      for (const char* name : {"trajectory.h5", "trajectory.xdmf", "summary.json", "log.txt"})
        fs::remove(fs::path(args.out) / name);
    if (args.restart.empty()) fs::remove_all(fs::path(args.out) / "checkpoints");
  }
  MPI_Barrier(comm);
}

std::string format_seconds(double s) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(1);
  if (s < 120) o << s << " s";
  else if (s < 7200) o << s / 60 << " min";
  else o << s / 3600 << " h";
  return o.str();
}

nlohmann::json observables_json(const ObservableSet& set) {
  nlohmann::json out = nlohmann::json::object();
  for (const Observable& o : set.values()) {
    if (o.value.size() == 1) {
      out[o.name] = o.integer ? nlohmann::json(std::llround(o.value[0])) : nlohmann::json(o.value[0]);
    } else {
      out[o.name] = o.value;
    }
  }
  return out;
}

// "kinetic 1.2, potential 3.4, ...; bonds_broken 0": the final observables for the log.
std::string observables_text(const ObservableSet& set) {
  std::ostringstream o;
  o << std::setprecision(4);
  for (const Observable& v : set.values()) {
    o << (&v == &set.values().front() ? "" : ", ") << v.name << " ";
    if (v.value.size() == 1) {
      if (v.integer) o << std::llround(v.value[0]);
      else o << v.value[0];
    } else {
      for (std::size_t k = 0; k < v.value.size(); ++k) o << (k ? " " : "[") << v.value[k];
      o << "]";
    }
  }
  return o.str();
}

// Times the run must stop at, every `interval` from time 0 (the k-th at k x interval, not accumulated, so a restart
// meets the same times as an uninterrupted run). An interval of 0 is off.
class Schedule {
 public:
  explicit Schedule(double interval) : interval_(interval) {}
  bool on() const { return interval_ > 0; }
  double next() const { return on() ? static_cast<double>(k_) * interval_ : std::numeric_limits<double>::infinity(); }
  // Past every time the method has reached; returns whether any was.
  bool pass(const Method& m) {
    bool any = false;
    while (on() && m.reached(next())) {
      ++k_;
      any = true;
    }
    return any;
  }

 private:
  double interval_;
  long k_ = 0;
};

}  // namespace

int run(const RunArgs& args, int argc, char** argv) {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const double wall_start = MPI_Wtime();

  // Validation first: nothing is written until the scene, the restart file and the output dir pass.
  const Scene scene = read_scene(args.scene, comm);
  validate_scene(scene);
  std::string restart_file;
  if (!args.restart.empty()) restart_file = io::CheckpointDirectory::resolve(args.restart);
  check_output_dir(args, comm);
  std::unique_ptr<Method> method = create_method(scene, comm, restart_file);
  const long start_step = method->steps();
  const double start_time = method->time();
  const std::map<std::string, std::int64_t> sizes = method->sizes();
  const std::string unit = method->work_unit();
  const double work_items = static_cast<double>(sizes.at(unit));
  // The unit's singular for "particle-steps/s".
  const std::string unit_name = unit.size() > 1 && unit.back() == 's' ? unit.substr(0, unit.size() - 1) : unit;
  auto finished = [&]() { return method->reached(scene.time.end) || (args.steps && method->steps() >= *args.steps); };

  prepare_output_dir(args, comm);
  log::set_file((fs::path(args.out) / "log.txt").string());
  install_signal_handlers();
  {
    std::ostringstream o;
    o << "percussion: " << scene.path << " (" << scene.method;
    if (!method->variant().empty()) o << ", " << method->variant();
    o << ") on " << size << (size == 1 ? " rank" : " ranks") << "\n  ";
    o << sizes.at(unit) << " " << unit;  // what the throughput counts first, then the rest
    for (const auto& [name, count] : sizes)
      if (name != unit) o << ", " << count << " " << name;
    if (method->time_step() > 0) o << ", time step " << method->time_step() << " s";
    o << ", t = " << start_time << " -> " << scene.time.end << " s";
    if (args.steps) o << " (at most to step " << *args.steps << ")";
    o << ", a frame every " << scene.output.frame_interval << " s\n  output: " << args.out;
    if (!restart_file.empty()) o << "\n  restarted from " << restart_file << " at step " << start_step;
    log::info(o.str());
  }

  io::TrajectoryWriter writer(comm, args.out, sizes.count("particles") ? sizes.at("particles") : 0,
                              restart_file.empty() ? -1 : start_step);
  io::CheckpointDirectory checkpoints((fs::path(args.out) / "checkpoints").string(), scene.checkpoint.keep);
  // Frames and checkpoints fall at the first state that reaches each of their times. A restart continues after the
  // times its state has reached: their frames were written before the checkpoint it continues.
  Schedule frames(scene.output.frame_interval), checkpoint_times(scene.checkpoint.every_time);
  frames.pass(*method);
  checkpoint_times.pass(*method);
  long last_frame = restart_file.empty() ? -1 : start_step;
  long last_checkpoint = restart_file.empty() ? -1 : start_step;
  // Each frame carries what it cost since the previous one (io::FrameEffort): wall time, and the Newton and Krylov
  // iterations of the methods that count them.
  double effort_wall = MPI_Wtime();
  std::map<std::string, double> effort_counts = method->counters();
  auto write_frame = [&]() {
    const double now = MPI_Wtime();
    const std::map<std::string, double> counts = method->counters();
    auto since = [&](const char* key) -> std::int64_t {
      const auto it = counts.find(key);
      const auto before = effort_counts.find(key);
      if (it == counts.end() || before == effort_counts.end()) return -1;
      return std::llround(it->second - before->second);
    };
    io::FrameEffort effort;
    effort.wall_seconds = now - effort_wall;
    effort.newton_iterations = since("newton_iterations");
    effort.krylov_iterations = effort.newton_iterations < 0 ? -1 : since("krylov_iterations");
    writer.set_effort(effort);
    method->write_frame(writer);
    last_frame = method->steps();
    effort_wall = now;
    effort_counts = counts;
  };
  if (restart_file.empty()) write_frame();
  auto checkpoint = [&]() {
    const long s = method->steps();
    method->write_checkpoint(checkpoints.temp_path(s));
    checkpoints.commit(comm, s);
    last_checkpoint = s;
  };

  Balancer balancer(comm, scene.balance);
  std::string reason = "end time";
  int exit_code = kExitDone;
  double last_checkpoint_wall = MPI_Wtime(), last_progress = MPI_Wtime();
  const double loop_start = MPI_Wtime();
  try {
    while (!finished()) {
      method->advance(std::min({frames.next(), checkpoint_times.next(), scene.time.end}));
      const long s = method->steps();
      if (frames.pass(*method)) write_frame();
      balancer.after_step(method);
      // Collective decisions: a signal seen by any rank, or rank 0's wall clock, stops or checkpoints everyone.
      int local[2] = {g_signal != 0 ? 1 : 0, 0};
      if (rank == 0 && scene.checkpoint.every_minutes > 0 &&
          MPI_Wtime() - last_checkpoint_wall >= 60.0 * scene.checkpoint.every_minutes)
        local[1] = 1;
      int decide[2];
      MPI_Allreduce(local, decide, 2, MPI_INT, MPI_MAX, comm);
      if (decide[0]) {
        reason = "signal";
        exit_code = kExitRequeue;
        break;
      }
      const bool by_steps = scene.checkpoint.every_steps > 0 && s % scene.checkpoint.every_steps == 0;
      if (checkpoint_times.pass(*method) || by_steps || decide[1]) {
        checkpoint();
        last_checkpoint_wall = MPI_Wtime();
      }
      const double now = MPI_Wtime();
      if (rank == 0 && now - last_progress >= 2.0) {
        last_progress = now;
        const double t = method->time(), done = t - start_time, elapsed = now - loop_start;
        const double steps_done = static_cast<double>(s - start_step);
        std::ostringstream o;
        o << "step " << s << "  t = " << std::setprecision(5) << t << " / " << scene.time.end << " s  wall "
          << format_seconds(now - wall_start) << "  ETA "
          << format_seconds(done > 0 ? elapsed / done * std::max(0.0, scene.time.end - t) : 0) << "  "
          << std::setprecision(3) << (elapsed > 0 ? work_items * steps_done / elapsed : 0) << " " << unit_name
          << "-steps/s";
        log::info(o.str());
      }
    }
  } catch (const NumericalError& e) {
    log::error(e.what());
    return kExitNumerical;
  }
  if (reason == "end time" && !method->reached(scene.time.end)) reason = "steps";

  // The end of the scene gets a frame; a run stopped early leaves its state in the final checkpoint, so a
  // restarted trajectory has exactly the frames of an uninterrupted one.
  if (reason == "end time" && last_frame != method->steps()) write_frame();
  writer.close();
  if (last_checkpoint != method->steps()) checkpoint();
  const ObservableSet final_obs = method->observables();

  // End-of-run report: time per phase over ranks, throughput.
  const double wall = MPI_Wtime() - wall_start;
  const double loop = MPI_Wtime() - loop_start;  // the time loop alone: no generation, bonding, partitioning
  const auto stats = method->timers().reduce(comm, wall);
  const long steps_run = method->steps() - start_step;
  const double rate = loop > 0 ? work_items * static_cast<double>(steps_run) / loop : 0;
  // Owned and ghost items per rank at the end, min / avg / max (LAMMPS's Nlocal / Nghost): the balance of the
  // partition and the size of the halo.
  const double mine[2] = {static_cast<double>(method->local_items()), static_cast<double>(method->local_ghosts())};
  double lowest[2], highest[2], total[2];
  MPI_Allreduce(mine, lowest, 2, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(mine, highest, 2, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(mine, total, 2, MPI_DOUBLE, MPI_SUM, comm);
  nlohmann::json per_rank = nlohmann::json::object();
  for (int k = 0; k < 2; ++k)
    per_rank[k == 0 ? "owned" : "ghosts"] = {{"min", lowest[k]}, {"avg", total[k] / size}, {"max", highest[k]}};
  if (rank == 0) {
    std::ostringstream o;
    o << "stopped at step " << method->steps() << ", t = " << method->time() << " s (" << reason << ")\n";
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
    o << observables_text(final_obs);
    for (const auto& [name, value] : method->counters()) o << "\n" << name << " " << value;
    if (scene.balance.every_steps > 0)
      o << "\nbalance: " << balancer.summary()["rebalances"] << " re-partitions in " << balancer.summary()["checks"]
        << " checks, work max/mean at the last " << balancer.summary()["last"];
    if (exit_code == kExitRequeue) o << "\ncheckpointed on signal: restart with --restart " << args.out;
    log::info(o.str());

    nlohmann::json phases = nlohmann::json::object();
    for (const auto& s : stats) phases[s.name] = {{"min", s.min}, {"avg", s.avg}, {"max", s.max}, {"percent", s.percent}};
    nlohmann::json summary = {
        {"scene", scene.path}, {"method", scene.method}, {"integrator", method->variant()}, {"ranks", size},
        {"sizes", sizes}, {"start_step", start_step}, {"steps", method->steps()}, {"steps_run", steps_run},
        {"time_step", method->time_step()}, {"simulated_time", method->time()}, {"wall_seconds", wall},
        {"loop_seconds", loop}, {"work_unit", unit}, {unit_name + "_steps_per_second", rate},
        {unit_name + "_steps_per_second_per_core", rate / size}, {unit + "_per_rank", per_rank},
        {"phases", phases}, {"counters", method->counters()}, {"final", observables_json(final_obs)}, {"exit", reason},
        {"restarted_from", restart_file}, {"last_checkpoint", checkpoints.final_path(method->steps())},
        {"balance", balancer.summary()}};
    for (const auto& [name, count] : sizes) summary[name] = count;  // "particles", "bonds", ... at the top, too
    std::ofstream(fs::path(args.out) / "summary.json") << summary.dump(2) << "\n";
  }
  (void)argc;
  (void)argv;
  return exit_code;
}

}  // namespace percussion::cli
