// ipc::IpcScene parsing: a scene reads into the expected values, bad input names the file and JSON pointer, and the
// shipped inputs/ipc scenes parse and meet the published schema's required keys.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "percussion/core/error.hpp"
#include "percussion/core/scene.hpp"
#include "percussion/methods/ipc/scene.hpp"

namespace test_ipc_scene {

namespace {

using namespace ::percussion;

using nlohmann::json;

std::filesystem::path source_dir() {
  if (const char* dir = std::getenv("PERCUSSION_SOURCE_DIR")) return dir;
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
}

json ball_scene() {
  return json::parse(R"({"method": "ipc", "dimension": 2, "integrator": "bdf2",
    "materials": [{"name": "rubber", "density": 1000, "youngs_modulus": 1e5, "poisson_ratio": 0.3,
                   "damping": {"shear": 0.5}}],
    "bodies": [{"material": "rubber", "mesh": {"type": "disk", "center": [0, 0.6], "radius": 0.5,
                "element_size": 0.05}, "velocity": [1, -1.5], "angular_velocity": 2, "order": 2}],
    "obstacles": [{"type": "plane", "point": [0, 0], "normal": [0, 2]}],
    "boundary_conditions": [{"region": {"min": [-1, -1], "max": [1, -0.5]}, "velocity": [0, 0.1]}],
    "loads": [{"region": {"min": [-1, 1], "max": [1, 2]}, "traction": [0, -10]}],
    "gravity": [0, -9.81],
    "contact": {"dhat": 1e-3, "friction": 0.3, "friction_velocity": 1e-4},
    "newton": {"tolerance": 1e-6, "max_iterations": 50, "petsc_options": "-ipc_pc_type lu"},
    "time": {"end": 0.4, "step": 0.01}, "output": {"frame_interval": 0.01}})");
}

ipc::IpcScene parse(const json& doc) { return ipc::parse_scene(parse_scene_text(doc.dump(), "t.json")); }

std::string parse_error(const json& doc) {
  try {
    parse(doc);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(IpcScene, ReadsEveryKey) {
  const ipc::IpcScene s = parse(ball_scene());
  EXPECT_EQ(s.dimension, 2);
  EXPECT_EQ(s.integrator, "bdf2");
  EXPECT_DOUBLE_EQ(s.time_step, 0.01);
  ASSERT_EQ(s.materials.size(), 1u);
  EXPECT_EQ(s.materials[0].model, "neo_hookean");
  EXPECT_DOUBLE_EQ(s.materials[0].shear_damping, 0.5);
  // E = 1e5, ν = 0.3: λ = Eν/((1+ν)(1-2ν)) = 57692.307..., μ = E/(2(1+ν)) = 38461.538...
  EXPECT_NEAR(s.materials[0].lame_lambda(), 57692.30769230769, 1e-8);
  EXPECT_NEAR(s.materials[0].lame_mu(), 38461.53846153846, 1e-8);
  ASSERT_EQ(s.bodies.size(), 1u);
  EXPECT_EQ(s.bodies[0].mesh.kind, ipc::MeshSpec::Kind::disk);
  EXPECT_EQ(s.bodies[0].order, 2);
  EXPECT_DOUBLE_EQ(s.bodies[0].mesh.center.y(), 0.6);
  EXPECT_DOUBLE_EQ(s.bodies[0].velocity.y(), -1.5);
  EXPECT_DOUBLE_EQ(s.bodies[0].angular_velocity.z(), 2.0);
  ASSERT_EQ(s.planes.size(), 1u);
  EXPECT_DOUBLE_EQ(s.planes[0].normal.y(), 1.0);  // normalised
  ASSERT_EQ(s.prescribed.size(), 1u);
  EXPECT_DOUBLE_EQ(s.prescribed[0].velocity.y(), 0.1);
  ASSERT_EQ(s.loads.size(), 1u);
  EXPECT_DOUBLE_EQ(s.loads[0].traction.y(), -10.0);
  EXPECT_DOUBLE_EQ(*s.contact.dhat, 1e-3);
  EXPECT_FALSE(s.contact.barrier_stiffness.has_value());
  EXPECT_DOUBLE_EQ(s.contact.friction, 0.3);
  EXPECT_DOUBLE_EQ(*s.newton.tolerance, 1e-6);
  EXPECT_EQ(s.newton.max_iterations, 50);
  ASSERT_EQ(s.newton.petsc_options.size(), 1u);
  EXPECT_EQ(s.newton.petsc_options[0].first, "-ipc_pc_type");
}

TEST(IpcScene, StaticNeedsNoTime) {
  json doc = ball_scene();
  doc["integrator"] = "static";
  doc.erase("time");
  doc.erase("output");
  EXPECT_EQ(parse(doc).integrator, "static");
  doc["integrator"] = "bdf1";
  EXPECT_NE(parse_error(doc).find("time"), std::string::npos);
}

TEST(IpcScene, BadInputNamesFileAndPointer) {
  struct Case {
    const char* pointer;
    json value;
    const char* expect;
  };
  const Case cases[] = {
      {"/materials/0/youngs_modulus", -1e5, "t.json: /materials/0/youngs_modulus"},
      {"/materials/0/poisson_ratio", 0.5, "/materials/0/poisson_ratio"},
      {"/materials/0/model", "hooke", "/materials/0/model"},
      {"/bodies/0/material", "steel", "unknown material 'steel'"},
      {"/bodies/0/mesh/type", "ball", "\"ball\" is a 3D mesh"},
      {"/bodies/0/mesh/center", json::array({0, 0, 0}), "/bodies/0/mesh/center"},
      {"/bodies/0/mesh/element_size", 1e-9, "at most 1e9"},
      {"/bodies/0/order", 3, "/bodies/0/order"},
      {"/obstacles/0/normal", json::array({0, 0}), "must not be zero"},
      {"/contact/dhat", 0, "/contact/dhat"},
      {"/newton/max_iterations", 0, "/newton/max_iterations"},
      {"/integrator", "newmark", "/integrator"},
      {"/bodies/0/mesh/path", "nowhere.msh", "/bodies/0/mesh"},
  };
  for (const Case& c : cases) {
    json doc = ball_scene();
    doc[json::json_pointer(c.pointer)] = c.value;
    const std::string message = parse_error(doc);
    EXPECT_NE(message.find(c.expect), std::string::npos) << c.pointer << ": " << message;
  }
  json doc = ball_scene();
  doc["bodies"][0]["mesh"] = json{{"type", "file"}, {"path", "missing.msh"}};
  EXPECT_NE(parse_error(doc).find("no mesh file"), std::string::npos) << parse_error(doc);
}

TEST(IpcScene, ShippedScenesParse) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(source_dir() / "inputs" / "ipc")) {
    if (entry.path().extension() != ".json") continue;
    const ipc::IpcScene s = ipc::parse_scene(parse_scene_file(entry.path().string()));
    EXPECT_FALSE(s.bodies.empty()) << entry.path();
    ++count;
  }
  EXPECT_GE(count, 7);
}

}  // namespace

}  // namespace test_ipc_scene
