// bdem::BdemScene parsing: a full scene reads into the expected values, every kind of bad input is reported with the file,
// the JSON pointer and the problem, and the shipped inputs/bdem scenes parse.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "percussion/core/error.hpp"
#include "percussion/core/json_checker.hpp"
#include "percussion/methods/bdem/scene.hpp"

namespace test_scene {

namespace {

using namespace ::percussion;

using nlohmann::json;

std::filesystem::path source_dir() {
  if (const char* dir = std::getenv("PERCUSSION_SOURCE_DIR")) return dir;
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
}

// Message of the InputError that parsing throws, or "" if it does not throw.
std::string parse_error(const std::string& text) {
  try {
    bdem::parse_scene_text(text, "t.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const char* kFullScene = R"({
  "description": "every section",
  "method": "bdem",
  "integrator": "implicit",
  "materials": [
    { "name": "rock", "density": 2500, "youngs_modulus": 1e9, "poisson_ratio": 0.25, "tensile_strength": 5e4,
      "shear_strength": 6e4, "friction": 0.4, "restitution": 0.7 },
    { "name": "clay", "density": 1500, "youngs_modulus": 2e6, "tensile_strength": 1e3 }
  ],
  "bodies": [
    { "material": "clay", "shape": { "type": "box", "min": [0, 0, 0], "max": [1, 0.2, 0.3] },
      "particle_radius": 0.01 },
    { "material": 0, "shape": { "type": "cylinder", "base": [1, 2, 3], "axis": [3, 0, 4], "radius": 0.1,
      "height": 0.5 }, "particle_radius": 0.02, "bonded": false, "velocity": [1, 2, 3],
      "angular_velocity": [0, 0, 5] },
    { "material": "rock", "shape": { "type": "sphere", "center": [0, 0, 1], "radius": 0.3 },
      "particle_radius": 0.015 }
  ],
  "bonds": { "tolerance": 0.03, "shear_length_scaled": false, "full_angle_bending": true, "tensile_only": true },
  "contact": { "stiffness": 1e5, "skin": 0.004 },
  "obstacles": [
    { "type": "plane", "point": [0, 0, -1], "normal": [0, 0, 2] },
    { "type": "box", "min": [-5, -5, -5], "max": [5, 5, 5], "friction": 0.1, "restitution": 0.2 }
  ],
  "boundary_conditions": [
    { "region": { "min": [0, 0, 0], "max": [0.05, 0.2, 0.3] } },
    { "region": { "min": [0.95, 0, 0], "max": [1, 0.2, 0.3] }, "velocity": [0.5, 0, 0] }
  ],
  "gravity": [0, 0, -9.81],
  "time": { "end": 0.05, "step": 2.6e-5 },
  "output": { "frame_interval": 0.001 },
  "checkpoint": { "every_steps": 1e3, "every_minutes": 2.5 }
})";

TEST(Scene, FullSceneParsesIntoExpectedValues) {
  const bdem::BdemScene s = bdem::parse_scene_text(kFullScene, "inputs/full.json");
  EXPECT_EQ(s.path, "inputs/full.json");
  EXPECT_EQ(s.source, kFullScene);
  EXPECT_EQ(s.method, "bdem");
  EXPECT_EQ(s.integrator, "implicit");

  ASSERT_EQ(s.materials.size(), 2u);
  EXPECT_EQ(s.materials[0].name, "rock");
  EXPECT_DOUBLE_EQ(s.materials[0].density, 2500);
  EXPECT_DOUBLE_EQ(s.materials[0].youngs_modulus, 1e9);
  EXPECT_DOUBLE_EQ(s.materials[0].poisson_ratio, 0.25);
  EXPECT_DOUBLE_EQ(s.materials[0].shear_strength, 6e4);
  EXPECT_DOUBLE_EQ(s.materials[0].friction, 0.4);
  EXPECT_DOUBLE_EQ(s.materials[0].restitution, 0.7);
  EXPECT_DOUBLE_EQ(s.materials[0].shear_modulus(), 1e9 / 2.5);
  // Defaults: shear strength follows tensile strength; the rest from scene.hpp.
  EXPECT_DOUBLE_EQ(s.materials[1].shear_strength, 1e3);
  EXPECT_DOUBLE_EQ(s.materials[1].poisson_ratio, 0.3);
  EXPECT_DOUBLE_EQ(s.materials[1].friction, 0.5);
  EXPECT_DOUBLE_EQ(s.materials[1].restitution, 1.0);

  ASSERT_EQ(s.bodies.size(), 3u);
  EXPECT_EQ(s.bodies[0].material, 1);  // by name
  EXPECT_EQ(s.bodies[1].material, 0);  // by index
  EXPECT_EQ(s.bodies[2].material, 0);
  EXPECT_EQ(s.bodies[0].generator.shape, Generator::Shape::Box);
  EXPECT_EQ(s.bodies[0].generator.max, Eigen::Vector3d(1, 0.2, 0.3));
  EXPECT_DOUBLE_EQ(s.bodies[0].generator.particle_radius, 0.01);
  EXPECT_TRUE(s.bodies[0].bonded);
  EXPECT_EQ(s.bodies[0].velocity, Eigen::Vector3d::Zero());
  const Generator& cyl = s.bodies[1].generator;
  EXPECT_EQ(cyl.shape, Generator::Shape::Cylinder);
  EXPECT_EQ(cyl.center, Eigen::Vector3d(1, 2, 3));
  EXPECT_NEAR((cyl.axis - Eigen::Vector3d(0.6, 0, 0.8)).norm(), 0, 1e-15);  // normalised
  EXPECT_DOUBLE_EQ(cyl.radius, 0.1);
  EXPECT_DOUBLE_EQ(cyl.height, 0.5);
  EXPECT_FALSE(s.bodies[1].bonded);
  EXPECT_EQ(s.bodies[1].velocity, Eigen::Vector3d(1, 2, 3));
  EXPECT_EQ(s.bodies[1].angular_velocity, Eigen::Vector3d(0, 0, 5));
  EXPECT_EQ(s.bodies[2].generator.shape, Generator::Shape::Sphere);
  EXPECT_EQ(s.bodies[2].generator.center, Eigen::Vector3d(0, 0, 1));
  EXPECT_DOUBLE_EQ(s.bodies[2].generator.radius, 0.3);

  EXPECT_DOUBLE_EQ(s.bonds.tolerance, 0.03);
  EXPECT_FALSE(s.bonds.shear_length_scaled);
  EXPECT_TRUE(s.bonds.full_angle_bending);
  EXPECT_TRUE(s.bonds.tensile_only);
  EXPECT_DOUBLE_EQ(s.contact.stiffness, 1e5);
  EXPECT_DOUBLE_EQ(s.contact.skin, 0.004);

  ASSERT_EQ(s.obstacles.size(), 2u);
  EXPECT_EQ(s.obstacles[0].kind, Obstacle::Kind::Plane);
  EXPECT_EQ(s.obstacles[0].point, Eigen::Vector3d(0, 0, -1));
  EXPECT_EQ(s.obstacles[0].normal, Eigen::Vector3d(0, 0, 1));  // normalised from [0,0,2]
  EXPECT_DOUBLE_EQ(s.obstacles[0].friction, 0.5);
  EXPECT_DOUBLE_EQ(s.obstacles[0].restitution, 1.0);
  EXPECT_EQ(s.obstacles[1].kind, Obstacle::Kind::Box);
  EXPECT_EQ(s.obstacles[1].min, Eigen::Vector3d(-5, -5, -5));
  EXPECT_DOUBLE_EQ(s.obstacles[1].restitution, 0.2);

  ASSERT_EQ(s.boundary_conditions.size(), 2u);
  EXPECT_EQ(s.boundary_conditions[0].velocity, Eigen::Vector3d::Zero());  // default = clamped
  EXPECT_EQ(s.boundary_conditions[1].min, Eigen::Vector3d(0.95, 0, 0));
  EXPECT_EQ(s.boundary_conditions[1].velocity, Eigen::Vector3d(0.5, 0, 0));

  EXPECT_EQ(s.gravity, Eigen::Vector3d(0, 0, -9.81));
  EXPECT_DOUBLE_EQ(s.time.end, 0.05);
  ASSERT_TRUE(s.time.step.has_value());
  EXPECT_DOUBLE_EQ(*s.time.step, 2.6e-5);
  EXPECT_DOUBLE_EQ(s.time.step_factor, 0.2);
  EXPECT_FALSE(s.time.allow_above_critical);  // an explicit step above the critical one is refused by default
  EXPECT_DOUBLE_EQ(s.output.frame_interval, 0.001);
  EXPECT_EQ(s.checkpoint.every_steps, 1000);  // 1e3 is an integral number
  EXPECT_DOUBLE_EQ(s.checkpoint.every_minutes, 2.5);
  EXPECT_EQ(s.checkpoint.keep, 3);
}

TEST(Scene, MinimalSceneGetsDefaults) {
  const bdem::BdemScene s = bdem::parse_scene_text(R"({"method": "bdem",
    "materials": [{"name": "m", "density": 1, "youngs_modulus": 1, "tensile_strength": 1}],
    "bodies": [{"material": "m", "shape": {"type": "sphere", "center": [0,0,0], "radius": 1},
                "particle_radius": 0.1}],
    "time": {"end": 1}, "output": {"frame_interval": 0.1}})",
                                   "min.json");
  EXPECT_EQ(s.integrator, "explicit");
  EXPECT_FALSE(s.time.step.has_value());
  EXPECT_DOUBLE_EQ(s.time.step_factor, 0.2);
  EXPECT_DOUBLE_EQ(s.bonds.tolerance, 0.02);
  EXPECT_TRUE(s.bonds.shear_length_scaled);
  EXPECT_FALSE(s.bonds.full_angle_bending);
  EXPECT_FALSE(s.bonds.tensile_only);
  EXPECT_DOUBLE_EQ(s.contact.stiffness, 0);
  EXPECT_DOUBLE_EQ(s.contact.skin, 0);
  EXPECT_TRUE(s.obstacles.empty());
  EXPECT_TRUE(s.boundary_conditions.empty());
  EXPECT_EQ(s.gravity, Eigen::Vector3d::Zero());
  EXPECT_EQ(s.checkpoint.every_steps, 0);
  EXPECT_DOUBLE_EQ(s.checkpoint.every_minutes, 0);
  EXPECT_EQ(s.checkpoint.keep, 3);
}

// A valid base scene; each bad case changes one thing in it.
json base_scene() {
  return json::parse(R"({
    "method": "bdem",
    "materials": [{"name": "rock", "density": 1000, "youngs_modulus": 1e7, "tensile_strength": 3e4}],
    "bodies": [{"material": "rock", "shape": {"type": "box", "min": [0, 0, 0], "max": [1, 0.2, 0.2]},
                "particle_radius": 0.016}],
    "obstacles": [{"type": "plane", "point": [0, 0, 0], "normal": [0, 0, 1]}],
    "boundary_conditions": [{"region": {"min": [0, 0, 0], "max": [0.04, 0.2, 0.2]}}],
    "time": {"end": 0.05},
    "output": {"frame_interval": 0.001},
    "checkpoint": {"keep": 3}
  })");
}

struct BadCase {
  const char* pointer;    // where to change the base scene
  std::optional<json> value;  // new value there; nullopt = remove the key
  const char* message;    // expected substring of the error
};

void apply(json& doc, const BadCase& c) {
  const json::json_pointer ptr(c.pointer);
  if (c.value) {
    doc[ptr] = *c.value;
  } else {
    doc[ptr.parent_pointer()].erase(ptr.back());
  }
}

TEST(Scene, BaseSceneIsValid) { EXPECT_EQ(parse_error(base_scene().dump()), ""); }

TEST(Scene, ImplicitFormDefaultsToBackwardEuler) {
  json doc = base_scene();
  EXPECT_EQ(bdem::parse_scene_text(doc.dump(), "t.json").implicit.form, "backward_euler");
  doc["implicit"] = json{{"form", "midpoint"}};
  EXPECT_EQ(bdem::parse_scene_text(doc.dump(), "t.json").implicit.form, "midpoint");
}

TEST(Scene, ImplicitStepCutsParseWithTheirDefault) {
  json doc = base_scene();
  EXPECT_EQ(bdem::parse_scene_text(doc.dump(), "t.json").implicit.step_cuts, 3);
  EXPECT_EQ(bdem::parse_scene_text(doc.dump(), "t.json").implicit.max_iterations, 50);
  doc["implicit"] = json{{"step_cuts", 0}};
  EXPECT_EQ(bdem::parse_scene_text(doc.dump(), "t.json").implicit.step_cuts, 0);
}

TEST(Scene, ImplicitFractureCutRatioIsOffByDefault) {
  json doc = base_scene();
  EXPECT_EQ(bdem::parse_scene_text(doc.dump(), "t.json").implicit.fracture_cut_ratio, 0.0);
  doc["implicit"] = json{{"fracture_cut_ratio", 1.5}};
  EXPECT_EQ(bdem::parse_scene_text(doc.dump(), "t.json").implicit.fracture_cut_ratio, 1.5);
}

TEST(Scene, ImplicitPetscOptionsParseIntoNamesAndValues) {
  json doc = base_scene();
  doc["implicit"] = json{{"petsc_options", "  -bdem_pc_type gamg -bdem_ksp_monitor -bdem_pc_gamg_threshold -1 "},
                         {"reuse_preconditioner", false},
                         {"line_search_extrapolation", false},
                         {"line_search_contacts", false},
                         {"contact_refresh", false},
                         {"contact_normal", "current"}};
  const bdem::BdemScene s = bdem::parse_scene_text(doc.dump(), "t.json");
  using Option = std::pair<std::string, std::string>;
  const std::vector<Option> expected = {
      {"-bdem_pc_type", "gamg"}, {"-bdem_ksp_monitor", ""}, {"-bdem_pc_gamg_threshold", "-1"}};
  EXPECT_EQ(s.implicit.petsc_options, expected);
  EXPECT_FALSE(s.implicit.reuse_preconditioner);
  EXPECT_TRUE(bdem::parse_scene_text(base_scene().dump(), "t.json").implicit.reuse_preconditioner);
  EXPECT_FALSE(s.implicit.line_search_extrapolation);
  EXPECT_TRUE(bdem::parse_scene_text(base_scene().dump(), "t.json").implicit.line_search_extrapolation);
  EXPECT_FALSE(s.implicit.line_search_contacts);
  EXPECT_TRUE(bdem::parse_scene_text(base_scene().dump(), "t.json").implicit.line_search_contacts);
  EXPECT_FALSE(s.implicit.contact_refresh);
  EXPECT_TRUE(bdem::parse_scene_text(base_scene().dump(), "t.json").implicit.contact_refresh);
  EXPECT_EQ(s.implicit.contact_normal, "current");
  EXPECT_EQ(bdem::parse_scene_text(base_scene().dump(), "t.json").implicit.contact_normal, "predicted");
}

TEST(Scene, BadInputsAreReportedWithPointerAndReason) {
  const json rock = base_scene()["materials"][0];
  const std::vector<BadCase> cases = {
      // unknown keys, at every level, with the allowed list
      {"/colour", 1,
       "t.json: /colour: unknown key (expected one of: description, method, time, output, checkpoint, balance, "
       "integrator, "
       "materials,"},
      {"/bodies/0/shpe", 1, "t.json: /bodies/0/shpe: unknown key (expected one of: material, shape, "
                            "particle_radius, bonded, velocity, angular_velocity)"},
      {"/bodies/0/shape/radius", 1, "/bodies/0/shape/radius: unknown key (expected one of: type, min, max)"},
      {"/time/dt", 1, "/time/dt: unknown key (expected one of: end, step, step_factor, allow_above_critical)"},
      {"/a~1b", 1, "t.json: /a~1b: unknown key"},  // pointer escaping of "a/b"
      // wrong types
      {"/materials/0/density", "1000", "/materials/0/density: expected a number, got string \"1000\""},
      {"/materials/0/name", 7, "/materials/0/name: expected a string, got number 7"},
      {"/gravity", json::array({0, 0}), "/gravity: expected an array of 3 numbers, got array [0,0]"},
      {"/gravity", json::array({0, "a", 0}), "/gravity/1: expected a number, got string \"a\""},
      {"/bodies/0/bonded", 1, "/bodies/0/bonded: expected true or false, got number 1"},
      {"/checkpoint/every_steps", 2.5, "/checkpoint/every_steps: expected an integer, got number 2.5"},
      {"/bodies/0/shape", "box", "/bodies/0/shape: expected an object, got string \"box\""},
      {"/materials", json::object(), "t.json: /materials: expected an array, got object {}"},
      {"/bodies/0/material", true, "/bodies/0/material: expected a material name or index, got boolean true"},
      {"/time/end", nullptr, "/time/end: expected a number, got null"},
      {"/description", 5, "t.json: /description: expected a string, got number 5"},
      // ranges
      {"/materials/0/youngs_modulus", -3, "t.json: /materials/0/youngs_modulus: must be > 0, got -3"},
      {"/materials/0/poisson_ratio", 0.5, "/materials/0/poisson_ratio: must be in [0, 0.5), got 0.5"},
      {"/materials/0/friction", -0.1, "/materials/0/friction: must be >= 0, got -0.1"},
      {"/materials/0/shear_strength", 0, "/materials/0/shear_strength: must be > 0, got 0"},
      {"/bodies/0/particle_radius", 0, "/bodies/0/particle_radius: must be > 0, got 0"},
      {"/obstacles/0/restitution", 0, "/obstacles/0/restitution: must be in (0, 1], got 0"},
      {"/bonds", json{{"tolerance", 0.5}}, "/bonds/tolerance: must be in [0, 0.5), got 0.5"},
      {"/contact", json{{"skin", -1e-3}}, "/contact/skin: must be >= 0, got -0.001"},
      {"/time/step", -1e-5, "/time/step: must be > 0, got -1e-05"},
      {"/time/step_factor", 1.5, "/time/step_factor: must be in (0, 1], got 1.5"},
      {"/output/frame_interval", 0, "/output/frame_interval: must be > 0, got 0"},
      {"/checkpoint/keep", 0, "/checkpoint/keep: must be in [1, 2147483647], got 0"},
      {"/checkpoint/every_minutes", -1, "/checkpoint/every_minutes: must be >= 0, got -1"},
      {"/bodies/0/shape/max", json::array({1, -0.2, 0.2}),
       "/bodies/0/shape/max: must exceed min in every component, got min [0, 0, 0], max [1, -0.2, 0.2]"},
      {"/boundary_conditions/0/region/max", json::array({0, 0.2, 0.2}),
       "/boundary_conditions/0/region/max: must exceed min in every component"},
      {"/obstacles/0/normal", json::array({0, 0, 0}),
       "/obstacles/0/normal: must be a non-zero finite vector, got [0,0,0]"},
      {"/bodies/0/shape", json{{"type", "cylinder"}, {"base", {0, 0, 0}}, {"axis", {0, 0, 0}}, {"radius", 1},
                               {"height", 1}},
       "/bodies/0/shape/axis: must be a non-zero finite vector"},
      {"/bodies/0/shape", json{{"type", "sphere"}, {"center", {0, 0, 0}}, {"radius", -1}},
       "/bodies/0/shape/radius: must be > 0, got -1"},
      // missing required keys
      {"/materials/0/density", std::nullopt, "t.json: /materials/0: missing required key 'density'"},
      {"/bodies/0/particle_radius", std::nullopt, "/bodies/0: missing required key 'particle_radius'"},
      {"/time", std::nullopt, "t.json: /: missing required key 'time'"},
      {"/time", json{{"step", 1e-5}}, "t.json: /time: missing required key 'end'"},
      {"/boundary_conditions/0/region", std::nullopt, "/boundary_conditions/0: missing required key 'region'"},
      {"/bodies/0/shape/type", std::nullopt, "/bodies/0/shape: missing required key 'type'"},
      // names and choices
      {"/bodies/0/material", "granite", "/bodies/0/material: unknown material 'granite' (defined: rock)"},
      {"/bodies/0/material", 1, "/bodies/0/material: material index 1 out of range (1 defined)"},
      {"/materials/1", rock, "/materials/1/name: duplicate material name 'rock' (also /materials/0)"},
      {"/materials/0/name", "", "/materials/0/name: must not be empty"},
      {"/materials", json::array(), "t.json: /materials: must have at least 1 element, got 0"},
      {"/bodies/0/shape/type", "cone",
       "/bodies/0/shape/type: unknown shape type 'cone' (expected one of: box, cylinder, sphere, woven)"},
      {"/obstacles/0/type", "sphere",
       "/obstacles/0/type: unknown obstacle type 'sphere' (expected one of: plane, box)"},
      {"/method", "fem", "t.json: /method: unknown method 'fem' (expected one of: bdem)"},
      {"/integrator", "rk4", "/integrator: unknown integrator 'rk4' (expected one of: explicit, implicit)"},
      {"/implicit", json{{"form", "trapezoid"}},
       "/implicit/form: unknown form 'trapezoid' (expected one of: backward_euler, midpoint, bdf2)"},
      {"/implicit", json{{"petsc_options", "gamg -bdem_ksp_monitor"}},
       "/implicit/petsc_options: expected PETSc options such as \"-bdem_pc_type gamg\", but \"gamg\" follows no option name"},
      {"/implicit", json{{"petsc_options", "-bdem_pc_type gamg hypre"}},
       "/implicit/petsc_options: expected PETSc options such as \"-bdem_pc_type gamg\", but \"hypre\" follows no"},
      {"/implicit", json{{"reuse_preconditioner", 1}}, "/implicit/reuse_preconditioner: expected"},
      {"/implicit", json{{"contact_normal", "start"}},
       "/implicit/contact_normal: unknown contact_normal 'start' (expected one of: predicted, current)"},
      {"/implicit", json{{"step_cuts", 21}}, "/implicit/step_cuts: must be"},
      {"/implicit", json{{"step_cuts", 1.5}}, "/implicit/step_cuts: expected"},
      {"/implicit", json{{"split_above_iterations", 4}, {"merge_below_iterations", 6}},
       "t.json: /implicit/merge_below_iterations: must not exceed split_above_iterations (4), got 6"},
      {"/implicit", json{{"fracture_cut_ratio", 0.5}},
       "t.json: /implicit/fracture_cut_ratio: must be 0 (off) or above 1 (a stress ratio at which bonds already break), got 0.5"},
      {"/implicit", json{{"fracture_cut_ratio", -2}}, "/implicit/fracture_cut_ratio: must be"},
      {"/implicit", json{{"line_search_extrapolation", "yes"}}, "/implicit/line_search_extrapolation: expected"},
  };
  ASSERT_GE(cases.size(), 20u);
  for (const BadCase& c : cases) {
    json doc = base_scene();
    apply(doc, c);
    const std::string message = parse_error(doc.dump());
    EXPECT_NE(message.find(c.message), std::string::npos)
        << "case " << c.pointer << "\n  expected: " << c.message << "\n  got:      " << message;
  }
}

TEST(Scene, TextLevelErrors) {
  // Not JSON: the parser's position is passed on.
  const std::string bad = parse_error("{\"method\": \"bdem\",\n  \"time\": }");
  EXPECT_NE(bad.find("t.json: invalid JSON: parse error at line 2, column 11"), std::string::npos) << bad;
  EXPECT_NE(parse_error("").find("t.json: invalid JSON: "), std::string::npos);
  EXPECT_NE(parse_error("{} extra").find("t.json: invalid JSON: "), std::string::npos);
  // Repeated keys would silently keep the last value.
  const std::string dup =
      parse_error(R"({"materials": [{"name": "a"}, {"name": "b", "density": 1, "density": 2}], "method": "bdem"})");
  EXPECT_NE(dup.find("t.json: /materials/1/density: key appears more than once in its object"), std::string::npos)
      << dup;
  EXPECT_NE(parse_error(R"({"time": {"end": 1}, "time": {"end": 2}})").find("t.json: /time: key appears more"),
            std::string::npos);
  // The document must be an object.
  EXPECT_NE(parse_error("[1, 2]").find("t.json: /: expected an object, got array [1,2]"), std::string::npos);
  // Literals beyond double range are rejected by the parser, never read as infinity.
  std::string text = base_scene().dump();
  const std::string modulus = "\"youngs_modulus\":10000000.0";
  ASSERT_NE(text.find(modulus), std::string::npos);
  text.replace(text.find(modulus), modulus.size(), "\"youngs_modulus\":1e400");
  EXPECT_NE(parse_error(text).find("t.json: invalid JSON: number overflow parsing '1e400'"), std::string::npos)
      << parse_error(text);
}

TEST(Scene, FileErrorsAndFileRoundTrip) {
  const auto dir = std::filesystem::temp_directory_path() / "percussion_test_scene";
  std::filesystem::create_directories(dir);
  const std::string missing = (dir / "missing.json").string();
  std::filesystem::remove(missing);
  try {
    bdem::parse_scene_file(missing);
    FAIL() << "no error for a missing file";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).find(missing + ": cannot read file"), 0u) << e.what();
  }
  EXPECT_THROW(bdem::parse_scene_file(dir.string()), InputError);  // a directory

