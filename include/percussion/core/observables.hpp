#pragma once
// Global quantities a method reports each frame and at the end of a run (identical on every rank).
#include <array>

namespace percussion {

struct Observables {
  double kinetic = 0, potential = 0, total = 0;
  std::array<double, 3> momentum{}, angular_momentum{};
  long bonds_broken = 0;
  long contacts = 0;
};

}  // namespace percussion
