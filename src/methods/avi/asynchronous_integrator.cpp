// Asynchronous variational contact: the event loop, the kicks of springs, gravity and penalty layers, and the
// separating-slab certificates that keep inactive layers off the queue.
#include "percussion/methods/avi/asynchronous_integrator.hpp"

#include <Eigen/Geometry>

#include <algorithm>
#include <cmath>
#include <string>

#include "percussion/core/error.hpp"
#include "percussion/geometry/closest_points.hpp"

namespace percussion::avi {

AsynchronousIntegrator::AsynchronousIntegrator(ContactSettings settings) : settings_(settings) {}

namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw InputError("asynchronous contact: " + what);
}

}  // namespace

int AsynchronousIntegrator::add_vertex(const Vec3& x, const Vec3& v, double mass, double radius) {
  require(x.allFinite() && v.allFinite(), "a vertex's position and velocity must be finite");
  require(mass > 0, "a vertex's mass must be positive (+inf fixes it), not " + std::to_string(mass));
  require(radius >= 0 && std::isfinite(radius), "a vertex's radius must be ≥ 0");
  x_.push_back(x);
  v_.push_back(std::isinf(mass) ? Vec3::Zero() : v);
  t_.push_back(0.0);
  mass_.push_back(mass);
  inverse_mass_.push_back(std::isinf(mass) ? 0.0 : 1.0 / mass);
  radius_.push_back(radius);
  pairs_of_vertex_.emplace_back();
  return static_cast<int>(x_.size()) - 1;
}

void AsynchronousIntegrator::add_spring(int a, int b, double stiffness, double rest_length, double step) {
  require(valid(a) && valid(b) && a != b, "a spring joins two different vertices");
  require(stiffness >= 0 && rest_length >= 0 && step > 0, "a spring needs stiffness ≥ 0, rest length ≥ 0, step > 0");
  springs_.push_back({a, b, stiffness, rest_length, step});
}

void AsynchronousIntegrator::set_gravity(const Vec3& g, double step) {
  gravity_ = g;
  gravity_step_ = step;
}

int AsynchronousIntegrator::add_plane(const Vec3& point, const Vec3& normal) {
  require(point.allFinite() && normal.allFinite() && normal.norm() > 0, "a plane needs a point and a non-zero normal");
  planes_.push_back({point, normal.normalized()});
  return static_cast<int>(planes_.size()) - 1;
}

void AsynchronousIntegrator::add(Pair p) {
  require(!started_, "pairs are added before the run starts");
  for (int k = 0; k < p.count; ++k) {
    require(valid(p.vertices[k]),
            "a contact pair names vertex " + std::to_string(p.vertices[k]) + ", which does not exist");
    for (int m = p.side_a; m < p.count; ++m)
      require(k >= p.side_a || p.vertices[k] != p.vertices[m], "a contact pair's primitives share a vertex");
  }
  require(p.type != PairType::SpherePlane || (p.plane >= 0 && p.plane < static_cast<int>(planes_.size())),
          "a contact pair names a plane that does not exist");
  // μ_p = 1 / (1/min m_A + 1/min m_B): the lightest vertex of each side sets how fast the layers must tick.
  double wa = 0, wb = 0;
  for (int k = 0; k < p.count; ++k) {
    double& w = k < p.side_a ? wa : wb;
    w = std::max(w, inverse_mass_[p.vertices[k]]);
  }
  p.reduced_mass = 1.0 / (wa + wb);
  pairs_.push_back(p);
  for (int k = 0; k < p.count; ++k) pairs_of_vertex_[p.vertices[k]].push_back(static_cast<int>(pairs_.size()) - 1);
}

void AsynchronousIntegrator::add_pair(int a, int b) {
  Pair p;
  p.vertices = {a, b, 0, 0};
  add(p);
}

void AsynchronousIntegrator::add_plane_pair(int plane, int vertex) {
  Pair p;
  p.type = PairType::SpherePlane;
  p.vertices = {vertex, 0, 0, 0};
  p.count = 1;
  p.plane = plane;
  add(p);
}

void AsynchronousIntegrator::add_vertex_triangle_pair(int vertex, int t0, int t1, int t2) {
  Pair p;
  p.type = PairType::VertexTriangle;
  p.vertices = {vertex, t0, t1, t2};
  p.count = 4;
  add(p);
}

