#pragma once
// One run per output directory: <dir>/.percussion.lock holds the host name and PID of the run that writes there.
// Taken at start (rank 0 creates it with O_EXCL), removed when the run ends. A lock left by a process that no
// longer runs on this host (kill -9, MPI_Abort) is taken over with a warning; a live holder, or one on another host
// (whose PID cannot be checked from here), makes the next run stop with InputError naming it.
#include <mpi.h>

#include <string>

namespace percussion::io {

class OutputLock {
 public:
  static constexpr const char* kFileName = ".percussion.lock";

  // Collective. Creates `dir` if absent (and removes it again at release if the run left it empty).
  OutputLock(MPI_Comm comm, const std::string& dir);
  ~OutputLock();  // releases (rank 0): removes the file if it still names this process
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

  const std::string& path() const { return path_; }
  // "host:pid" of this process, as written into the file.
  static std::string holder_text();

 private:
  std::string dir_, path_;
  bool held_ = false;         // rank 0 holds the file
  bool created_dir_ = false;  // the run made the directory
};

}  // namespace percussion::io
