// Per-component impact resolution: build the component's ImpactSystem in contact order, run the operator, write
// the velocities back.
#include "percussion/methods/rigid/resolve.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "percussion/physics/impact/gauss_seidel.hpp"
#include "percussion/physics/impact/impact_system.hpp"

namespace percussion::rigid {

namespace {

// splitmix64: decorrelates the per-component seeds of neighbouring body ids.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

InstantResult resolve_contacts(BallState& balls, int dimension, std::span<const Contact> contacts,
                               const Components& components, const ImpactSettings& settings) {
  InstantResult out;
  out.impulses.assign(contacts.size(), 0.0);
  out.components = components.count();
  const std::int64_t n = static_cast<std::int64_t>(balls.size());
  std::vector<int> local(n, -1);
  for (std::int64_t comp = 0; comp < components.count(); ++comp) {
    const std::int64_t b0 = components.body_start[comp], b1 = components.body_start[comp + 1];
    out.largest_component = std::max(out.largest_component, b1 - b0);
    impact::ImpactSystem system;
    for (std::int64_t i = b0; i < b1; ++i) {
      const std::int64_t k = components.body_list[i];
      local[k] = system.add_point_mass(dimension, balls.mass[k]);
    }
    for (std::int64_t i = components.contact_start[comp]; i < components.contact_start[comp + 1]; ++i) {
      const Contact& c = contacts[components.contact_list[i]];
      double minus[3], plus[3];
      for (int d = 0; d < dimension; ++d) minus[d] = -c.normal[d], plus[d] = c.normal[d];
      const std::span<const double> g_minus(minus, dimension), g_plus(plus, dimension);
      const bool a_moves = !balls.fixed[c.a];
      const bool b_moves = c.b < n && !balls.fixed[c.b];
      if (a_moves && b_moves) system.add_constraint(local[c.a], g_minus, local[c.b], g_plus);
      else if (a_moves) system.add_constraint(local[c.a], g_minus);
      else system.add_constraint(local[c.b], g_plus);
    }
    system.finish();
    std::vector<double> v(system.dofs());
    for (std::int64_t i = b0; i < b1; ++i) {
      const std::int64_t k = components.body_list[i];
      for (int d = 0; d < dimension; ++d) v[system.body_offset(local[k]) + d] = balls.velocity[k][d];
    }

    if (settings.op != Operator::gauss_seidel) {
      throw std::logic_error("rigid: only the Gauss-Seidel operator is wired so far");
    }
    impact::GaussSeidelOptions options;
    options.resolve = settings.resolve;
    options.order = settings.order;
    options.seed = mix(settings.seed ^ mix(static_cast<std::uint64_t>(components.body_list[b0])));
    options.restitution = settings.restitution;
    const impact::Resolution r = impact::gauss_seidel(system, v, options);

    out.iterations += r.iterations;
    out.reflections += r.reflections;
    out.renormalisations += r.renormalisations;
    if (!r.terminated && out.terminated) {
      out.terminated = false;
      out.reason = "component of body " + std::to_string(components.body_list[b0]) + " (" +
                   std::to_string(b1 - b0) + " bodies, " +
                   std::to_string(components.contact_start[comp + 1] - components.contact_start[comp]) +
                   " contacts): " + r.reason;
    }
    for (std::int64_t i = components.contact_start[comp]; i < components.contact_start[comp + 1]; ++i) {
      const int c = static_cast<int>(i - components.contact_start[comp]);
      out.impulses[components.contact_list[i]] = r.impulses[c] / std::sqrt(system.raw_metric(c));
    }
    for (std::int64_t i = b0; i < b1; ++i) {
      const std::int64_t k = components.body_list[i];
      for (int d = 0; d < dimension; ++d) balls.velocity[k][d] = v[system.body_offset(local[k]) + d];
      local[k] = -1;
    }
  }
  return out;
}

}  // namespace percussion::rigid