void AsynchronousIntegrator::add_edge_edge_pair(int a0, int a1, int b0, int b1) {
  Pair p;
  p.type = PairType::EdgeEdge;
  p.vertices = {a0, a1, b0, b1};
  p.side_a = 2;
  p.count = 4;
  add(p);
}

void AsynchronousIntegrator::start() {
  now_ = 0;
  if (skin_ > 0) rebuild_sphere_pairs();
  certificates_.reset(pairs_.size());
  for (std::size_t s = 0; s < springs_.size(); ++s) {
    Event e{springs_[s].step, EventKind::Spring, static_cast<std::int32_t>(s), 0, 1, 0,
            {static_cast<std::int32_t>(s), 0, 0, 0, 0}};
    queue_.push(e);  // the first kick is at h: the initial velocity is the first half step's
  }
  if (gravity_step_ > 0 && gravity_.squaredNorm() > 0) queue_.push({gravity_step_, EventKind::Gravity, 0, 0, 1, 0});
  for (std::size_t p = 0; p < pairs_.size(); ++p) {
    if (!pairs_[p].live) continue;
    if (!std::isfinite(pairs_[p].reduced_mass) || pairs_[p].reduced_mass <= 0)
      throw InputError("contact pair " + std::to_string(p) + " joins two fixed vertices");
    if (!(distance(static_cast<int>(p)) > 0))
      throw InputError("contact pair " + std::to_string(p) + ": the primitives touch or overlap at t = 0");
    certify(static_cast<int>(p));
  }
  started_ = true;
}

void AsynchronousIntegrator::advance_to(double t) {
  if (!started_) start();
  for (;;) {
    // The earliest of the three queues' tops.
    const Event* next = queue_.empty() ? nullptr : &queue_.top();
    if (!certificates_.empty() && (!next || certificates_.top() < *next)) next = &certificates_.top();
    if (!skins_.empty() && (!next || skins_.top() < *next)) next = &skins_.top();
    if (!next || next->time > t) break;
    const Event e = next->kind == EventKind::Certificate ? certificates_.pop()
                    : next->kind == EventKind::Skin      ? skins_.pop()
                                                         : queue_.pop();
    now_ = e.time;
    switch (e.kind) {
      case EventKind::Spring: spring_event(e); break;
      case EventKind::Gravity: gravity_event(e); break;
      case EventKind::Layer: layer_event(e); break;
      case EventKind::Certificate: certificate_event(e); break;
      case EventKind::Skin: rebuild_sphere_pairs(); break;
    }
  }
  now_ = std::max(now_, t);
}

void AsynchronousIntegrator::sync(int i, double t) {
  x_[i] += (t - t_[i]) * v_[i];
  t_[i] = t;
}

void AsynchronousIntegrator::sync_pair(const Pair& p, double t) {
  for (int k = 0; k < p.count; ++k) sync(p.vertices[k], t);
}

AsynchronousIntegrator::Closest AsynchronousIntegrator::closest(const Pair& p) const {
  const auto x = [&](int k) { return position(p.vertices[k]); };
  Closest c{0, Vec3::Zero(), {1, 0, 0, 0}};
  Vec3 a = x(0), b;
  double radii = 0;
  switch (p.type) {
    case PairType::Spheres:
      b = x(1);
      c.w[1] = -1;
      radii = radius_[p.vertices[0]] + radius_[p.vertices[1]];
      break;
    case PairType::SpherePlane: {
      const Plane& plane = planes_[p.plane];
      c.d = plane.normal.dot(a - plane.point) - radius_[p.vertices[0]];
      c.n = plane.normal;
      return c;
    }
    case PairType::VertexTriangle: {
      const auto w = geometry::point_triangle_closest(a, x(1), x(2), x(3));
      b = w[0] * x(1) + w[1] * x(2) + w[2] * x(3);
      c.w = {1, -w[0], -w[1], -w[2]};
      break;
    }
    case PairType::EdgeEdge: {
      const auto st = geometry::segment_segment_closest(x(0), x(1), x(2), x(3));
      a = (1 - st[0]) * x(0) + st[0] * x(1);
      b = (1 - st[1]) * x(2) + st[1] * x(3);
      c.w = {1 - st[0], st[0], -(1 - st[1]), -st[1]};
      break;
    }
  }
  const Vec3 diff = a - b;
  const double length = diff.norm();
  c.d = length - radii;
  c.n = diff / length;
  return c;
}

