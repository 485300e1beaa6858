// `percussion run`: the one time loop every method shares — output cadence, checkpoints, signals, progress,
// and the end-of-run summary.
#include <cerrno>
#include <climits>
#include <cstring>
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
#include "percussion/io/h5file.hpp"
#include "percussion/io/output_lock.hpp"
#include "percussion/io/trajectory.hpp"
#include "percussion/methods/registry.hpp"
#include "run_report.hpp"
#include "stop_signals.hpp"

namespace fs = std::filesystem;

namespace percussion::cli {
namespace {

// Rank 0 reads the file (or every rank throws its reason); every rank parses the same text, so every rank reaches
// the same verdict.
Scene read_scene(const std::string& path, MPI_Comm comm) {
  std::string text;
  io::on_rank0(comm, [&] { text = read_scene_text(path); });
  long size = static_cast<long>(text.size());
  MPI_Bcast(&size, 1, MPI_LONG, 0, comm);
  text.resize(static_cast<std::size_t>(size));
  MPI_Bcast(text.data(), static_cast<int>(size), MPI_CHAR, 0, comm);
  return parse_scene_text(text, path);
}

// Fresh runs need an empty (or --overwrite) output directory; restarts continue in theirs.
void check_output_dir(const RunArgs& args, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int bad = 0;
  std::error_code ec;
  // Holds anything but this run's lock?
  auto occupied = [&] {
    for (const fs::directory_entry& entry : fs::directory_iterator(args.out, ec))
      if (entry.path().filename() != io::OutputLock::kFileName) return true;
    return false;
  };
  if (rank == 0 && args.restart.empty() && !args.overwrite && fs::is_directory(args.out, ec) && occupied()) bad = 1;
  if (rank == 0 && fs::exists(args.out, ec) && !fs::is_directory(args.out, ec)) bad = 2;
  MPI_Bcast(&bad, 1, MPI_INT, 0, comm);
  if (bad == 1)
    throw InputError(args.out + ": output directory exists and is not empty; use --overwrite to replace it, or --out");
  if (bad == 2) throw InputError(args.out + ": exists and is not a directory");
}

// (The output lock made the directory.) A file-system error here is an OutputError naming the path.
void prepare_output_dir(const RunArgs& args, MPI_Comm comm) {
  io::on_rank0(comm, [&] {
    if (args.restart.empty())
      for (const char* name : {"trajectory.h5", "trajectory.xdmf", "summary.json", "log.txt", "resolution.json"})
        fs::remove(fs::path(args.out) / name);
    if (args.restart.empty()) fs::remove_all(fs::path(args.out) / "checkpoints");
    // Can the run write here at all? Found now, not at the first frame.
    const fs::path probe = fs::path(args.out) / ".percussion.probe";
    std::ofstream file(probe);
    if (!file) throw OutputError(args.out + ": cannot write in the output directory (" + std::strerror(errno) + ")");
    file.close();
    fs::remove(probe);
  });
}

// Runs `action` on every rank; a failure on any rank becomes the same exception on every rank (an OutputError
// from the lowest failing rank for file-system faults), so no rank is left waiting in a collective.
// `cleanup` runs on rank 0 first when anything failed. (A failed write into a file that several ranks share ends
// the program with exit 4 where it happens instead: unwinding would close the file in mismatched collectives.)
template <class Action, class Cleanup>
void agree(MPI_Comm comm, Action&& action, Cleanup&& cleanup) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int status = 0;  // 0 ok, 1 output, 2 numerical, 3 other
  std::string message;
  try {
    action();
  } catch (const OutputError& e) {
    status = 1, message = e.what();
  } catch (const fs::filesystem_error& e) {
    status = 1, message = e.path1().string() + ": " + e.code().message();
  } catch (const NumericalError& e) {
    status = 2, message = e.what();
  } catch (const std::exception& e) {
    status = 3, message = e.what();
  }
  int worst[2] = {status, status ? rank : INT_MAX}, agreed[2];
  MPI_Allreduce(&worst[0], &agreed[0], 1, MPI_INT, MPI_MAX, comm);
  if (agreed[0] == 0) return;
  if (status != agreed[0]) worst[1] = INT_MAX;
  MPI_Allreduce(&worst[1], &agreed[1], 1, MPI_INT, MPI_MIN, comm);
  int length = static_cast<int>(message.size());
  MPI_Bcast(&length, 1, MPI_INT, agreed[1], comm);
  message.resize(static_cast<std::size_t>(length));
  MPI_Bcast(message.data(), length, MPI_CHAR, agreed[1], comm);
  if (rank == 0) cleanup();
  if (agreed[0] == 1) throw OutputError(message, true);
  if (agreed[0] == 2) throw NumericalError(message);
  throw std::runtime_error(message);
}

std::string format_seconds(double s) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(1);
  if (s < 120) o << s << " s";
  else if (s < 7200) o << s / 60 << " min";
  else o << s / 3600 << " h";
  return o.str();
}

