#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <span>
#include <tuple>

#include "percussion/core/error.hpp"
#include "percussion/geometry/hcp.hpp"
#include "percussion/methods/bdem/model.hpp"
#include "percussion/methods/bdem/model_neighbours.hpp"
#include "percussion/physics/critical_step.hpp"
#include "percussion/physics/quaternion.hpp"

namespace percussion::bdem {

double critical_step(const BdemScene& scene) {
  double t = std::numeric_limits<double>::infinity();
  for (const auto& body : scene.bodies) {
    const Material& m = scene.materials[body.material];
    t = std::min(t, physics::critical_time_step(body.generator.particle_radius, m.density, m.youngs_modulus));
  }
  return t;
}

double scene_time_step(const BdemScene& scene) {
  if (scene.time.step) return *scene.time.step;
  // Explicit: a fraction of the stability limit. Implicit: a multiple of it (the paper's 20-100 T rule, §2.10).
  return (scene.integrator == "implicit" ? scene.implicit.step_factor : scene.time.step_factor) * critical_step(scene);
}

namespace {

// This rank's share [first, last) of n units.
std::array<long, 2> share(long n, int rank, int size) {
  return {static_cast<long>(share_begin(n, rank, size)), static_cast<long>(share_begin(n, rank + 1, size))};
}

// A body's centroid from its units' sums, added in unit order whatever rank made each: the same on any rank count.
Eigen::Vector3d centroid(MPI_Comm comm, long units, std::span<const long> counts, std::span<const Eigen::Vector3d> pts,
                         std::int64_t total) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<double> sums;
  std::size_t next = 0;
  for (long c : counts) {
    Eigen::Vector3d s = Eigen::Vector3d::Zero();
    for (long k = 0; k < c; ++k) s += pts[next++];
    sums.insert(sums.end(), {s.x(), s.y(), s.z()});
  }
  std::vector<int> lengths(size), displs(size);
  for (int r = 0; r < size; ++r) {
    const auto [a, b] = share(units, r, size);
    lengths[r] = static_cast<int>(3 * (b - a));
    displs[r] = static_cast<int>(3 * a);
  }
  std::vector<double> all(static_cast<std::size_t>(3 * units));
  MPI_Allgatherv(sums.data(), static_cast<int>(sums.size()), MPI_DOUBLE, all.data(), lengths.data(), displs.data(),
                 MPI_DOUBLE, comm);
  Eigen::Vector3d c = Eigen::Vector3d::Zero();
  for (long u = 0; u < units; ++u) c += Eigen::Vector3d(all[3 * u], all[3 * u + 1], all[3 * u + 2]);
  return c / static_cast<double>(total);
}

}  // namespace

Model model_from_scene(const BdemScene& scene) { return model_from_scene(scene, MPI_COMM_SELF); }