double AsynchronousIntegrator::distance(int pair) const { return closest(pairs_[pair]).d; }

void AsynchronousIntegrator::spring_event(const Event& e) {
  ++counters_.spring_events;
  const Spring& s = springs_[e.item];
  sync(s.a, e.time);
  sync(s.b, e.time);
  const Vec3 diff = x_[s.b] - x_[s.a];
  const double length = diff.norm();
  const Vec3 force = s.stiffness * (length - s.rest) / length * diff;  // on a, towards b while stretched
  v_[s.a] += s.step * inverse_mass_[s.a] * force;
  v_[s.b] -= s.step * inverse_mass_[s.b] * force;
  kicked(s.a);
  kicked(s.b);
  Event next = e;
  next.tick = e.tick + 1;
  next.time = static_cast<double>(next.tick) * s.step;
  queue_.push(next);
}

void AsynchronousIntegrator::gravity_event(const Event& e) {
  ++counters_.gravity_events;
  const Vec3 dv = gravity_step_ * gravity_;
  for (std::size_t i = 0; i < x_.size(); ++i) {
    if (inverse_mass_[i] == 0) continue;
    sync(static_cast<int>(i), e.time);
    v_[i] += dv;
  }
  for (std::size_t p = 0; p < pairs_.size(); ++p)
    if (pairs_[p].live) schedule_certificate(static_cast<int>(p));
  if (skin_ > 0)
    for (std::size_t i = 0; i < x_.size(); ++i)
      if (radius_[i] > 0 && inverse_mass_[i] > 0) schedule_skin(static_cast<int>(i));
  Event next = e;
  next.tick = e.tick + 1;
  next.time = static_cast<double>(next.tick) * gravity_step_;
  queue_.push(next);
}

void AsynchronousIntegrator::layer_event(const Event& e) {
  Pair& p = pairs_[e.item];
  if (e.layer > p.deepest || p.clocks[e.layer - 1].version != e.version) {
    ++counters_.stale_events;
    return;
  }
  ++counters_.layer_events;
  LayerClock& clock = p.clocks[e.layer - 1];
  clock.last_tick = e.tick;
  const Closest c = closest(p);
  counters_.min_distance = std::min(counters_.min_distance, c.d);
  if (!(c.d > 0))
    throw NumericalError("asynchronous contact: pair " + std::to_string(e.item) + " crossed (gap " +
                         std::to_string(c.d) + ") at t = " + std::to_string(e.time));
  Vec3 relative = Vec3::Zero();  // of a* against b*
  for (int k = 0; k < p.count; ++k) relative += c.w[k] * v_[p.vertices[k]];
  const double normal_speed = relative.dot(c.n);
  const double slope = settings_.layers.derivative(e.layer, c.d);
  if (slope < 0) {
    const double scale = normal_speed > 0 ? settings_.restitution : 1.0;
    const double impulse = -clock.step * slope * scale;
    Vec3 j = impulse * c.n;
    if (settings_.friction > 0) {
      const Vec3 tangential = relative - normal_speed * c.n;
      const double sliding = tangential.norm();
      double mobility = 0;  // 1 / effective mass of the closest points' relative motion
      for (int k = 0; k < p.count; ++k) mobility += c.w[k] * c.w[k] * inverse_mass_[p.vertices[k]];
      if (sliding > 0) j -= std::min(settings_.friction * impulse, sliding / mobility) / sliding * tangential;
    }
    // Positions are brought up to date only where velocities change, so a vertex's position depends on its kicks
    // alone, not on how often others looked at it.
    sync_pair(p, e.time);
    for (int k = 0; k < p.count; ++k) v_[p.vertices[k]] += c.w[k] * inverse_mass_[p.vertices[k]] * j;
    for (int k = 0; k < p.count; ++k)
      if (inverse_mass_[p.vertices[k]] > 0) kicked(p.vertices[k]);  // after every kick: one reschedule each
  } else if (e.layer == p.deepest && normal_speed > 0) {
    // Pushing nothing while the pair separates: a slab of this layer's reach certifies it and every deeper one.
    p.deepest = e.layer - 1;
    if (find_certificate(e.item, e.layer)) {
      ++clock.version;
      ++counters_.deactivations;
      return;
    }
    p.deepest = e.layer;
  }
  Event next = e;
  next.tick = e.tick + 1;
  next.time = clock.origin + static_cast<double>(next.tick) * clock.step;
  queue_.push(next);
}

