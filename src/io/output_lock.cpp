#include "percussion/io/output_lock.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "percussion/core/error.hpp"
#include "percussion/core/log.hpp"
#include "percussion/io/h5file.hpp"

namespace percussion::io {
namespace {

namespace fs = std::filesystem;

std::string host_name() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof(buffer) - 1) != 0) return "unknown-host";
  return buffer;
}

// O_EXCL makes two runs that start at once agree on one winner.
bool create_exclusive(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) {
    if (errno == EEXIST) return false;
    throw OutputError(path + ": cannot create lock file (" + std::strerror(errno) + ")");
  }
  const ssize_t written = ::write(fd, text.data(), text.size());
  const int err = errno;
  ::close(fd);
  if (written != static_cast<ssize_t>(text.size())) {
    ::unlink(path.c_str());
    throw OutputError(path + ": cannot write lock file (" + std::strerror(err) + ")");
  }
  return true;
}

// True if no process `pid` runs here (kill(pid, 0) fails with ESRCH; EPERM means it runs under another user).
bool dead_here(long pid) { return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

}  // namespace

std::string OutputLock::holder_text() { return host_name() + ":" + std::to_string(::getpid()); }

OutputLock::OutputLock(MPI_Comm comm, const std::string& dir) : dir_(dir), path_((fs::path(dir) / kFileName).string()) {
  on_rank0(comm, [&] {
    std::error_code ec;
    if (fs::exists(dir_, ec) && !fs::is_directory(dir_, ec)) throw InputError(dir_ + ": exists and is not a directory");
    if (!fs::exists(dir_, ec)) {
      created_dir_ = fs::create_directories(dir_, ec);
      if (ec) throw OutputError(dir_ + ": cannot create output directory (" + ec.message() + ")");
    }
    const std::string me = holder_text() + "\n";
    for (int attempt = 0; attempt < 3 && !held_; ++attempt) {
      if (create_exclusive(path_, me)) {
        held_ = true;
        break;
      }
      std::ifstream in(path_);
      std::string holder;
      std::getline(in, holder);
      const std::size_t colon = holder.rfind(':');
      const std::string host = colon == std::string::npos ? "" : holder.substr(0, colon);
      long pid = 0;
      if (colon != std::string::npos) std::istringstream(holder.substr(colon + 1)) >> pid;
      if (!in && !fs::exists(path_, ec)) continue;  // released between our create and read: try again
      // The ranks of an mpirun killed with -9 run on for about a second: give a holder on this host a moment to end.
      for (int wait = 0; wait < 20 && host == host_name() && pid > 0 && !dead_here(pid); ++wait) ::usleep(100000);
      if (host == host_name() && dead_here(pid)) {
        log::warn(path_ + ": taking over the lock of run " + holder + ", which no longer runs");
        fs::remove(path_, ec);
        continue;
      }
      throw InputError(dir_ + ": output directory is in use by run " + (holder.empty() ? "(unknown)" : holder) +
                       " (lock file " + path_ + "); wait for it to end, or use another --out" +
                       (host == host_name() ? "" : "; if that run is over, delete the lock file"));
    }
    if (!held_) throw InputError(path_ + ": cannot take the output lock (it keeps changing hands)");
  });
}

OutputLock::~OutputLock() {
  if (!held_) return;
  std::error_code ec;
  std::ifstream in(path_);
  std::string holder;
  std::getline(in, holder);
  in.close();
  if (holder == holder_text()) fs::remove(path_, ec);
  if (created_dir_ && fs::is_empty(dir_, ec)) fs::remove(dir_, ec);
}

}  // namespace percussion::io