  const std::string path = (dir / "scene.json").string();
  std::ofstream(path) << kFullScene;
  const bdem::BdemScene s = bdem::parse_scene_file(path);
  EXPECT_EQ(s.path, path);
  EXPECT_EQ(s.source, kFullScene);
  EXPECT_EQ(s.bodies.size(), 3u);
  std::filesystem::remove_all(dir);
}

// Critical explicit step for equal spheres (notes 2.10): T = r sqrt(2 rho / (3 E)).
double explicit_step(const bdem::BdemScene& s) {
  const Material& m = s.materials[0];
  const double r = s.bodies[0].generator.particle_radius;
  return s.time.step_factor * r * std::sqrt(2 * m.density / (3 * m.youngs_modulus));
}

TEST(Scene, EveryShippedSceneParses) {
  // A scene file edited by hand (or a key renamed in the parser) fails here, not in a user's run.
  std::vector<std::string> failures;
  int scenes = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(source_dir() / "inputs")) {
    if (entry.path().extension() != ".json") continue;
    if (percussion::parse_scene_file(entry.path().string()).method != "bdem") continue;  // test_scene_schema's
    ++scenes;
    try {
      const bdem::BdemScene s = bdem::parse_scene_file(entry.path().string());
      if (s.bodies.empty()) failures.push_back(entry.path().string() + ": no bodies");
    } catch (const std::exception& e) {
      failures.push_back(e.what());
    }
  }
  EXPECT_GE(scenes, 18);  // inputs/bdem holds 18 scenes and inputs/bench one
  for (const std::string& f : failures) ADD_FAILURE() << f;
}

