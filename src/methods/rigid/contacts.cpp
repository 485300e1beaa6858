// Ball–ball and ball–wall contacts (pairs with a box: box_contacts.cpp), and the components of the contact graph.
#include "percussion/methods/rigid/contacts.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "percussion/methods/rigid/box_contacts.hpp"

namespace percussion::rigid {

std::vector<Contact> ContactFinder::find(const BallState& balls, std::span<const Wall> walls, double tolerance,
                                         double dt, const Eigen::Vector3d& kick, std::int64_t bodies) {
  const std::size_t n = balls.size();
  const std::int64_t wall0 = bodies >= 0 ? bodies : static_cast<std::int64_t>(n);
  std::vector<Contact> out;
  double r_max = 0, v_max = 0;
  for (std::size_t k = 0; k < n; ++k) {
    r_max = std::max(r_max, balls.radius[k]);
    v_max = std::max(v_max, balls.surface_speed(k) + kick.norm());
  }
  // Two balls can close 2 v_max dt in a step.
  const double reach = 2.0 * r_max * (1.0 + tolerance) + 2.0 * v_max * dt;
  if (n >= 2) {
    cells_.build(balls.position, reach);
    cells_.for_each_pair(reach, [&](std::size_t i, std::size_t j, double d2) {
      const std::size_t a = balls.global_id(i) < balls.global_id(j) ? i : j, b = a == i ? j : i;
      if (balls.fixed[a] && balls.fixed[b]) return;
      if (balls.is_box(a) || balls.is_box(b)) {
        append_box_pair_contacts(balls, a, b, tolerance, dt, kick, out);
        return;
      }
      const double d = std::sqrt(d2);
      if (!(d > 0)) return;  // coincident centres: the scene check refuses them
      const Eigen::Vector3d u = (balls.position[b] - balls.position[a]) / d;
      const double gap = d - balls.radius[a] - balls.radius[b];
      const Eigen::Vector3d va = balls.fixed[a] ? Eigen::Vector3d::Zero() : Eigen::Vector3d(balls.velocity[a] + kick);
      const Eigen::Vector3d vb = balls.fixed[b] ? Eigen::Vector3d::Zero() : Eigen::Vector3d(balls.velocity[b] + kick);
      const double approach = std::min(0.0, u.dot(vb - va));
      if (gap + dt * approach <= tolerance * std::min(balls.radius[a], balls.radius[b]))
        out.push_back({balls.global_id(a), balls.global_id(b), u, gap, balls.position[a] + balls.radius[a] * u, 0});
    });
  }
  for (std::size_t w = 0; w < walls.size(); ++w) {
    for (std::size_t k = 0; k < n; ++k) {
      if (balls.fixed[k]) continue;
      if (balls.is_box(k)) {
        append_box_wall_contacts(balls, k, walls[w], wall0 + static_cast<std::int64_t>(w), tolerance, dt, kick, out);
        continue;
      }
      const double gap = (balls.position[k] - walls[w].point).dot(walls[w].normal) - balls.radius[k];
      const double approach = std::min(0.0, walls[w].normal.dot(balls.velocity[k] + kick));
      if (gap + dt * approach <= tolerance * balls.radius[k])
        out.push_back({balls.global_id(k), wall0 + static_cast<std::int64_t>(w), -walls[w].normal, gap,
                       balls.position[k] - balls.radius[k] * walls[w].normal, 0});
    }
  }
  std::sort(out.begin(), out.end(), [](const Contact& x, const Contact& y) {
    return x.a != y.a ? x.a < y.a : x.b != y.b ? x.b < y.b : x.sub < y.sub;
  });
  return out;
}

Components contact_components(const BallState& balls, std::span<const Contact> contacts) {
  const std::int64_t n = static_cast<std::int64_t>(balls.size());
  std::vector<std::int64_t> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  const auto root = [&](std::int64_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  const auto dynamic = [&](std::int64_t k) { return k < n && !balls.fixed[k]; };
  for (const Contact& c : contacts) {
    if (dynamic(c.a) && dynamic(c.b)) {
      const std::int64_t x = root(c.a), y = root(c.b);
      if (x != y) parent[std::max(x, y)] = std::min(x, y);  // the root is the smallest body
    }
  }
  // Only bodies with a contact form components; label them by their root, in ascending root order.
  std::vector<std::int64_t> label(n, -1), bodies_of(n, 0);
  std::vector<char> touched(n, 0);
  for (const Contact& c : contacts) {
    if (dynamic(c.a)) touched[c.a] = 1;
    if (dynamic(c.b)) touched[c.b] = 1;
  }
  Components out;
  std::int64_t count = 0;
  for (std::int64_t k = 0; k < n; ++k)
    if (touched[k] && root(k) == k) label[k] = count++;
  out.body_start.assign(count + 1, 0);
  out.contact_start.assign(count + 1, 0);
  for (std::int64_t k = 0; k < n; ++k)
    if (touched[k]) ++out.body_start[label[root(k)] + 1];
  const auto component_of = [&](const Contact& c) { return label[root(dynamic(c.a) ? c.a : c.b)]; };
  for (const Contact& c : contacts) ++out.contact_start[component_of(c) + 1];
  for (std::int64_t c = 0; c < count; ++c) {
    out.body_start[c + 1] += out.body_start[c];
    out.contact_start[c + 1] += out.contact_start[c];
  }
  out.body_list.resize(out.body_start.back());
  out.contact_list.resize(out.contact_start.back());
  std::vector<std::int64_t> fill(out.body_start.begin(), out.body_start.end() - 1);
  for (std::int64_t k = 0; k < n; ++k)
    if (touched[k]) out.body_list[fill[label[root(k)]]++] = k;
  fill.assign(out.contact_start.begin(), out.contact_start.end() - 1);
  for (std::size_t i = 0; i < contacts.size(); ++i)
    out.contact_list[fill[component_of(contacts[i])]++] = static_cast<std::int64_t>(i);
  return out;
}

}  // namespace percussion::rigid
