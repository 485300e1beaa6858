#pragma once
// An IPC elastodynamics scene (docs/schema/ipc.schema.json): meshed elastic bodies in 2D or 3D, analytic planes,
// barrier contact with friction; a static solve or BDF1/BDF2 time stepping, each step a minimisation.
#include <Eigen/Core>
#include <optional>
#include <string>
#include <vector>

#include "percussion/core/scene.hpp"
#include "percussion/core/scene_parts.hpp"

namespace percussion::ipc {

struct ElasticMaterial {
  std::string name;
  std::string model = "neo_hookean";  // | "linear"
  double density = 0;                 // kg/m^3 (2D: per unit thickness)
  double youngs_modulus = 0;          // Pa
  double poisson_ratio = 0.3;         // in (-1, 0.5)
  double shear_damping = 0;           // α of the viscous stress 2αĖ + β tr(Ė) I, Pa·s
  double bulk_damping = 0;            // β, Pa·s
  double lame_lambda() const;
  double lame_mu() const;
};

// Where a body's mesh comes from: a generator or a Gmsh file (path resolved against the scene's directory).
struct MeshSpec {
  enum class Kind { box, disk, ball, file } kind = Kind::box;
  Eigen::Vector3d min = Eigen::Vector3d::Zero(), max = Eigen::Vector3d::Zero();  // box
  Eigen::Vector3d center = Eigen::Vector3d::Zero();                             // disk, ball
  double radius = 0;                                                            // disk, ball
  double element_size = 0;     // generators: target edge length, m
  std::string file;            // file: as resolved
  Eigen::Vector3d translation = Eigen::Vector3d::Zero();  // file: applied after scaling
  double scale = 1.0;                                      // file
};

struct ElasticBody {
  MeshSpec mesh;
  int material = 0;  // index into materials
  int order = 1;     // Lagrange order of the displacement, 1 or 2
  Eigen::Vector3d velocity = Eigen::Vector3d::Zero();          // initial, m/s
  Eigen::Vector3d angular_velocity = Eigen::Vector3d::Zero();  // initial, rad/s about the body's centroid (2D: z)
  std::string pointer;                                         // for messages
};

// Mesh nodes inside [min, max] at the start follow a prescribed rigid motion (all zero: clamped).
struct PrescribedRegion {
  Eigen::Vector3d min = Eigen::Vector3d::Zero(), max = Eigen::Vector3d::Zero();
  Eigen::Vector3d velocity = Eigen::Vector3d::Zero();
};

// A traction (Pa, force per unit boundary area) on boundary faces whose centroid lies inside [min, max].
struct SurfaceLoad {
  Eigen::Vector3d min = Eigen::Vector3d::Zero(), max = Eigen::Vector3d::Zero();
  Eigen::Vector3d traction = Eigen::Vector3d::Zero();
};

struct Plane {
  Eigen::Vector3d point = Eigen::Vector3d::Zero();
  Eigen::Vector3d normal = Eigen::Vector3d::UnitY();  // unit, into free space
};

struct ContactSettings {
  std::optional<double> dhat;               // barrier activation distance, m; absent: 1e-3 × the bounding diagonal
  std::optional<double> barrier_stiffness;  // κ, fixed; absent: IPC's heuristic, then adapted
  double friction = 0;                      // Coulomb coefficient, 0 = frictionless
  double friction_velocity = 1e-3;          // ε_v, m/s: below it static friction is smoothed
  bool self_contact = true;
};

struct NewtonSettings {
  std::optional<double> tolerance;  // ‖p‖∞/Δt (static: ‖p‖∞), m/s; absent: 1e-5 × the bounding diagonal per s
  long max_iterations = 1000;  // impacts between bodies take hundreds while CCD shortens the steps
  std::vector<std::pair<std::string, std::string>> petsc_options;  // "-ipc_..." defaults from the scene
};

struct IpcScene : Scene {
  int dimension = 3;
  std::string integrator = "bdf2";  // "static" | "bdf1" | "bdf2"
  std::vector<ElasticMaterial> materials;
  std::vector<ElasticBody> bodies;
  std::vector<Plane> planes;
  std::vector<PrescribedRegion> prescribed;
  std::vector<SurfaceLoad> loads;
  Eigen::Vector3d gravity = Eigen::Vector3d::Zero();
  ContactSettings contact;
  NewtonSettings newton;
  double time_step = 0;  // time.step (required unless static)
};

// Parses and checks the method's sections; InputError "<file>: <pointer>: <what>" at the first problem (a mesh
// file that does not exist included; its contents are checked when the mesh is read).
IpcScene parse_scene(const Scene& common);

}  // namespace percussion::ipc