TEST(Scene, ShippedBeamStretchScenesMatchThePaper) {
  for (const char* name : {"beam_snap_small.json", "beam_stretch_small.json", "beam_stretch.json"}) {
    const bdem::BdemScene s = bdem::parse_scene_file((source_dir() / "inputs/bdem" / name).string());
    SCOPED_TRACE(name);
    // Paper Table 1: E = 1e7, explicit step 2.6e-5.
    EXPECT_NEAR(explicit_step(s), 2.6e-5, 0.02 * 2.6e-5);
    EXPECT_DOUBLE_EQ(s.materials[0].tensile_strength / s.materials[0].youngs_modulus, 0.003);
    ASSERT_EQ(s.boundary_conditions.size(), 2u);
    const Generator& beam = s.bodies[0].generator;
    const double r = beam.particle_radius;
    // Clamped left end and driven right end cover the last 2.5 r of the beam and its whole cross-section.
    EXPECT_EQ(s.boundary_conditions[0].velocity, Eigen::Vector3d::Zero());
    EXPECT_NEAR(s.boundary_conditions[0].max.x(), beam.min.x() + 2.5 * r, 1e-12);
    EXPECT_NEAR(s.boundary_conditions[1].min.x(), beam.max.x() - 2.5 * r, 1e-12);
    EXPECT_GT(s.boundary_conditions[1].velocity.x(), 0);
    for (const BoundaryCondition& bc : s.boundary_conditions) {
      EXPECT_TRUE((bc.min.tail<2>().array() < beam.min.tail<2>().array()).all());
      EXPECT_TRUE((bc.max.tail<2>().array() > beam.max.tail<2>().array()).all());
    }
    EXPECT_TRUE(s.obstacles.empty());
    EXPECT_EQ(s.gravity, Eigen::Vector3d::Zero());
    if (std::string(name) == "beam_snap_small.json") continue;  // the fast, wave-driven pull (not in Table 1)
    // Table 1's stretch: one implicit step per 1/60 s frame (the paper's 0.016 s), and a pull slow enough for
    // that step: the breaking strain is reached after several times a wave's transit along the beam.
    ASSERT_TRUE(s.time.step.has_value());
    EXPECT_NEAR(*s.time.step, 0.016, 0.05 * 0.016);
    const Material& m = s.materials[0];
    const double length = beam.max.x() - beam.min.x(), free_length = length - 5 * r;
    const double breaking = m.tensile_strength / m.youngs_modulus * free_length / s.boundary_conditions[1].velocity.x();
    EXPECT_GT(breaking, 4 * length * std::sqrt(m.density / m.youngs_modulus));
    EXPECT_GT(s.time.end, breaking);
    // A crack across the pulled beam's section is fed by the strain energy of the beam around it: with a transient
    // region of fewer than 6 radii one end may stay on.
    EXPECT_GT(s.implicit.fracture_transient, 0);
    EXPECT_GE(s.implicit.fracture_transient_reach, 6.0);
  }
}

