#include "cli.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "percussion/core/error.hpp"

namespace percussion::cli {

const char* usage() {
  return R"(percussion — contact, impact and fracture on clusters

usage:
  percussion run SCENE [--out DIR] [--restart CKPT] [--steps N] [--overwrite] [--allow-scene-change]
                   [PETSc options...]
  percussion check SCENE            validate a scene and report what it builds; writes nothing
  percussion info FILE.h5           what a trajectory or checkpoint holds
  percussion compare A.h5 B.h5 [--rtol X]
                                    compare the last frames of two trajectories (exit 0 equal, 1 different)
  percussion ccd FILE.csv --type vertex-face|edge-edge [--min-distance D]
                                    continuous collision detection on the queries of a CCD-Query-IO file
                                    (8 rows of 7 integers per query): one line per query, 1 if the primitives
                                    may come within D (default 0) during the step, else 0; then a summary with
                                    false negatives and positives against the file's last column and the mean
                                    microseconds per query
  percussion --help

run options:
  --out DIR        output directory (default out/<scene file stem>): trajectory.h5, trajectory.xdmf,
                   checkpoints/, summary.json, log.txt
  --restart CKPT   continue from a checkpoint file, a checkpoints/ directory or an output directory
                   (its checkpoints/latest); any rank count
  --steps N        stop at step N counted from the scene's start (a restarted run with the same N ends
                   where an uninterrupted one does); a final checkpoint is written
  --overwrite      replace the outputs of an earlier run in DIR
  --allow-scene-change
                   continue a checkpoint written under a scene whose physical sections (materials, bodies,
                   bonds, contact, obstacles, boundary conditions, gravity) differ from SCENE's
  -name value      any other option starting with one dash goes to PETSc's options database

exit codes:
  0 done, 1 internal error, 2 bad input (scene, option, file), 3 numerical failure,
  75 checkpointed on SIGTERM, SIGINT, SIGUSR1 or SIGUSR2: requeue me and restart from DIR
)";
}

namespace {
long parse_long(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < 0) throw InputError(flag + ": expected a non-negative integer, got '" + text + "'");
  return v;
}
double parse_double(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(v >= 0)) throw InputError(flag + ": expected a non-negative number, got '" + text + "'");
  return v;
}
}  // namespace

Command parse_command_line(int argc, char** argv) {
  std::vector<std::string> a(argv + 1, argv + argc);
  Command c;
  if (a.empty() || a[0] == "--help" || a[0] == "-h" || a[0] == "help") return c;
  const std::string sub = a[0];
  auto value = [&](std::size_t& i) -> std::string {
    if (i + 1 >= a.size()) throw InputError(a[i] + ": missing value");
    return a[++i];
  };
  if (sub == "run") {
    c.kind = Command::Kind::Run;
    for (std::size_t i = 1; i < a.size(); ++i) {
      const std::string& s = a[i];
      if (s == "--out") c.run.out = value(i);
      else if (s == "--restart") c.run.restart = value(i);
      else if (s == "--steps") c.run.steps = parse_long("--steps", value(i));
      else if (s == "--overwrite") c.run.overwrite = true;
      else if (s == "--allow-scene-change") c.run.allow_scene_change = true;
      else if (s == "--help") { c.kind = Command::Kind::Help; return c; }
      else if (s.rfind("--", 0) == 0) throw InputError("unknown option '" + s + "' (see percussion --help)");
      else if (s.rfind("-", 0) == 0 && s.size() > 1) {
        c.run.petsc.push_back(s);
        if (i + 1 < a.size() && (a[i + 1].empty() || a[i + 1][0] != '-')) c.run.petsc.push_back(a[++i]);
      } else if (c.run.scene.empty()) c.run.scene = s;
      else throw InputError("unexpected argument '" + s + "' (one scene file per run)");
    }
    if (c.run.scene.empty()) throw InputError("run: missing SCENE (see percussion --help)");
    if (c.run.out.empty()) c.run.out = "out/" + std::filesystem::path(c.run.scene).stem().string();
    return c;
  }
  if (sub == "check" || sub == "info") {
    c.kind = sub == "check" ? Command::Kind::Check : Command::Kind::Info;
    if (a.size() != 2) throw InputError(sub + ": expected exactly one file (see percussion --help)");
    c.file = a[1];
    return c;
  }
  if (sub == "compare") {
    c.kind = Command::Kind::Compare;
    std::vector<std::string> files;
    for (std::size_t i = 1; i < a.size(); ++i) {
      if (a[i] == "--rtol") c.compare.rtol = parse_double("--rtol", value(i));
      else if (a[i].rfind("-", 0) == 0) throw InputError("compare: unknown option '" + a[i] + "'");
      else files.push_back(a[i]);
    }
    if (files.size() != 2) throw InputError("compare: expected two trajectory files");
    c.compare.a = files[0];
    c.compare.b = files[1];
    return c;
  }
  if (sub == "ccd") {
    c.kind = Command::Kind::Ccd;
    for (std::size_t i = 1; i < a.size(); ++i) {
      if (a[i] == "--type") c.ccd.type = value(i);
      else if (a[i] == "--min-distance") c.ccd.min_distance = parse_double("--min-distance", value(i));
      else if (a[i].rfind("-", 0) == 0) throw InputError("ccd: unknown option '" + a[i] + "'");
      else if (c.ccd.file.empty()) c.ccd.file = a[i];
      else throw InputError("ccd: unexpected argument '" + a[i] + "' (one query file)");
    }
    if (c.ccd.file.empty()) throw InputError("ccd: missing FILE.csv (see percussion --help)");
    if (c.ccd.type != "vertex-face" && c.ccd.type != "edge-edge")
      throw InputError(c.ccd.file + ": --type: expected vertex-face or edge-edge, got '" + c.ccd.type + "'");
    if (!std::isfinite(c.ccd.min_distance)) throw InputError("--min-distance: expected a finite number");
    return c;
  }
  throw InputError("unknown command '" + sub + "' (expected run, check, info, compare, ccd; see percussion --help)");
}

}  // namespace percussion::cli
