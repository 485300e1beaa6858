#pragma once
// Asynchronous variational contact (notes 000, Algorithms 1–7 with the recommended 3′, 4′, 5′): point masses and
// spheres joined by springs, under gravity, in contact with each other, with fixed planes and, as the primitives of
// triangle meshes (shells, cloth), vertex against triangle and edge against edge, through nested penalty layers.
// Every potential kicks on its own time lattice j·h; positions drift linearly between events and are brought up to
// date only where a velocity changes. Each candidate pair keeps its layers 1..L active and one separating-slab
// certificate that layer L+1 is not: layers are activated on their own lattice when the certificate fails and
// dropped, deepest first, when they push nothing and the pair separates. Sphere pairs can be found by a broad phase.
#include <Eigen/Core>

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "percussion/geometry/separating_slab.hpp"
#include "percussion/methods/avi/event_queue.hpp"
#include "percussion/physics/avi/penalty_layers.hpp"

namespace percussion::avi {

using Vec3 = Eigen::Vector3d;

struct ContactSettings {
  PenaltyLayers layers;
  double courant = 0.1;      // layer steps h_{p,l} = courant · sqrt(μ_p / (2 l³ k))
  double restitution = 1.0;  // layers push with this fraction of their force while the pair separates
  double friction = 0.0;     // Coulomb μ: each layer's kick carries a tangential impulse up to μ times its own
  bool aligned_clocks = true;  // false starts a layer's clock when it is activated (the paper's counter-example)
  std::int64_t max_layers = 1'000'000;  // guard: a pair this deep is crossing (or adjacent primitives are paired)
};

struct AsynchronousCounters {
  std::int64_t spring_events = 0, gravity_events = 0, layer_events = 0, certificate_events = 0, stale_events = 0;
  std::int64_t activations = 0, deactivations = 0, rebuilds = 0;
  std::int64_t deepest_layer = 0;                               // over the run
  double min_distance = std::numeric_limits<double>::infinity();  // over every layer event and certificate
};

struct LayerClock {
  double step = 0, origin = 0;  // its lattice: origin + tick · step
  std::int64_t last_tick = 0;   // the last lattice point it kicked at
  std::uint32_t version = 0;
};

// A contact pair's state: layers 1..deepest on the queue, each on its clock, and the slab certifying layer deepest + 1.
struct PairState {
  std::int64_t deepest = 0;
  std::vector<LayerClock> clocks;  // index l − 1; kept when a layer drops, so it returns on its own lattice
  geometry::SeparatingSlab slab;
};

enum class PairType : std::uint8_t { Spheres, SpherePlane, VertexTriangle, EdgeEdge };

struct ContactPair : PairState {
  PairType type = PairType::Spheres;
  std::array<int, 4> vertices{};  // side A's, then side B's
  int side_a = 1, count = 2;      // side A has vertices[0, side_a), side B the rest up to count
  int plane = -1;
  double reduced_mass = 0;
  bool live = true;      // a released slot waits for the next pair the broad phase finds
  bool found = false;    // found by the broad phase, which releases it once it is out of reach
};

// Everything that changes as the integrator runs (what a checkpoint holds): restore() takes it into an integrator
// built with the same vertices, springs, planes and pairs, which then continues bit for bit.
struct AsynchronousState {
  double time = 0;
  AsynchronousCounters counters;
  std::vector<Vec3> x, v;
  std::vector<double> t;  // the time each vertex's x is at
  std::vector<ContactPair> pairs;
  std::vector<int> free_slots;
  std::vector<Vec3> anchors;  // where the broad phase last saw each vertex
  std::vector<Event> events;  // lattice events, certificate and skin expiries
};

class AsynchronousIntegrator {
 public:
  explicit AsynchronousIntegrator(ContactSettings settings);

  // mass = +∞ fixes the vertex. Returns the vertex index. Each add_* throws InputError on an impossible argument.
  int add_vertex(const Vec3& x, const Vec3& v, double mass, double radius = 0.0);
  void add_spring(int a, int b, double stiffness, double rest_length, double step);
  void set_gravity(const Vec3& g, double step);
  int add_plane(const Vec3& point, const Vec3& normal);
  void add_pair(int a, int b);                 // two vertices (spheres)
  void add_plane_pair(int plane, int vertex);  // a vertex (sphere) and a fixed plane
  // Mesh primitives (radius 0): they must not share a vertex (adjacent primitives are always in contact).
  void add_vertex_triangle_pair(int vertex, int t0, int t1, int t2);
  void add_edge_edge_pair(int a0, int a1, int b0, int b1);