Model model_from_scene(const BdemScene& scene, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  Model g;
  g.whole = size == 1;
  const std::size_t nb = scene.bodies.size();
  std::vector<std::int64_t> row_body;
  for (std::size_t b = 0; b < nb; ++b) {
    const Body& body = scene.bodies[b];
    const std::string where = scene.path + ": /bodies/" + std::to_string(b) + "/shape: ";
    std::vector<Eigen::Vector3d> pts;
    std::vector<long> counts;
    long units = 0;
    std::array<long, 2> mine{};
    try {
      units = geometry::fill_units(body.generator);
      mine = share(units, rank, size);
      pts = geometry::hcp_fill(body.generator, mine[0], mine[1], &counts);
    } catch (const InputError& e) {
      throw InputError(where + e.what());
    }
    std::int64_t n = static_cast<std::int64_t>(pts.size()), before = 0, total = 0;
    MPI_Exscan(&n, &before, 1, MPI_INT64_T, MPI_SUM, comm);
    if (rank == 0) before = 0;
    MPI_Allreduce(&n, &total, 1, MPI_INT64_T, MPI_SUM, comm);
    if (total == 0)
      throw InputError(where + geometry::shape_name(body.generator.shape) +
                       ": no particle fits (size < 2 particle radii)");
    const Material& mat = scene.materials[body.material];
    const double r = body.generator.particle_radius;
    const double m = mat.density * 4.0 / 3.0 * std::numbers::pi * r * r * r;
    const Eigen::Vector3d c = centroid(comm, units, counts, pts, total);
    const std::int64_t first = g.particles_total + before;
    for (std::size_t k = 0; k < pts.size(); ++k) {
      const Eigen::Vector3d& p = pts[k];
      g.id.push_back(first + static_cast<std::int64_t>(k));
      row_body.push_back(static_cast<std::int64_t>(b));
      g.x.push_back(p);
      g.q.push_back(quat::identity());
      g.v.push_back(body.velocity + body.angular_velocity.cross(p - c));
      g.w.push_back(body.angular_velocity);
      g.radius.push_back(r);
      g.mass.push_back(m);
      g.material.push_back(body.material);
      int bc = -1;
      for (std::size_t k2 = 0; k2 < scene.boundary_conditions.size() && bc < 0; ++k2) {
        const auto& region = scene.boundary_conditions[k2];
        if ((p.array() >= region.min.array()).all() && (p.array() <= region.max.array()).all())
          bc = static_cast<int>(k2);
      }
      g.constraint.push_back(bc);
    }
    g.particles_total += total;
  }

  // Bonds: touching pairs within a bonded body, kept by the rank holding the smaller id and numbered body by body in
  // (a, b) order, as one rank would.
  const ModelNeighbours near(comm, g, row_body, scene.bonds.tolerance);
  struct Candidate {
    std::int64_t a, b;
    std::int32_t ia, sb;
  };
  std::vector<Candidate> found;
  near.for_each_touching([&](std::size_t i, std::size_t j) {
    if (near.tag()[i] != near.tag()[j] || !scene.bodies[static_cast<std::size_t>(near.tag()[i])].bonded) return;
    const std::int64_t gi = near.items().gids()[i], gj = near.items().gids()[j];
    if (gi < gj) {
      found.push_back({gi, gj, static_cast<std::int32_t>(i), static_cast<std::int32_t>(j)});
    } else if (j < g.rows()) {
      found.push_back({gj, gi, static_cast<std::int32_t>(j), static_cast<std::int32_t>(i)});
    }
  });
  std::sort(found.begin(), found.end(), [](const Candidate& l, const Candidate& r) {
    return std::tie(l.a, l.b) < std::tie(r.a, r.b);
  });
  std::vector<std::int64_t> per_body(nb, 0), body_before(nb, 0), body_total(nb, 0);
  for (const auto& f : found) ++per_body[static_cast<std::size_t>(row_body[f.ia])];
  MPI_Exscan(per_body.data(), body_before.data(), static_cast<int>(nb), MPI_INT64_T, MPI_SUM, comm);
  if (rank == 0) std::fill(body_before.begin(), body_before.end(), 0);
  MPI_Allreduce(per_body.data(), body_total.data(), static_cast<int>(nb), MPI_INT64_T, MPI_SUM, comm);
  std::vector<std::int64_t> next(nb);
  for (std::size_t b = 0; b < nb; ++b) {
    next[b] = g.bonds_total + body_before[b];
    g.bonds_total += body_total[b];
  }
  for (const auto& f : found) {
    const auto b = static_cast<std::size_t>(row_body[f.ia]);
    const Body& body = scene.bodies[b];
    const Material& mat = scene.materials[body.material];
    const double r = body.generator.particle_radius;
    g.bond_id.push_back(next[b]++);
    g.pair.push_back({f.a, f.b});
    g.rest.push_back(physics::make_bond_rest(near.x()[f.ia], near.x()[f.sb], r, r, mat, mat, scene.bonds));
    g.strength.push_back({mat.tensile_strength, mat.shear_strength});
    g.intact.push_back(1);
  }
  g.time_step = scene_time_step(scene);
  return g;
}

}  // namespace percussion::bdem