void AsynchronousIntegrator::certificate_event(const Event& e) {
  ++counters_.certificate_events;
  certify(e.item);
}

void AsynchronousIntegrator::kicked(int vertex) {
  for (int p : pairs_of_vertex_[vertex]) schedule_certificate(p);
  if (skin_ > 0 && radius_[vertex] > 0) schedule_skin(vertex);
}

void AsynchronousIntegrator::certify(int pair) {
  Pair& p = pairs_[pair];
  while (!find_certificate(pair, p.deepest + 1)) {
    activate(pair, p.deepest + 1);
    if (p.deepest > settings_.max_layers)
      throw NumericalError("asynchronous contact: pair " + std::to_string(pair) + " needs more than " +
                           std::to_string(settings_.max_layers) + " penalty layers (gap " +
                           std::to_string(distance(pair)) + "): its primitives are crossing or adjacent");
  }
}

bool AsynchronousIntegrator::find_certificate(int pair, std::int64_t layer) {
  Pair& p = pairs_[pair];
  const Closest c = closest(p);
  counters_.min_distance = std::min(counters_.min_distance, c.d);
  const double reach = settings_.layers.reach(layer);
  if (c.d <= reach * (1 + 1e-9)) return false;
  geometry::SeparatingSlab slab;
  slab.normal = c.n;
  slab.half = 0.5 * reach;
  if (p.type == PairType::SpherePlane) {
    // A fixed plane does not move: the slab lies on it and leaves all the room to the vertex.
    slab.offset = c.n.dot(planes_[p.plane].point) + slab.half;
  } else {
    // Midway between the closest points (each sphere's surface point for spheres).
    Vec3 a = Vec3::Zero(), b = Vec3::Zero();
    for (int k = 0; k < p.count; ++k) (k < p.side_a ? a : b) += std::abs(c.w[k]) * position(p.vertices[k]);
    if (p.type == PairType::Spheres) {
      a -= radius_[p.vertices[0]] * c.n;
      b += radius_[p.vertices[1]] * c.n;
    }
    slab.offset = 0.5 * c.n.dot(a + b);
  }
  const double exit = slab_exit(p, slab);
  // A slab about to expire saves nothing: activating the layer early is always safe.
  if (exit < settings_.layers.step(layer, p.reduced_mass, settings_.courant)) return false;
  p.slab = slab;
  schedule_certificate(pair);
  return true;
}

void AsynchronousIntegrator::schedule_certificate(int pair) {
  Pair& p = pairs_[pair];
  const double exit = slab_exit(p, p.slab);
  if (std::isinf(exit)) {
    certificates_.erase(pair);
    return;
  }
  // Conservative by a few ulps; an expiry that rounds to now expires now, so the loop always makes progress.
  const double ulps = 64 * std::numeric_limits<double>::epsilon() * std::max(1.0, std::abs(now_));
  const double when = exit <= ulps ? now_ : now_ + (exit - ulps);
  certificates_.set({when, EventKind::Certificate, pair, p.deepest + 1, 0, 0, identity(p)});
}

std::array<std::int32_t, 5> AsynchronousIntegrator::identity(const Pair& p) {
  const std::int32_t second = p.type == PairType::SpherePlane ? -1 - p.plane : p.vertices[1];
  return {static_cast<std::int32_t>(p.type), p.vertices[0], second, p.vertices[2], p.vertices[3]};
}

// Every vertex (sphere) of a convex primitive stays on its side of the slab, so the primitive does: the first to reach
// the slab ends the certificate.
double AsynchronousIntegrator::slab_exit(const Pair& p, const geometry::SeparatingSlab& slab) const {
  double exit = std::numeric_limits<double>::infinity();
  for (int k = 0; k < p.count; ++k) {
    const int i = p.vertices[k];
    exit = std::min(exit, slab.exit_time(k < p.side_a ? +1 : -1, position(i), radius_[i], v_[i]));
  }
  return exit;
}

