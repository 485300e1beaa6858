#pragma once
// Messages for the user: rank 0 prints to stdout/stderr and appends to the run's log file.
#include <mpi.h>
#include <string>

namespace percussion::log {

void set_file(const std::string& path);  // rank 0 appends every message there too; "" closes it
void info(const std::string& message);   // rank 0 only
void warn(const std::string& message);   // rank 0 only, "warning: " prefix, stderr
void error(const std::string& message);  // the calling rank, stderr (used before an abort or exit)
bool is_root();

}  // namespace percussion::log
