#pragma once
// A rigid-impact scene (docs/rigid.md, docs/schema/rigid.schema.json): balls in 2D or 3D, boxes in 3D and planar
// walls, resolved once ("mode": "resolve") or stepped in time with an impact resolution every step ("mode": "step").
#include <Eigen/Core>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "percussion/core/scene.hpp"
#include "percussion/physics/impact/gauss_seidel.hpp"

namespace percussion::rigid {

// One body of the scene, after lattices are expanded: its global id is first_body + its index in `balls`. A box
// when half_extents is nonzero (its radius is then its bounding radius, for the broad phase).
struct Ball {
  Eigen::Vector3d position = Eigen::Vector3d::Zero();  // z = 0 in 2D
  Eigen::Vector3d velocity = Eigen::Vector3d::Zero();
  double mass = 1.0;
  double radius = 1.0;
  bool fixed = false;
  Eigen::Vector3d half_extents = Eigen::Vector3d::Zero();
  Eigen::Vector4d orientation = Eigen::Vector4d(0, 0, 0, 1);  // unit, (x, y, z, w): body to world
  Eigen::Vector3d angular_velocity = Eigen::Vector3d::Zero();  // world frame
  bool is_box() const { return half_extents[0] > 0; }
  std::string pointer;  // JSON pointer of the entry it came from, for messages
};

// An entry of `bodies`: the global ids [first, first + count) it stands for (a lattice or line: many), how many are
// fixed, and its JSON pointer, for messages about any of them.
struct BodyEntry {
  std::int64_t first = 0, count = 0, fixed = 0;
  std::string pointer;
};

// The global ids [begin, end) whose balls a rank builds: generated bodies are never expanded beyond a rank's slice.
struct BodySlice {
  std::int64_t begin = 0, end = INT64_MAX;
};

struct Wall {
  Eigen::Vector3d point = Eigen::Vector3d::Zero();
  Eigen::Vector3d normal = Eigen::Vector3d::UnitY();  // unit, into free space
};

enum class Operator { gauss_seidel, generalized_reflections };

struct ImpactSettings {
  Operator op = Operator::gauss_seidel;
  impact::GaussSeidelOrder order = impact::GaussSeidelOrder::lowest_index;
  std::uint64_t seed = 0;
  impact::ResolveOptions resolve;
  // A pair is in contact when its gap is at most contact_tolerance × the smaller radius.
  double contact_tolerance = 1e-9;
  double restitution = 1.0;              // 1: elastic
  std::string restitution_model = "energetic";  // "energetic" (notes Alg. J2) or "pairwise" (J1)
  bool anti_locking = true;              // remove implicit equality constraints (notes Alg. F)
  // Look for them before the operator runs (one resolution), or only when the operator has spent a budget of
  // reflections without finishing (time stepping: the program is costly, and rarely needed, on large components).
  bool lineality_first = true;
  double friction = 0.0;                 // Coulomb μ of the one-way friction post-pass (notes Alg. J3)
  // Components with more moving bodies are resolved by independent-set batches where their bodies live (Gauss–Seidel
  // without energetic restitution or friction, whose programs need the whole component); smaller ones are gathered.
  std::int64_t gather_limit = 100000;
};

struct RigidScene : Scene {
  std::string mode = "step";  // "resolve" | "step"
  int dimension = 3;
  std::int64_t body_count = 0;    // all bodies of the scene
  std::vector<BodyEntry> entries;  // per entry of `bodies`
  std::int64_t first_body = 0;     // the global id of balls[0]
  std::vector<Ball> balls;         // the slice asked for, in id order
  // Every box by global id, on every rank: boxes are explicit entries (the JSON holds them anyway), and the checks
  // across ranks need a ghost box's shape.
  std::map<std::int64_t, Ball> boxes;
  std::vector<Wall> walls;
  ImpactSettings impact;
  Eigen::Vector3d gravity = Eigen::Vector3d::Zero();
  std::string integrator = "symplectic_euler";  // | "velocity_verlet"
  double time_step = 0;  // step mode: time.step
};

// Parses and checks the method's sections, building the balls of `slice` only; InputError "<file>: <pointer>: <what>"
// at the first problem, including (when the slice is the whole scene) balls that overlap beyond the contact tolerance
// or lie behind a wall.
RigidScene parse_scene(const Scene& common, BodySlice slice = {});

// The JSON pointer of the entry that body `id` comes from.
const std::string& entry_pointer(const RigidScene& scene, std::int64_t id);

// box_scene.cpp: a "box" entry of `bodies`; the gaps the placement check needs when a box is involved (negative:
// overlap), and the size the contact tolerance scales (a ball's radius, a box's smallest half extent).
void parse_box(const JsonChecker& entry, int dimension, std::vector<Ball>& out);
double box_wall_gap(const Ball& box, const Wall& wall);
double box_pair_gap(const Ball& a, const Ball& b);  // a or b a box
inline double body_size(const Ball& b) { return b.is_box() ? b.half_extents.minCoeff() : b.radius; }

}  // namespace percussion::rigid
