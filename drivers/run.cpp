// `percussion run`: the one time loop every method shares — output cadence, checkpoints, signals, progress,
// and the end-of-run summary.
#include <csignal>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli.hpp"
#include "percussion/core/error.hpp"
#include "percussion/core/log.hpp"
#include "percussion/core/scene.hpp"
#include "percussion/io/checkpoint_files.hpp"
#include "percussion/io/trajectory.hpp"
#include "percussion/methods/method.hpp"

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

nlohmann::json observables_json(const Observables& o) {
  return {{"kinetic", o.kinetic}, {"potential", o.potential}, {"total", o.total}, {"momentum", o.momentum},
          {"angular_momentum", o.angular_momentum}, {"bonds_broken", o.bonds_broken}, {"contacts", o.contacts}};
}

}  // namespace

int run(const RunArgs& args, int argc, char** argv) {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const double wall_start = MPI_Wtime();

  // Validation first: nothing is written until the scene, the restart file and the output dir pass.
  const Scene scene = read_scene(args.scene, comm);
  std::string restart_file;
  if (!args.restart.empty()) restart_file = io::CheckpointDirectory::resolve(args.restart);
  check_output_dir(args, comm);
  std::unique_ptr<Method> method = create_method(scene, comm, restart_file);
  const double dt = method->time_step();
  const long end_step = method->step_at(scene.time.end);
  const long stop_step = args.steps ? std::min(*args.steps, end_step) : end_step;
  const long frame_steps = std::max(1L, std::lround(scene.output.frame_interval / dt));
  const long start_step = method->step();

  prepare_output_dir(args, comm);
  log::set_file((fs::path(args.out) / "log.txt").string());
  install_signal_handlers();
  {
    std::ostringstream o;
    o << "percussion: " << scene.path << " (" << scene.method << ", " << scene.integrator << ") on " << size
      << (size == 1 ? " rank" : " ranks") << "\n  " << method->global_particles() << " particles, "
      << method->global_bonds() << " bonds, time step " << dt << " s, steps " << start_step << " -> " << stop_step
      << " (end " << end_step << "), frame every " << frame_steps << " steps\n  output: " << args.out;
    if (!restart_file.empty()) o << "\n  restarted from " << restart_file << " at step " << start_step;
    log::info(o.str());
  }

  io::TrajectoryWriter writer(comm, args.out, method->global_particles(), restart_file.empty() ? -1 : start_step);
  io::CheckpointDirectory checkpoints((fs::path(args.out) / "checkpoints").string(), scene.checkpoint.keep);
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
    last_frame = method->step();
    effort_wall = now;
    effort_counts = counts;
  };
  if (restart_file.empty()) write_frame();
  auto checkpoint = [&]() {
    const long s = method->step();
    method->write_checkpoint(checkpoints.temp_path(s));
    checkpoints.commit(comm, s);
    last_checkpoint = s;
  };

  std::string reason = args.steps && *args.steps < end_step ? "steps" : "end time";
  int exit_code = kExitDone;
  double last_checkpoint_wall = MPI_Wtime(), last_progress = MPI_Wtime();
  const double loop_start = MPI_Wtime();
  try {
    while (method->step() < stop_step) {
      method->advance();
      const long s = method->step();
      if ((s - method->step_origin()) % frame_steps == 0) write_frame();
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
      if ((scene.checkpoint.every_steps > 0 && s % scene.checkpoint.every_steps == 0) || decide[1]) {
        checkpoint();
        last_checkpoint_wall = MPI_Wtime();
      }
      const double now = MPI_Wtime();
      if (rank == 0 && now - last_progress >= 2.0) {
        last_progress = now;
        const double done = static_cast<double>(s - start_step), todo = static_cast<double>(stop_step - s);
        const double elapsed = now - loop_start;
        std::ostringstream o;
        o << "step " << s << "/" << stop_step << "  t = " << std::setprecision(5) << method->time() << " s  wall "
          << format_seconds(now - wall_start) << "  ETA " << format_seconds(done > 0 ? elapsed / done * todo : 0)
          << "  " << std::setprecision(3) << (done > 0 ? method->global_particles() * done / elapsed : 0)
          << " particle-steps/s";
        log::info(o.str());
      }
    }
  } catch (const NumericalError& e) {
    log::error(e.what());
    return kExitNumerical;
  }

  // The end of the scene gets a frame; a run stopped early leaves its state in the final checkpoint, so a
  // restarted trajectory has exactly the frames of an uninterrupted one.
  if (reason == "end time" && last_frame != method->step()) write_frame();
  writer.close();
  if (last_checkpoint != method->step()) checkpoint();
  const Observables final_obs = method->observables();

  // End-of-run report: time per phase over ranks, throughput.
  const double wall = MPI_Wtime() - wall_start;
  const double loop = MPI_Wtime() - loop_start;  // the time loop alone: no generation, bonding, partitioning
  const auto stats = method->timers().reduce(comm, wall);
  const long steps_run = method->step() - start_step;
  const double rate = loop > 0 ? static_cast<double>(method->global_particles()) * steps_run / loop : 0;
  // Owned and ghost particles per rank at the end, min / avg / max (LAMMPS's Nlocal / Nghost): the balance of the
  // partition and the size of the halo.
  const double mine[2] = {static_cast<double>(method->local_particles()), static_cast<double>(method->local_ghosts())};
  double lowest[2], highest[2], total[2];
  MPI_Allreduce(mine, lowest, 2, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(mine, highest, 2, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(mine, total, 2, MPI_DOUBLE, MPI_SUM, comm);
  nlohmann::json per_rank = nlohmann::json::object();
  for (int k = 0; k < 2; ++k)
    per_rank[k == 0 ? "owned" : "ghosts"] = {{"min", lowest[k]}, {"avg", total[k] / size}, {"max", highest[k]}};
  if (rank == 0) {
    std::ostringstream o;
    o << "stopped at step " << method->step() << ", t = " << method->time() << " s (" << reason << ")\n";
    o << std::left << std::setw(20) << "phase" << std::right << std::setw(11) << "min s" << std::setw(11) << "avg s"
      << std::setw(11) << "max s" << std::setw(8) << "%" << "\n";
    for (const auto& s : stats)
      o << std::left << std::setw(20) << s.name << std::right << std::fixed << std::setprecision(3) << std::setw(11)
        << s.min << std::setw(11) << s.avg << std::setw(11) << s.max << std::setw(8) << std::setprecision(1)
        << s.percent << "\n";
    o << std::defaultfloat << std::setprecision(4) << "wall " << wall << " s, " << steps_run << " steps, "
      << rate << " particle-steps/s, " << rate / size << " per core\n";
    o << "particles per rank (min / avg / max): owned " << lowest[0] << " / " << total[0] / size << " / " << highest[0]
      << ", ghosts " << lowest[1] << " / " << total[1] / size << " / " << highest[1] << "\n";
    o << "energy: kinetic " << final_obs.kinetic << ", potential " << final_obs.potential << ", total "
      << final_obs.total << "; bonds broken " << final_obs.bonds_broken << ", contacts " << final_obs.contacts;
    for (const auto& [name, value] : method->counters()) o << "\n" << name << " " << value;
    if (exit_code == kExitRequeue) o << "\ncheckpointed on signal: restart with --restart " << args.out;
    log::info(o.str());

    nlohmann::json phases = nlohmann::json::object();
    for (const auto& s : stats) phases[s.name] = {{"min", s.min}, {"avg", s.avg}, {"max", s.max}, {"percent", s.percent}};
    nlohmann::json summary = {
        {"scene", scene.path}, {"method", scene.method}, {"integrator", scene.integrator}, {"ranks", size},
        {"particles", method->global_particles()}, {"bonds", method->global_bonds()}, {"start_step", start_step},
        {"steps", method->step()}, {"steps_run", steps_run}, {"time_step", dt}, {"simulated_time", method->time()},
        {"wall_seconds", wall}, {"loop_seconds", loop}, {"particle_steps_per_second", rate}, {"particle_steps_per_second_per_core", rate / size},
        {"particles_per_rank", per_rank},
        {"phases", phases}, {"counters", method->counters()}, {"final", observables_json(final_obs)}, {"exit", reason},
        {"restarted_from", restart_file}, {"last_checkpoint", checkpoints.final_path(method->step())}};
    std::ofstream(fs::path(args.out) / "summary.json") << summary.dump(2) << "\n";
  }
  (void)argc;
  (void)argv;
  return exit_code;
}

}  // namespace percussion::cli
