#include "ccd_command.hpp"

#include <chrono>
#include <ctime>
#include <cstdio>
#include <string>
#include <vector>

#include "percussion/core/error.hpp"
#include "percussion/geometry/ccd/ccd.hpp"
#include "percussion/geometry/ccd/query_file.hpp"

namespace percussion::cli {

int ccd_command(const CcdArgs& args, std::ostream& out) {
  const std::vector<geometry::CcdQuery> queries = geometry::read_ccd_queries(args.file);
  geometry::CcdOptions options;
  options.min_distance = args.min_distance;
  const bool vertex_face = args.type == "vertex-face";
  std::vector<char> hit(queries.size());
  // Only the queries are timed, not the parsing or the printing; the process's CPU time too, which a busy
  // machine inflates less than the wall clock.
  const auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  for (std::size_t k = 0; k < queries.size(); ++k) {
    const auto& x = queries[k].x;
    hit[k] = (vertex_face ? geometry::vertex_face_ccd(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], options)
                          : geometry::edge_edge_ccd(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], options))
                 .hit;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu_seconds = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  long false_negatives = 0, false_positives = 0;
  std::string lines;
  lines.reserve(2 * queries.size());
  for (std::size_t k = 0; k < queries.size(); ++k) {
    lines += hit[k] ? "1\n" : "0\n";
    false_negatives += queries[k].truth && !hit[k];
    false_positives += !queries[k].truth && hit[k];
  }
  out << lines;
  char summary[256];
  std::snprintf(summary, sizeof summary,
                "summary: %zu queries, false negatives %ld, false positives %ld, mean %.3f us per query (%.3f us CPU)\n",
                queries.size(), false_negatives, false_positives,
                queries.empty() ? 0.0 : 1e6 * seconds / static_cast<double>(queries.size()),
                queries.empty() ? 0.0 : 1e6 * cpu_seconds / static_cast<double>(queries.size()));
  out << summary;
  return kExitDone;
}

}  // namespace percussion::cli
