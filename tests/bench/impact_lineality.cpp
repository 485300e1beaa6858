// Costs of the lineality machinery (notes 003 Alg. E, F, δ) on 2D packs of unit balls in a box (walls left, right,
// floor): a hexagonal pack (rows offset: no implicit equality) and a square one (every row is a chain jammed
// between the side walls). Prints one row per scene; scripts/bench/impact_lineality.sh runs it.
// Usage: impact_lineality SIDE...   (SIDE × SIDE balls per scene)
#include <petscsys.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../support/impact_cases.hpp"
#include "percussion/physics/impact/anti_locking.hpp"
#include "percussion/physics/impact/lineality.hpp"
#include "percussion/physics/impact/lineality_distance.hpp"

using namespace percussion::impact;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

void run(const char* name, int side, bool hexagonal) {
  std::vector<double> centres, masses;
  for (int j = 0; j < side; ++j)
    for (int i = 0; i < side; ++i) {
      centres.push_back(2.0 * i + (hexagonal ? j % 2 : 0));
      centres.push_back((hexagonal ? std::sqrt(3.0) : 2.0) * j);
      masses.push_back(1.0 + (i * 7 + j * 3) % 5);
    }
  const double right = 2.0 * (side - 1) + (hexagonal ? 1.0 : 0.0) + 1.0;
  const ImpactSystem s = percussion::impact::testing::balls2d(centres, masses, 1.0, {{-1, 0, 1, 0}, {right, 0, -1, 0}, {0, -1, 0, 1}});
  auto t = std::chrono::steady_clock::now();
  const ImplicitEqualities found = find_implicit_equalities(s);
  const double lp = seconds_since(t);
  t = std::chrono::steady_clock::now();
  const AntiLocking lock(s, found);
  std::vector<double> v(s.dofs(), 1.0), reduced;
  const double removed = lock.project(v, reduced);
  const double reduce = seconds_since(t);
  // The wall-free pack with its centres as witness: the pre-filter alone.
  const ImpactSystem free = percussion::impact::testing::balls2d(centres, masses, 1.0);
  LinealityOptions witness;
  witness.witness = centres;
  t = std::chrono::steady_clock::now();
  const ImplicitEqualities none = find_implicit_equalities(free, witness);
  const double prefilter = seconds_since(t);
  t = std::chrono::steady_clock::now();
  const LinealityDistance d = lineality_distance(lock.system());
  const double delta = seconds_since(t);
  std::printf("%-10s %6d %7d %6zu %6d %9.4f %9.4f %9.6f %3s %10.3g %10.3g %6lld %9.4f %10.3g\n", name, s.bodies(),
              s.constraints(), found.constraints.size(), lock.dimension(), lp, reduce, prefilter,
              none.solved_lp ? "lp" : "-", d.lower_bound, d.delta, static_cast<long long>(d.iterations), delta,
              removed);
}

}  // namespace

int main(int argc, char** argv) {
  PetscOptionsSetValue(nullptr, "-no_signal_handler", nullptr);
  PetscInitialize(nullptr, nullptr, nullptr, nullptr);
  std::printf("%-10s %6s %7s %6s %6s %9s %9s %9s %3s %10s %10s %6s %9s %10s\n", "scene", "balls", "constr", "|I|",
              "dimE", "lp_s", "reduce_s", "witness_s", "", "delta_low", "delta", "its", "delta_s", "E_removed");
  for (int a = 1; a < argc; ++a) {
    const int side = std::atoi(argv[a]);
    run("hexagonal", side, true);
    run("square", side, false);
  }
  PetscFinalize();
  return 0;
}
