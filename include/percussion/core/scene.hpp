#pragma once
// A scene file: one JSON document naming its method. The frame parses the sections every method shares (time,
// output, checkpoint, balance); the method named by "method" parses its own sections from `document` (methods/registry.hpp)
// and checks the whole file against its published JSON Schema (docs/schema/<method>.schema.json).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace percussion {

class JsonChecker;

struct TimeControl {
  double end = 0;               // simulated end time, s, > 0 (0: the scene has no `time`)
  std::optional<double> step;   // fixed time step, s; if absent: step_factor x the method's stable step
  double step_factor = 0.2;     // (0, 1]
  bool allow_above_critical = false;  // run an explicit `step` above the method's stability limit
};

struct OutputControl {
  double frame_interval = 0;    // s of simulated time between frames, > 0 (0: no `output`)
};

struct CheckpointControl {
  long every_steps = 0;         // the method's steps (or events); 0 = off
  double every_time = 0;        // s of simulated time; 0 = off
  double every_minutes = 0;     // wall clock, 0 = off
  int keep = 3;                 // >= 1
};

struct BalanceControl {
  long every_steps = 0;         // check the balance every this many steps (or events); 0 = never
  double threshold = 1.1;       // re-partition when max/mean work over ranks exceeds it, > 1
};

struct Scene {
  std::string path;             // file it was read from
  std::string source;           // the file's text, stored in checkpoints
  std::string method;           // names the method in the registry
  nlohmann::json document;      // the parsed file, for the method's own sections
  TimeControl time;
  OutputControl output;
  CheckpointControl checkpoint;
  BalanceControl balance;
  // From the command line (--allow-scene-change), not the file: a restart may continue a checkpoint written under
  // a scene whose physical sections differ.
  bool allow_scene_change = false;

  // The root, for a method's parser; every message names this file and a JSON pointer.
  JsonChecker root() const;
  // Throws InputError ("missing required key") unless the file has `time` and `output`: a method that steps in
  // time calls it; a scene without them is one event at t = 0 (time.end = 0, no frames between).
  void require_time_stepping() const;
  // Throws InputError at the first root key that is neither common nor in `method_keys`.
  void expect_keys(std::initializer_list<std::string_view> method_keys) const;
};

// The root keys the frame reads.
inline constexpr std::string_view kCommonSceneKeys[] = {"description", "method", "time", "output", "checkpoint",
                                                         "balance"};

// Parse the common sections. Throws InputError("<path>: <json pointer>: <what>") on the first problem.
Scene parse_scene_text(const std::string& text, const std::string& path);
Scene parse_scene_file(const std::string& path);
// A scene file's text; InputError "<path>: cannot read file (...)" for a directory, a missing, unreadable, empty or
// oversized file. A FIFO nobody writes to reads as empty rather than waiting for a writer.
std::string read_scene_text(const std::string& path);

}  // namespace percussion