  // Sphere pairs found and kept by the integrator: two vertices of radius > 0 become a pair while their surfaces are
  // within 2η + skin; the set is rebuilt when a sphere has moved skin/2 from where the last build saw it (an event
  // like a certificate's), so no pair left out can come within its first layer's reach. Call before start().
  void find_sphere_pairs(double skin);
  std::size_t pair_count() const { return pairs_.size() - free_slots_.size(); }

  // Schedules every clock and certifies (or activates the layers of) every pair at t = 0; call once, after adding.
  void start();
  // Processes every event up to and including t, then drifts every vertex to t.
  void advance_to(double t);

  double time() const { return now_; }
  std::size_t vertex_count() const { return mass_.size(); }
  Vec3 position(int i) const { return x_[i] + (now_ - t_[i]) * v_[i]; }
  const Vec3& velocity(int i) const { return v_[i]; }
  double kinetic_energy() const;
  double potential_energy() const;  // springs, gravity and every pair's active layers at the current positions
  Vec3 momentum() const;
  Vec3 angular_momentum() const;   // about the origin
  double distance(int pair) const;  // the pair's gap at the current time
  std::int64_t active_layers(int pair) const { return pairs_[pair].deepest; }
  const AsynchronousCounters& counters() const { return counters_; }

  AsynchronousState state() const;  // after start()
  void restore(AsynchronousState state);

 private:
  struct Spring {
    int a, b;
    double stiffness, rest, step;
  };
  using Pair = ContactPair;
  struct Plane {
    Vec3 point, normal;
  };
  // The closest points a* = Σ w_k x_k (w_k > 0 on side A) and b* (w_k < 0 on side B): gap d (radii off) and the
  // unit normal from b* to a*.
  struct Closest {
    double d;
    Vec3 n;
    std::array<double, 4> w;
  };

  void add(Pair pair);
  bool valid(int vertex) const { return vertex >= 0 && vertex < static_cast<int>(mass_.size()); }
  void sync(int i, double t);
  void sync_pair(const Pair& p, double t);
  double slab_exit(const Pair& p, const geometry::SeparatingSlab& slab) const;
  Closest closest(const Pair& p) const;  // at the current time
  void spring_event(const Event& e);
  void gravity_event(const Event& e);
  void layer_event(const Event& e);
  void certificate_event(const Event& e);
  void kicked(int vertex);  // the certificates that assumed its old velocity are rescheduled
  void certify(int pair);   // Algorithm 4′: certify layer deepest + 1 or activate it, until one certificate holds
  bool find_certificate(int pair, std::int64_t layer);
  void schedule_certificate(int pair);
  void activate(int pair, std::int64_t layer);
  static std::array<std::int32_t, 5> identity(const Pair& p);  // orders a pair's events among simultaneous ones
  // The broad phase (sphere_pairs.cpp).
  void rebuild_sphere_pairs();
  void release(int pair);
  void schedule_skin(int vertex);

  ContactSettings settings_;
  std::vector<Vec3> x_, v_;
  std::vector<double> t_, mass_, inverse_mass_, radius_;
  std::vector<Spring> springs_;
  std::vector<Plane> planes_;
  std::vector<Pair> pairs_;
  std::vector<std::vector<int>> pairs_of_vertex_;
  Vec3 gravity_ = Vec3::Zero();
  double gravity_step_ = 0;
  EventQueue queue_;  // springs, gravity, layers
  CertificateQueue certificates_;
  double skin_ = 0;  // 0: no broad phase
  std::vector<Vec3> anchor_;
  CertificateQueue skins_;  // one expiry per sphere, keyed by vertex
  std::vector<int> free_slots_;
  double now_ = 0;
  bool started_ = false;
  AsynchronousCounters counters_;
};

}  // namespace percussion::avi