TEST(Scene, ShippedDropSceneFallsOntoTheFloor) {
  const bdem::BdemScene s = bdem::parse_scene_file((source_dir() / "inputs/bdem/drop_small.json").string());
  ASSERT_EQ(s.obstacles.size(), 1u);
  const Generator& ball = s.bodies[0].generator;
  EXPECT_EQ(ball.shape, Generator::Shape::Sphere);
  const double gap = s.obstacles[0].normal.dot(ball.center - s.obstacles[0].point) - ball.radius;
  EXPECT_GT(gap, 0);  // starts above the floor ...
  const double v = -s.bodies[0].velocity.z(), g = -s.gravity.z();
  const double impact = (-v + std::sqrt(v * v + 2 * g * gap)) / g;
  EXPECT_LT(impact, 0.5 * s.time.end);  // ... and hits it in the first half of the run
}

TEST(JsonChecker, RangesAndNumbersDescribeThemselves) {
  EXPECT_EQ(Range::positive().describe(), "> 0");
  EXPECT_EQ(Range::at_least(1).describe(), ">= 1");
  EXPECT_EQ(Range::closed_open(0, 0.5).describe(), "in [0, 0.5)");
  EXPECT_EQ(Range::open_closed(0, 1).describe(), "in (0, 1]");
  EXPECT_TRUE(Range::closed_open(0, 0.5).contains(0));
  EXPECT_FALSE(Range::closed_open(0, 0.5).contains(0.5));
  EXPECT_FALSE(Range::open_closed(0, 1).contains(0));
  EXPECT_TRUE(Range::open_closed(0, 1).contains(1));
  EXPECT_EQ(JsonChecker::format_number(0.1), "0.1");
  EXPECT_EQ(JsonChecker::format_number(-3), "-3");
  EXPECT_EQ(JsonChecker::escape_key("a/b~c"), "a~1b~0c");
}

