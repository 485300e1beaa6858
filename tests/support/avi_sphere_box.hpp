#pragma once
// A box [0, side]³ of equal spheres placed at random without overlap, its six walls contact planes of every sphere,
// for the asynchronous-contact tests and bench.
#include <functional>
#include <random>
#include <vector>

#include "percussion/methods/avi/asynchronous_integrator.hpp"

namespace percussion::test {

inline void sphere_box(avi::AsynchronousIntegrator& integrator, int spheres, double side, double radius, double mass,
                       std::mt19937_64& random, const std::function<avi::Vec3()>& velocity) {
  std::uniform_real_distribution<double> u(0, 1);
  const double margin = 1.2 * radius;
  std::vector<avi::Vec3> centres;
  while (static_cast<int>(centres.size()) < spheres) {
    const avi::Vec3 c = avi::Vec3::Constant(margin) + (side - 2 * margin) * avi::Vec3(u(random), u(random), u(random));
    bool free = true;
    for (const avi::Vec3& o : centres) free = free && (c - o).norm() > 2.05 * radius;
    if (free) centres.push_back(c);
  }
  std::vector<int> planes;
  for (int axis = 0; axis < 3; ++axis) {
    avi::Vec3 n = avi::Vec3::Zero();
    n[axis] = 1;
    planes.push_back(integrator.add_plane(avi::Vec3::Zero(), n));
    planes.push_back(integrator.add_plane(side * n, -n));
  }
  for (const avi::Vec3& c : centres) {
    const int v = integrator.add_vertex(c, velocity(), mass, radius);
    for (int p : planes) integrator.add_plane_pair(p, v);
  }
}

}  // namespace percussion::test
