#pragma once
// The `percussion` command line: what each subcommand was asked to do.
#include <optional>
#include <string>
#include <vector>

namespace percussion::cli {

struct RunArgs {
  std::string scene;
  std::string out;              // default: out/<scene stem>
  std::string restart;          // checkpoint file, checkpoints dir or output dir
  std::optional<long> steps;    // stop at this step, counted from the scene's start
  bool overwrite = false;
  bool allow_scene_change = false;  // continue a checkpoint of a scene whose physical sections differ
  std::vector<std::string> petsc;  // everything else starting with '-', for PETSc's options database
};

struct CompareArgs {
  std::string a, b;
  double rtol = 1e-10;
};

struct CcdArgs {
  std::string file;
  std::string type;           // vertex-face or edge-edge
  double min_distance = 0.0;
};

struct Command {
  enum class Kind { Help, Run, Check, Info, Compare, Ccd } kind = Kind::Help;
  RunArgs run;
  CompareArgs compare;
  CcdArgs ccd;
  std::string file;  // check / info
};

// Throws InputError with a one-line message on a malformed command line.
Command parse_command_line(int argc, char** argv);
const char* usage();

int run(const RunArgs& args, int argc, char** argv);  // the time loop; returns the exit code

}  // namespace percussion::cli
