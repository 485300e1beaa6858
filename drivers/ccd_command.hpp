#pragma once
// `percussion ccd FILE.csv --type vertex-face|edge-edge [--min-distance D]`: CCD over a CCD-Query-IO file.
#include <ostream>

#include "cli.hpp"

namespace percussion::cli {

// Prints one 0/1 line per query, then the summary line; returns the exit code (InputError on a bad file).
int ccd_command(const CcdArgs& args, std::ostream& out);

}  // namespace percussion::cli
