#include "percussion/methods/bdem/plausibility.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "percussion/core/log.hpp"

namespace percussion::bdem {

EnergyBound::EnergyBound(const Domain& d, const BdemScene& scene, double start_time) : start_time_(start_time) {
  double local[2] = {0, 0};  // mass, fastest speed (with spin at the surface)
  double r_min = 0;
  for (std::size_t i = 0; i < d.n_owned; ++i) {
    local[0] += d.mass[i];
    local[1] = std::max(local[1], d.v[i].norm() + d.w[i].norm() * d.radius[i]);
  }
  double sum = 0, fastest = 0;
  MPI_Allreduce(&local[0], &sum, 1, MPI_DOUBLE, MPI_SUM, d.comm);
  MPI_Allreduce(&local[1], &fastest, 1, MPI_DOUBLE, MPI_MAX, d.comm);
  double bc_speed = 0;
  for (const BoundaryCondition& bc : scene.boundary_conditions) {
    // The farthest a driven particle can be from the centre it spins about: the region's far corner.
    const Eigen::Vector3d far = (bc.max - bc.center).cwiseAbs().cwiseMax((bc.min - bc.center).cwiseAbs());
    bc_speed = std::max(bc_speed, bc.velocity.norm() + bc.angular_velocity.norm() * far.norm());
  }
  for (const Body& body : scene.bodies)
    r_min = r_min == 0 ? body.generator.particle_radius : std::min(r_min, body.generator.particle_radius);
  mass_ = sum;
  speed_ = fastest + bc_speed;
  gravity_ = scene.gravity.norm();
  const double v_floor = scene.time.end > 0 ? r_min / scene.time.end : 0;
  floor_ = 0.5 * mass_ * v_floor * v_floor;
}

std::string EnergyBound::exceeded(const ObservableSet& before, const ObservableSet& now, double t) const {
  const double k0 = before.scalar_or("kinetic", 0), u0 = before.scalar_or("potential", 0);
  const double k1 = now.scalar_or("kinetic", 0);
  const double v = speed_ + gravity_ * std::max(0.0, t - start_time_);
  const double supply = std::abs(k0) + std::abs(u0) + 0.5 * mass_ * v * v + floor_;
  if (!(k1 > kGrowth * supply)) return {};
  std::ostringstream o;
  o << std::setprecision(4) << "observable 'kinetic' grew from " << k0 << " J to " << k1
    << " J, more than " << kGrowth << " times the energy the state and its driving could supply (" << supply
    << " J); an explicit time step above the critical step does this";
  return o.str();
}

long warn_initial_overlaps(const Domain& d, double tolerance) {
  long local = 0;
  double deepest = 0;  // as a fraction of the smaller radius
  for (const Pair& p : d.pairs) {
    if (p.bond >= 0) continue;  // a bond's rest length is its start distance
    const double ra = d.radius[static_cast<std::size_t>(p.a)], rb = d.radius[static_cast<std::size_t>(p.b)];
    const double gap = (d.x[static_cast<std::size_t>(p.a)] - d.x[static_cast<std::size_t>(p.b)]).norm() - ra - rb;
    const double depth = -gap / std::min(ra, rb);
    if (depth > tolerance) {
      ++local;
      deepest = std::max(deepest, depth);
    }
  }
  long count = 0;
  double worst = 0;
  MPI_Allreduce(&local, &count, 1, MPI_LONG, MPI_SUM, d.comm);
  MPI_Allreduce(&deepest, &worst, 1, MPI_DOUBLE, MPI_MAX, d.comm);
  if (count > 0) {
    std::ostringstream o;
    o << std::setprecision(3) << count << " particle pairs that are not bonded overlap by more than " << 100 * tolerance
      << "% of the smaller radius at the start (the deepest by " << 100 * worst
      << "%): contact pushes them apart at once (do two bodies overlap?)";
    log::warn(o.str());
  }
  return count;
}

}  // namespace percussion::bdem