void AsynchronousIntegrator::activate(int pair, std::int64_t layer) {
  Pair& p = pairs_[pair];
  if (static_cast<std::int64_t>(p.clocks.size()) < layer) {
    p.clocks.resize(static_cast<std::size_t>(layer));
    LayerClock& fresh = p.clocks[layer - 1];
    fresh.step = settings_.layers.step(layer, p.reduced_mass, settings_.courant);
  }
  LayerClock& clock = p.clocks[layer - 1];
  std::int64_t tick = 0;
  if (settings_.aligned_clocks) {
    // The next point of the layer's own lattice j·h: skipping the points the certificate covered is exact.
    tick = static_cast<std::int64_t>(std::ceil(now_ / clock.step));
    if (static_cast<double>(tick) * clock.step < now_) ++tick;
    tick = std::max({tick, clock.last_tick + 1, std::int64_t{1}});
  } else {
    clock.origin = now_;
    clock.last_tick = -1;
  }
  p.deepest = layer;
  counters_.deepest_layer = std::max(counters_.deepest_layer, layer);
  ++counters_.activations;
  queue_.push({clock.origin + static_cast<double>(tick) * clock.step, EventKind::Layer, pair, layer, tick,
               clock.version, identity(p)});
}

AsynchronousState AsynchronousIntegrator::state() const {
  AsynchronousState s;
  s.time = now_;
  s.counters = counters_;
  s.x = x_;
  s.v = v_;
  s.t = t_;
  s.pairs = pairs_;
  s.free_slots = free_slots_;
  s.anchors = anchor_;
  s.events = queue_.events();
  s.events.insert(s.events.end(), certificates_.events().begin(), certificates_.events().end());
  s.events.insert(s.events.end(), skins_.events().begin(), skins_.events().end());
  return s;
}

void AsynchronousIntegrator::restore(AsynchronousState s) {
  if (s.x.size() != x_.size())
    throw InputError("asynchronous contact: the saved state has " + std::to_string(s.x.size()) +
                     " vertices, the scene " + std::to_string(x_.size()));
  now_ = s.time;
  counters_ = s.counters;
  x_ = std::move(s.x);
  v_ = std::move(s.v);
  t_ = std::move(s.t);
  pairs_ = std::move(s.pairs);
  free_slots_ = std::move(s.free_slots);
  anchor_ = std::move(s.anchors);
  for (auto& list : pairs_of_vertex_) list.clear();
  for (std::size_t p = 0; p < pairs_.size(); ++p)
    if (pairs_[p].live)
      for (int k = 0; k < pairs_[p].count; ++k) pairs_of_vertex_[pairs_[p].vertices[k]].push_back(static_cast<int>(p));
  std::vector<Event> lattice;
  certificates_.reset(pairs_.size());
  skins_.reset(x_.size());
  for (const Event& e : s.events) {
    if (e.kind == EventKind::Certificate) certificates_.set(e);
    else if (e.kind == EventKind::Skin) skins_.set(e);
    else lattice.push_back(e);
  }
  queue_.assign(std::move(lattice));
  started_ = true;
}

double AsynchronousIntegrator::kinetic_energy() const {
  double e = 0;
  for (std::size_t i = 0; i < v_.size(); ++i)
    if (inverse_mass_[i] > 0) e += 0.5 * mass_[i] * v_[i].squaredNorm();
  return e;
}

double AsynchronousIntegrator::potential_energy() const {
  double e = 0;
  for (const Spring& s : springs_) {
    const double stretch = (position(s.b) - position(s.a)).norm() - s.rest;
    e += 0.5 * s.stiffness * stretch * stretch;
  }
  for (std::size_t i = 0; i < x_.size(); ++i)
    if (inverse_mass_[i] > 0) e -= mass_[i] * gravity_.dot(position(static_cast<int>(i)));
  for (std::size_t p = 0; p < pairs_.size(); ++p)
    if (pairs_[p].live) e += settings_.layers.barrier_energy(distance(static_cast<int>(p)));
  return e;
}

Vec3 AsynchronousIntegrator::momentum() const {
  Vec3 m = Vec3::Zero();
  for (std::size_t i = 0; i < v_.size(); ++i)
    if (inverse_mass_[i] > 0) m += mass_[i] * v_[i];
  return m;
}

Vec3 AsynchronousIntegrator::angular_momentum() const {
  Vec3 l = Vec3::Zero();
  for (std::size_t i = 0; i < v_.size(); ++i)
    if (inverse_mass_[i] > 0) l += mass_[i] * position(static_cast<int>(i)).cross(v_[i]);
  return l;
}

}  // namespace percussion::avi