// Message of the InputError `f` throws, or "".
template <class F>
std::string checker_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(JsonChecker, IntegersAndNonFiniteValues) {
  const json doc = {{"a", 1e3}, {"b", -4}, {"c", 18446744073709551615ull}, {"d", 1e19}, {"e", std::nan("")},
                    {"f", {3.0, 0.0, 4.0}}};
  const JsonChecker c(doc, "f.json", "/x");
  EXPECT_EQ(c.integer("a"), 1000);
  EXPECT_EQ(c.integer("b"), -4);
  EXPECT_EQ(checker_error([&] { c.integer("b", Range::non_negative()); }), "f.json: /x/b: must be >= 0, got -4");
  EXPECT_EQ(checker_error([&] { c.integer("c"); }), "f.json: /x/c: integer too large, got 18446744073709551615");
  EXPECT_NE(checker_error([&] { c.integer("d"); }).find("f.json: /x/d: integer too large"), std::string::npos);
  EXPECT_EQ(checker_error([&] { c.number("e"); }), "f.json: /x/e: must be a finite number");
  EXPECT_EQ(c.direction("f"), Eigen::Vector3d(0.6, 0, 0.8));
  EXPECT_EQ(c.integer_or("missing", 7), 7);
  EXPECT_EQ(checker_error([&] { c.integer("missing"); }), "f.json: /x: missing required key 'missing'");
}

}  // namespace

}  // namespace test_scene
