#pragma once
// The bonded DEM's global totals (identical on every rank); BdemMethod reports them to the frame by name.
#include <array>

namespace percussion::bdem {

struct Totals {
  double kinetic = 0, potential = 0, total = 0;
  std::array<double, 3> momentum{}, angular_momentum{};
  long bonds_broken = 0;
  long contacts = 0;
};

}  // namespace percussion::bdem
