// Reading and checking a rigid-impact scene.
#include "percussion/methods/rigid/scene.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

#include "percussion/core/error.hpp"
#include "percussion/core/json_checker.hpp"
#include "percussion/geometry/cell_list.hpp"

namespace percussion::rigid {

namespace {

// A vector of exactly `dim` numbers (2D scenes give 2), as a 3-vector with z = 0 in 2D.
Eigen::Vector3d vector_of(const JsonChecker& c, int dim) {
  const auto items = c.as_array();
  if (static_cast<int>(items.size()) != dim) {
    c.fail("expected " + std::to_string(dim) + " numbers (\"dimension\": " + std::to_string(dim) + "), got " +
           JsonChecker::describe(c.value()));
  }
  Eigen::Vector3d v = Eigen::Vector3d::Zero();
  for (int i = 0; i < dim; ++i) v[i] = items[i].as_number();
  return v;
}

Eigen::Vector3d vector_or(const JsonChecker& c, const std::string& key, int dim, const Eigen::Vector3d& fallback) {
  const auto f = c.find(key);
  return f ? vector_of(*f, dim) : fallback;
}

// The ids [first, first + count) of an entry that fall in the slice.
std::pair<std::int64_t, std::int64_t> in_slice(std::int64_t first, std::int64_t count, BodySlice slice) {
  return {std::max(first, slice.begin), std::min(first + count, slice.end)};
}

std::int64_t parse_ball(const JsonChecker& b, int dim, std::int64_t first, BodySlice slice, std::vector<Ball>& out) {
  b.expect_object({"type", "position", "velocity", "mass", "radius", "fixed"});
  Ball ball;
  ball.position = vector_of(b.at("position"), dim);
  ball.velocity = vector_or(b, "velocity", dim, Eigen::Vector3d::Zero());
  ball.mass = b.number_or("mass", 1.0, Range::positive());
  ball.radius = b.number_or("radius", 1.0, Range::positive());
  ball.fixed = b.boolean_or("fixed", false);
  ball.pointer = b.pointer();
  if (first >= slice.begin && first < slice.end) out.push_back(ball);
  return 1;
}

// Balls on a square (cubic) lattice filling [min, max], x fastest: a granular pack in one entry. Only the balls of
// the slice are built; the jitter generator skips the draws of the balls before it.
std::int64_t parse_lattice(const JsonChecker& b, int dim, std::int64_t first, BodySlice slice,
                           std::vector<Ball>& out) {
  b.expect_object({"type", "min", "max", "radius", "mass", "spacing", "velocity", "jitter", "seed"});
  const Eigen::Vector3d lo = vector_of(b.at("min"), dim), hi = vector_of(b.at("max"), dim);
  const double r = b.number("radius", Range::positive());
  const double mass = b.number_or("mass", 1.0, Range::positive());
  const double spacing = b.number_or("spacing", 2.0 * r, Range::at_least(2.0 * r));
  const Eigen::Vector3d velocity = vector_or(b, "velocity", dim, Eigen::Vector3d::Zero());
  const double jitter = b.number_or("jitter", 0.0, Range::non_negative());
  std::mt19937_64 rng(static_cast<std::uint64_t>(b.integer_or("seed", 0, Range::non_negative())));
  std::int64_t count[3] = {1, 1, 1};
  for (int i = 0; i < dim; ++i) {
    if (!(hi[i] - lo[i] >= 2.0 * r)) b.fail_at("max", "the region is narrower than one ball along axis " +
                                                          std::to_string(i));
    count[i] = static_cast<std::int64_t>(std::floor((hi[i] - lo[i] - 2.0 * r) / spacing + 1e-9)) + 1;
  }
  const double total = static_cast<double>(count[0]) * static_cast<double>(count[1]) * static_cast<double>(count[2]);
  if (total > 5e8) b.fail("the lattice has " + JsonChecker::format_number(total) + " balls; at most 5e8");
  const std::int64_t n = count[0] * count[1] * count[2];
  const auto [begin, end] = in_slice(first, n, slice);
  if (jitter > 0 && begin < end) rng.discard(static_cast<unsigned long long>((begin - first) * dim));
  for (std::int64_t id = begin; id < end; ++id) {
    const std::int64_t q = id - first;
    const std::int64_t idx[3] = {q % count[0], q / count[0] % count[1], q / (count[0] * count[1])};
    Ball ball;
    for (int a = 0; a < dim; ++a) ball.position[a] = lo[a] + r + spacing * static_cast<double>(idx[a]);
    ball.velocity = velocity;
    for (int a = 0; a < dim && jitter > 0; ++a) {
      // Uniform in [-jitter, jitter] from the raw generator: the same balls with every standard library.
      ball.velocity[a] += jitter * (2.0 * static_cast<double>(rng() >> 11) * 0x1.0p-53 - 1.0);
    }
    ball.mass = mass;
    ball.radius = r;
    ball.pointer = b.pointer();
    out.push_back(ball);
  }
  return n;
}

// Touching balls along a segment, from `from` to `to` (a row of fixed balls makes a hopper's side).
std::int64_t parse_line(const JsonChecker& b, int dim, std::int64_t first, BodySlice slice, std::vector<Ball>& out) {
  b.expect_object({"type", "from", "to", "radius", "mass", "fixed"});
  const Eigen::Vector3d from = vector_of(b.at("from"), dim), to = vector_of(b.at("to"), dim);
  const double r = b.number("radius", Range::positive());
  const double mass = b.number_or("mass", 1.0, Range::positive());
  const bool fixed = b.boolean_or("fixed", false);
  const double length = (to - from).norm();
  if (length / (2.0 * r) > 5e8) b.fail("the line has more than 5e8 balls");
  const auto count = static_cast<std::int64_t>(std::floor(length / (2.0 * r) + 1e-9)) + 1;
  const auto [begin, end] = in_slice(first, count, slice);
  for (std::int64_t i = begin - first; i < end - first; ++i) {
    Ball ball;
    ball.position = count == 1 ? from : from + (to - from) * (2.0 * r * static_cast<double>(i) / length);
    ball.mass = mass;
    ball.radius = r;
    ball.fixed = fixed;
    ball.pointer = b.pointer();
    out.push_back(ball);
  }
  return count;
}

// Balls may touch but not overlap beyond the contact tolerance, and none may reach behind a wall.
void check_placement(const RigidScene& s, const JsonChecker& root) {
  const double tol = s.impact.contact_tolerance;
  const std::vector<JsonChecker> wall_entries = root.optional_array("walls");
  for (std::size_t w = 0; w < s.walls.size(); ++w) {
    const Wall& wall = s.walls[w];
    for (std::size_t k = 0; k < s.balls.size(); ++k) {
      const Ball& b = s.balls[k];
      const double gap = b.is_box() ? box_wall_gap(b, wall) : (b.position - wall.point).dot(wall.normal) - b.radius;
      if (gap < -tol * body_size(b)) {
        std::ostringstream o;
        o << (b.is_box() ? "box " : "ball ") << k << " (" << b.pointer << ") reaches " << -gap << " behind wall " << w;
        wall_entries[w].fail(o.str());
      }
    }
  }
  if (s.balls.size() < 2) return;
  std::vector<Eigen::Vector3d> points(s.balls.size());
  double r_max = 0;
  for (std::size_t k = 0; k < s.balls.size(); ++k) {
    points[k] = s.balls[k].position;
    r_max = std::max(r_max, s.balls[k].radius);
  }
  geometry::CellList cells;
  cells.build(points, 2.0 * r_max * 1.01);
  // The lowest pair of ids, as the check across ranks (placement.hpp) names it.
  std::pair<std::size_t, std::size_t> worst{SIZE_MAX, SIZE_MAX};
  double overlap = 0;
  cells.for_each_pair(2.0 * r_max, [&](std::size_t i, std::size_t j, double d2) {
    const Ball &a = s.balls[std::min(i, j)], &b = s.balls[std::max(i, j)];
    const double gap = a.is_box() || b.is_box() ? box_pair_gap(a, b) : std::sqrt(d2) - a.radius - b.radius;
    const std::pair<std::size_t, std::size_t> pair{std::min(i, j), std::max(i, j)};
    if (gap < -tol * std::min(body_size(a), body_size(b)) && pair < worst) worst = pair, overlap = -gap;
  });
  if (worst.first != SIZE_MAX) {
    std::ostringstream o;
    const bool box = s.balls[worst.first].is_box() || s.balls[worst.second].is_box();
    o << (box ? "bodies " : "balls ") << worst.first << " (" << s.balls[worst.first].pointer << ") and "
      << worst.second << " (" << s.balls[worst.second].pointer << ") overlap by " << overlap
      << " (more than contact_tolerance " << tol << " x the smaller " << (box ? "size)" : "radius)");
    root.fail_at("bodies", o.str());
  }
}

}  // namespace

RigidScene parse_scene(const Scene& common, BodySlice slice) {
  common.expect_keys({"mode", "dimension", "bodies", "walls", "impact", "gravity", "integrator"});
  RigidScene s;
  static_cast<Scene&>(s) = common;
  const JsonChecker root = s.root();
  root.choice("method", {"rigid"}, "method");
  s.mode = root.choice_or("mode", s.mode, {"resolve", "step"}, "mode");
  s.dimension = static_cast<int>(root.integer_or("dimension", 3, Range::closed(2, 3)));
  const int dim = s.dimension;
  if (s.mode == "step") {
    common.require_time_stepping();
    const JsonChecker time = root.at("time");
    if (!time.has("step")) time.fail("a rigid scene that steps needs \"step\" (s)");
    s.time_step = *s.time.step;
  }
  s.integrator = root.choice_or("integrator", s.integrator, {"symplectic_euler", "velocity_verlet"}, "integrator");
  s.gravity = vector_or(root, "gravity", dim, Eigen::Vector3d::Zero());

  for (const JsonChecker& b : root.array("bodies", 1)) {
    b.expect_object({"type", "position", "velocity", "mass", "radius", "fixed", "min", "max", "spacing", "jitter",
                     "seed", "from", "to", "half_extents", "orientation", "angular_velocity", "density"});
    const std::string type = b.choice("type", {"ball", "ball_lattice", "ball_line", "box"}, "body type");
    BodyEntry e;
    e.first = s.body_count;
    e.pointer = b.pointer();
    if (type == "ball") {
      e.count = parse_ball(b, dim, e.first, slice, s.balls);
    } else if (type == "box") {
      std::vector<Ball> box;
      parse_box(b, dim, box);
      s.boxes.emplace(e.first, box.front());
      if (e.first >= slice.begin && e.first < slice.end) s.balls.push_back(box.front());
      e.count = 1;
    } else if (type == "ball_lattice") {
      e.count = parse_lattice(b, dim, e.first, slice, s.balls);
    } else {
      e.count = parse_line(b, dim, e.first, slice, s.balls);
    }
    if (b.boolean_or("fixed", false)) e.fixed = e.count;
    s.body_count += e.count;
    s.entries.push_back(e);
  }
  s.first_body = std::clamp(slice.begin, std::int64_t{0}, s.body_count);
  for (const JsonChecker& w : root.optional_array("walls")) {
    w.expect_object({"point", "normal"});
    Wall wall;
    wall.point = vector_of(w.at("point"), dim);
    const Eigen::Vector3d n = vector_of(w.at("normal"), dim);
    if (!(n.norm() > 0)) w.fail_at("normal", "must not be zero");
    wall.normal = n / n.norm();  // any length: the direction is what matters
    s.walls.push_back(wall);
  }

  if (const auto c = root.optional_object("impact", {"operator", "order", "seed", "tolerance", "contact_tolerance",
                                                     "restitution", "restitution_model", "anti_locking",
                                                     "friction", "max_reflections", "max_iterations",
                                                     "gather_limit"})) {
    const std::string op =
        c->choice_or("operator", "gauss_seidel", {"gauss_seidel", "generalized_reflections"}, "impact operator");
    s.impact.op = op == "gauss_seidel" ? Operator::gauss_seidel : Operator::generalized_reflections;
    const std::string order =
        c->choice_or("order", "lowest_index", {"lowest_index", "most_violated", "random"}, "constraint order");
    s.impact.order = order == "lowest_index"    ? impact::GaussSeidelOrder::lowest_index
                     : order == "most_violated" ? impact::GaussSeidelOrder::most_violated
                                                : impact::GaussSeidelOrder::random;
    s.impact.seed = static_cast<std::uint64_t>(c->integer_or("seed", 0, Range::non_negative()));
    s.impact.resolve.tolerance = c->number_or("tolerance", s.impact.resolve.tolerance, Range{0.0, 1.0, true, true});
    s.impact.contact_tolerance =
        c->number_or("contact_tolerance", s.impact.contact_tolerance, Range::closed_open(0.0, 0.5));
    s.impact.restitution = c->number_or("restitution", 1.0, Range::closed(0.0, 1.0));
    s.impact.restitution_model =
        c->choice_or("restitution_model", s.impact.restitution_model, {"energetic", "pairwise"}, "restitution model");
    s.impact.anti_locking = c->boolean_or("anti_locking", true);
    s.impact.friction = c->number_or("friction", 0.0, Range::non_negative());
    if (s.impact.restitution < 1.0 && s.impact.restitution_model == "pairwise" &&
        s.impact.op != Operator::gauss_seidel)
      c->fail_at("restitution_model", "\"pairwise\" restitution is Gauss-Seidel's; Generalized Reflections take "
                                      "\"energetic\"");
    s.impact.resolve.max_reflections =
        c->integer_or("max_reflections", s.impact.resolve.max_reflections, Range::at_least(1));
    s.impact.resolve.max_iterations =
        c->integer_or("max_iterations", s.impact.resolve.max_iterations, Range::at_least(1));
    s.impact.gather_limit = c->integer_or("gather_limit", s.impact.gather_limit, Range::at_least(0));
  }
  s.impact.lineality_first = s.mode == "resolve";
  // A whole scene is checked here; a slice is checked across ranks when the method starts (placement.hpp).
  if (s.first_body == 0 && static_cast<std::int64_t>(s.balls.size()) == s.body_count) check_placement(s, root);
  return s;
}

const std::string& entry_pointer(const RigidScene& scene, std::int64_t id) {
  const auto after = std::upper_bound(scene.entries.begin(), scene.entries.end(), id,
                                      [](std::int64_t x, const BodyEntry& e) { return x < e.first; });
  return std::prev(after)->pointer;
}

}  // namespace percussion::rigid
