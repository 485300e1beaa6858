#pragma once
// Errors and the exit codes the `percussion` command documents.
#include <stdexcept>
#include <string>

namespace percussion {

enum ExitCode : int {
  kExitDone = 0,
  kExitFailure = 1,         // unexpected internal error
  kExitBadInput = 2,        // scene, option or file the user gave is wrong
  kExitNumerical = 3,       // simulation failed numerically (NaN, solver divergence, exploding observables)
  kExitOutput = 4,          // cannot write output (path below a file, no permission, disk full)
  kExitRequeue = 75,        // checkpointed on a signal: requeue me (EX_TEMPFAIL)
};

// Bad user input: the message names the file and the JSON path ("inputs/x.json: /a/0/b: ...").
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The simulation could not continue (non-finite state, solver failure).
class NumericalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Output could not be written: the message names the path and the operating system's reason. `collective` says
// every rank throws it at the same point (so the program can end without MPI_Abort).
class OutputError : public std::runtime_error {
 public:
  explicit OutputError(const std::string& what, bool collective = false)
      : std::runtime_error(what), collective_(collective) {}
  bool collective() const { return collective_; }

 private:
  bool collective_;
};

}  // namespace percussion
