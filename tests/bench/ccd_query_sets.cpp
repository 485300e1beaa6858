// Writes CCD-Query-IO files with exact answers (tests/support/ccd_query_sets.hpp) for scripts/bench/ccd.sh and
// tests/cli/ccd.sh, and prints one line per file: its name, query count and hits.
//   ccd_query_sets OUTDIR [COUNT] [SEED]
//   -> OUTDIR/{random,near,parallel,constructed}_{vf,ee}.csv; random queries the exact reference cannot decide
//      are dropped (counted on the line).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "../support/ccd_query_sets.hpp"

using namespace percussion::testing;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: ccd_query_sets OUTDIR [COUNT] [SEED]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const int count = argc > 2 ? std::atoi(argv[2]) : 1000;
  const unsigned seed = argc > 3 ? static_cast<unsigned>(std::atoi(argv[3])) : 1u;
  for (const auto& [kind, tag] : {std::pair{CcdKind::VertexFace, "vf"}, std::pair{CcdKind::EdgeEdge, "ee"}}) {
    int unknown = 0;
    const auto write = [&](const std::string& set, const std::vector<CcdCase>& cases, int dropped) {
      const std::string path = dir + "/" + set + "_" + tag + ".csv";
      write_ccd_query_file(path, cases);
      int hits = 0;
      for (const auto& c : cases) hits += c.truth;
      std::printf("%s %zu queries, %d hits, %d undecided dropped\n", path.c_str(), cases.size(), hits, dropped);
    };
    write("random", ccd_random_cases(kind, count, 1.0, seed, &unknown), unknown);
    write("near", ccd_near_touching_cases(kind, count, seed + 1), 0);
    write("parallel", ccd_parallel_cases(kind, count, seed + 2), 0);
    write("constructed", ccd_constructed_cases(kind, 4, seed + 3), 0);
  }
  return 0;
}
