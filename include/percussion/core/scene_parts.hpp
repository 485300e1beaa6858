#pragma once
// Building blocks of scene files that several methods share: materials, bodies and the shapes that generate
// them, obstacles, boundary regions, and the bond and contact models of particle methods. Each has its parser,
// which checks every key and range and throws InputError("<file>: <pointer>: <what>").
#include <Eigen/Core>
#include <string>
#include <utility>
#include <vector>

#include "percussion/core/json_checker.hpp"

namespace percussion {

struct Material {
  std::string name;
  double density = 0;           // kg/m^3, > 0
  double youngs_modulus = 0;    // Pa, > 0
  double poisson_ratio = 0.3;   // [0, 0.5)
  double tensile_strength = 0;  // sigma_c, Pa, > 0 (bond breaks when sigma > this)
  double shear_strength = 0;    // tau_c, Pa, > 0 (defaults to tensile_strength)
  double friction = 0.5;        // Coulomb coefficient for contacts, >= 0
  double rolling_friction = 0;  // rolling resistance μ_r: torque up to μ_r |F_n| r, >= 0
  double restitution = 1.0;     // normal coefficient of restitution for contacts, (0, 1]
  double shear_modulus() const { return youngs_modulus / (2.0 * (1.0 + poisson_ratio)); }
};

// Shape filled with hexagonally close-packed spheres of one radius, or a woven cloth of sphere chains.
struct Generator {
  enum class Shape { Box, Cylinder, Sphere, Woven } shape = Shape::Box;
  double particle_radius = 0;  // > 0
  // Box: [min, max]. Cylinder: base centre, axis (unit after parsing), radius, height. Sphere: centre, radius.
  // Woven: min corner, size (x, y), yarn spacing (geometry/woven.hpp).
  Eigen::Vector3d min = Eigen::Vector3d::Zero(), max = Eigen::Vector3d::Zero();
  Eigen::Vector3d center = Eigen::Vector3d::Zero();  // sphere centre / cylinder base centre
  Eigen::Vector3d axis = Eigen::Vector3d::UnitZ();   // cylinder
  double radius = 0;                                 // sphere / cylinder radius
  double height = 0;                                 // cylinder
  Eigen::Vector2d size = Eigen::Vector2d::Zero();    // woven: extent along x and y, > 0
  double spacing = 0;                                // woven: requested yarn spacing, > 0
};

struct Body {
  int material = 0;  // index into Scene::materials (names resolved by the parser)
  Generator generator;
  bool bonded = true;  // bond touching neighbours inside this body
  Eigen::Vector3d velocity = Eigen::Vector3d::Zero();
  Eigen::Vector3d angular_velocity = Eigen::Vector3d::Zero();  // rigid spin about the body's centroid
};

// Bond model switches; the notes' [ERRATUM?] readings are the defaults.
struct BondModel {
  double tolerance = 0.02;        // bond pairs with |pi-pj| <= (ri+rj)(1+tolerance)
  bool shear_length_scaled = true;  // V_shear = 1/2 k_t (l0 theta)^2 (units fix) instead of 1/2 k_t theta^2
  bool full_angle_bending = false;  // t <- 2 t_raw (beam-theory stiffness) instead of the paper's half-angle
  bool tensile_only = false;        // only tension counts towards sigma in the fracture test
};

struct ContactModel {
  double stiffness = 0;     // N/m; 0 = automatic: E_max * r_max (notes 2.7)
  double skin = 0;          // m, pair lists' Verlet skin; 0 = automatic: 0.3 r_max, implicit 0.8 r_max (unless woven)
};

struct Obstacle {
  enum class Kind { Plane, Box } kind = Kind::Plane;
  Eigen::Vector3d point = Eigen::Vector3d::Zero();   // plane: a point on it
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ(); // plane: unit normal pointing into the free side
  Eigen::Vector3d min = Eigen::Vector3d::Zero(), max = Eigen::Vector3d::Zero();  // box: particles stay inside
  double friction = 0.5;
  double rolling_friction = 0;
  double restitution = 1.0;
};

// Particles whose centre lies in [min, max] at the start move rigidly: they translate with `velocity` and
// spin with `angular_velocity` about `center` (which travels with them). All zero = clamped.
struct BoundaryCondition {
  Eigen::Vector3d min = Eigen::Vector3d::Zero(), max = Eigen::Vector3d::Zero();
  Eigen::Vector3d velocity = Eigen::Vector3d::Zero();
  Eigen::Vector3d angular_velocity = Eigen::Vector3d::Zero();  // rad/s, world frame
  Eigen::Vector3d center = Eigen::Vector3d::Zero();            // at time 0; default: the region's centre
};

Material parse_material(const JsonChecker& c);
// "materials": at least one, names unique.
std::vector<Material> parse_materials(const JsonChecker& root);
// A body names its material, or gives its index in `materials`.
int resolve_material(const JsonChecker& c, const std::vector<Material>& materials);
Generator parse_shape(const JsonChecker& c);
Body parse_body(const JsonChecker& c, const std::vector<Material>& materials);
Obstacle parse_obstacle(const JsonChecker& c);
BoundaryCondition parse_boundary_condition(const JsonChecker& c);
// "-name value -flag ...": PETSc options given in a scene as one string.
std::vector<std::pair<std::string, std::string>> parse_petsc_options(const JsonChecker& c, const std::string& key);

}  // namespace percussion