// What users see must be numbers: any observable that is not finite, or one that moved further than the method
// says it can between two checks, stops the run (NumericalError, the same verdict on every rank).
void check_observables(const Method& method, const ObservableSet& before, const ObservableSet& now) {
  for (const Observable& o : now.values())
    for (double v : o.value)
      if (!std::isfinite(v)) {
        std::ostringstream text;
        text << "step " << method.steps() << ", t = " << method.time() << " s: observable '" << o.name
             << "' is not finite (" << v << ")";
        throw NumericalError(text.str());
      }
  const std::string why = method.implausible_change(before, now);
  if (!why.empty())
    throw NumericalError("step " + std::to_string(method.steps()) + ": " + why + "; the run is diverging");
}

// Times the run must stop at, every `interval` from time 0 (the k-th at k x interval, not accumulated, so a restart
// meets the same times as an uninterrupted run). An interval of 0 is off.
class Schedule {
 public:
  explicit Schedule(double interval) : interval_(interval) {}
  bool on() const { return interval_ > 0; }
  double next() const { return on() ? static_cast<double>(k_) * interval_ : std::numeric_limits<double>::infinity(); }
  // Past every time the method has reached; returns whether any was.
  // An interval far below the step passes many multiples in one step: start from the method's time, not from the
  // last multiple (the scene check bounds the count of multiples to what a double counts exactly).
  bool pass(const Method& m) {
    if (!on() || !m.reached(next())) return false;
    const double below = std::floor(m.time() / interval_) - 1;
    if (below > static_cast<double>(k_)) k_ = static_cast<long>(below);
    while (m.reached(next())) ++k_;
    return true;
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
  // From the start: a signal during a long set-up still ends in a checkpoint after the first step.
  install_stop_signals();

  // Validation first: nothing is written until the scene, the restart file and the output dir pass.
  Scene scene = read_scene(args.scene, comm);
  scene.allow_scene_change = args.allow_scene_change;
  validate_scene(scene);
  std::string restart_file;
  if (!args.restart.empty()) restart_file = io::CheckpointDirectory::resolve(args.restart);
  check_output_dir(args, comm);
  // One run per output directory, from here to the end (released on every exit that unwinds).
  const io::OutputLock lock(comm, args.out);
  std::unique_ptr<Method> method = create_method(scene, comm, restart_file);
  const long start_step = method->steps();
  const double start_time = method->time();
  const std::map<std::string, std::int64_t> sizes = method->sizes();
  const std::string unit = method->work_unit();
  const double work_items = static_cast<double>(sizes.at(unit));
  // The unit's singular for "particle-steps/s".
  const std::string unit_name = singular(unit);
  auto finished = [&]() { return method->reached(scene.time.end) || (args.steps && method->steps() >= *args.steps); };

  prepare_output_dir(args, comm);
  log::set_file((fs::path(args.out) / "log.txt").string());
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
    if (scene.output.frame_interval > 0) o << ", a frame every " << scene.output.frame_interval << " s";
    o << "\n  output: " << args.out;
    if (!restart_file.empty()) o << "\n  restarted from " << restart_file << " at step " << start_step;
    log::info(o.str());
  }

