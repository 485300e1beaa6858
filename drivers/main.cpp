// percussion: entry point. Parses the command line, starts MPI and PETSc, dispatches, maps errors to exit codes.
#include <mpi.h>
#include <petscsys.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "ccd_command.hpp"
#include "cli.hpp"
#include "percussion/core/error.hpp"
#include "percussion/core/log.hpp"
#include "percussion/core/scene.hpp"
#include "percussion/io/h5file.hpp"
#include "percussion/io/inspect.hpp"
#include "percussion/methods/registry.hpp"

using namespace percussion;

namespace {

int check(const std::string& path) {
  // Validate, then build the model as a run would (generators can still reject a shape), on rank 0 alone.
  if (!log::is_root()) return kExitDone;
  const Scene scene = parse_scene_file(path);
  validate_scene(scene);
  std::cout << path << ": " << find_method(scene).describe(scene) << "\n";
  return kExitDone;
}

int compare(const cli::CompareArgs& c) {
  if (!log::is_root()) return kExitDone;
  const io::CompareResult r = io::compare_last_frames(c.a, c.b);
  std::cout << "steps " << r.step_a << " vs " << r.step_b << "\n";
  for (const io::KindDifference& k : r.kinds) {
    std::cout << k.kind << " (" << k.rows << "): max relative position difference " << k.position
              << ", velocity " << k.velocity;
    if (k.quaternion >= 0) std::cout << ", quaternion " << k.quaternion;
    std::cout << "\n";
  }
  if (r.bonds_a > 0 || r.bonds_b > 0)
    std::cout << "intact bonds " << r.bonds_a << " vs " << r.bonds_b << ", in only one: " << r.bonds_only_in_one << "\n";
  const bool same = r.step_a == r.step_b && r.max_rel_position <= c.rtol && r.max_rel_velocity <= c.rtol &&
                    r.max_rel_quaternion <= c.rtol && r.bonds_only_in_one == 0;
  std::cout << (same ? "equal" : "different") << " (rtol " << c.rtol << ")\n";
  return same ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int code = kExitDone;
  cli::Command cmd;
  try {
    cmd = cli::parse_command_line(argc, argv);
  } catch (const InputError& e) {
    log::error(e.what());
    MPI_Finalize();
    return kExitBadInput;
  }
  // PETSc gets only its own options; it must not install signal handlers (ours checkpoint on SIGTERM).
  std::vector<std::string> petsc_args = {argv[0]};
  petsc_args.insert(petsc_args.end(), cmd.run.petsc.begin(), cmd.run.petsc.end());
  petsc_args.push_back("-no_signal_handler");
  std::vector<char*> petsc_argv;
  for (auto& s : petsc_args) petsc_argv.push_back(s.data());
  int petsc_argc = static_cast<int>(petsc_argv.size());
  char** petsc_argv_ptr = petsc_argv.data();
  PetscInitialize(&petsc_argc, &petsc_argv_ptr, nullptr, nullptr);
  try {
    switch (cmd.kind) {
      case cli::Command::Kind::Help:
        if (log::is_root()) std::cout << cli::usage();
        break;
      case cli::Command::Kind::Run: code = cli::run(cmd.run, argc, argv); break;
      case cli::Command::Kind::Check: code = check(cmd.file); break;
      case cli::Command::Kind::Info:
        if (log::is_root()) io::print_info(cmd.file, std::cout);
        break;
      case cli::Command::Kind::Compare: code = compare(cmd.compare); break;
      case cli::Command::Kind::Ccd:
        if (log::is_root()) code = cli::ccd_command(cmd.ccd, std::cout);
        break;
    }
  } catch (const InputError& e) {
    log::error(e.what());
    code = kExitBadInput;
  } catch (const NumericalError& e) {
    log::error(e.what());
    code = kExitNumerical;
  } catch (const OutputError& e) {
    log::error(std::string("cannot write output: ") + e.what());
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    // A fault only some ranks saw leaves the others in a collective: end them all, with the same code.
    if (!e.collective() && size > 1) MPI_Abort(MPI_COMM_WORLD, kExitOutput);
    code = kExitOutput;
  } catch (const std::exception& e) {
    // Unexpected: other ranks may be waiting in a collective, so take them all down.
    log::error(std::string("internal error: ") + e.what());
    MPI_Abort(MPI_COMM_WORLD, kExitFailure);
  }
  // Exit codes agree across ranks (rank 0's verdict wins for rank-0-only commands).
  MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  PetscFinalize();
  // (A run that recovered from a failed write, by rewriting a trajectory's broken tail, ends normally.)
  if (code != kExitDone && io::H5File::write_failed()) {
    std::fflush(nullptr);
    std::_Exit(code);
  }
  MPI_Finalize();
  return code;
}
