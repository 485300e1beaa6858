#include "percussion/core/log.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>

namespace percussion::log {
namespace {
std::ofstream& file() {
  static std::ofstream f;
  return f;
}
int rank() {
  int initialized = 0, r = 0;
  MPI_Initialized(&initialized);
  if (initialized) MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
}  // namespace

bool is_root() { return rank() == 0; }

void set_file(const std::string& path) {
  if (!is_root()) return;
  if (file().is_open()) file().close();
  if (!path.empty()) file().open(path, std::ios::app);
}

void info(const std::string& message) {
  if (!is_root()) return;
  std::cout << message << std::endl;
  if (file().is_open()) file() << message << std::endl;
}

void warn(const std::string& message) {
  if (!is_root()) return;
  std::cerr << ("warning: " + message + "\n") << std::flush;  // one write: mpiexec may interleave others'
  if (file().is_open()) file() << "warning: " << message << std::endl;
}

void error(const std::string& message) {
  std::cerr << ("error: " + message + "\n") << std::flush;  // one write: mpiexec may interleave others'
  if (is_root() && file().is_open()) file() << "error: " << message << std::endl;
}

}  // namespace percussion::log