  io::TrajectoryWriter writer(comm, args.out, method->trajectory_layout(), restart_file.empty() ? -1 : start_step);
  io::CheckpointDirectory checkpoints((fs::path(args.out) / "checkpoints").string(), scene.checkpoint.keep);
  // Frames and checkpoints fall at the first state that reaches each of their times. A restart continues after the
  // times its state has reached: their frames were written before the checkpoint it continues.
  Schedule frames(scene.output.frame_interval), checkpoint_times(scene.checkpoint.every_time);
  frames.pass(*method);
  checkpoint_times.pass(*method);
  long last_frame = restart_file.empty() ? -1 : start_step;
  long last_checkpoint = restart_file.empty() ? -1 : start_step;
  std::string last_checkpoint_path = restart_file;
  // Observables are checked before every frame and checkpoint, so neither records a diverged state.
  ObservableSet checked = method->observables();
  auto check_state = [&]() {
    ObservableSet now = method->observables();
    check_observables(*method, checked, now);
    checked = std::move(now);
  };
  // Each frame carries what it cost since the previous one (io::FrameEffort): wall time, and the Newton and Krylov
  // iterations of the methods that count them.
  double effort_wall = MPI_Wtime();
  std::map<std::string, double> effort_counts = method->counters();
  auto write_frame = [&]() {
    check_state();
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
    agree(comm, [&] { method->write_frame(writer); }, [] {});
    last_frame = method->steps();
    effort_wall = now;
    effort_counts = counts;
  };
  // A checkpoint that cannot be written leaves no temporary, and the previous one stays `latest`.
  auto checkpoint = [&]() {
    check_state();
    const long s = method->steps();
    const std::string temp = checkpoints.temp_path(s);
    agree(comm, [&] { method->write_checkpoint(temp); }, [&] {
      std::error_code ignored;
      fs::remove(temp, ignored);
    });
    checkpoints.commit(comm, s);
    last_checkpoint = s;
    last_checkpoint_path = checkpoints.final_path(s);
  };

  Balancer balancer(comm, scene.balance);
  RunRecord record;
  record.args = &args;
  record.scene = &scene;
  record.restart_file = restart_file;
  record.reason = "end time";
  record.exit_code = kExitDone;
  record.start_step = start_step;
  record.wall_start = wall_start;
  double last_checkpoint_wall = MPI_Wtime(), last_progress = MPI_Wtime();
  const double loop_start = MPI_Wtime();
  record.loop_start = loop_start;
  try {
    check_observables(*method, checked, checked);  // a start already not finite is reported like any later step
    if (restart_file.empty()) write_frame();
    while (!finished()) {
      method->advance(std::min({frames.next(), checkpoint_times.next(), scene.time.end}));
      const long s = method->steps();
      if (frames.pass(*method)) write_frame();
      balancer.after_step(method);
      // Collective decisions: a signal seen by any rank, or rank 0's wall clock, stops or checkpoints everyone.
      int local[2] = {stop_signal() != 0 ? 1 : 0, 0};
      if (rank == 0 && scene.checkpoint.every_minutes > 0 &&
          MPI_Wtime() - last_checkpoint_wall >= 60.0 * scene.checkpoint.every_minutes)
        local[1] = 1;
      int decide[2];
      MPI_Allreduce(local, decide, 2, MPI_INT, MPI_MAX, comm);
      if (decide[0]) {
        record.reason = "signal";
        record.exit_code = kExitRequeue;
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
    if (record.reason == "end time" && !method->reached(scene.time.end)) record.reason = "steps";
    // The end of the scene gets a frame; a run stopped early leaves its state in the final checkpoint, so a
    // restarted trajectory has exactly the frames of an uninterrupted one.
    if (record.reason == "end time" && last_frame != method->steps()) write_frame();
    writer.close();
    if (last_checkpoint != method->steps()) checkpoint();
  } catch (const NumericalError& e) {
    // The state is not worth a checkpoint: the last good one stays `latest`, and the summary says why.
    if (rank == 0) log::error(e.what());
    record.reason = "numerical failure";
    record.failure = e.what();
    record.exit_code = kExitNumerical;
  }
  // Results of a finished run, and of one that failed numerically (a rigid resolution that hit its cap says so there).
  if (record.reason == "end time" || record.reason == "numerical failure")
    agree(comm, [&] { method->write_results(args.out); }, [] {});
  record.last_checkpoint = last_checkpoint_path;
  if (scene.balance.every_steps > 0) record.balance = balancer.summary();
  report_run(*method, record, comm);
  (void)argc;
  (void)argv;
  return record.exit_code;
}

}  // namespace percussion::cli
