// Scenes by method: the common sections, the registry's verdict on "method", and the published JSON Schemas
// (docs/schema/) that every shipped scene meets and that catch what they promise to, with file and pointer.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "percussion/core/error.hpp"
#include "percussion/core/json_schema.hpp"
#include "percussion/methods/bdem/scene.hpp"
#include "percussion/methods/registry.hpp"

namespace test_scene_schema {

namespace {

using namespace ::percussion;

std::filesystem::path source_dir() {
  if (const char* dir = std::getenv("PERCUSSION_SOURCE_DIR")) return dir;
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
}

const char* kBase = R"({"method": "bdem",
  "materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e7, "tensile_strength": 3e4}],
  "bodies": [{"material": "m", "particle_radius": 0.02, "shape": {"type": "box", "min": [0, 0, 0], "max": [0.2, 0.2, 0.2]}}],
  "time": {"end": 0.01}, "output": {"frame_interval": 0.001}})";

// The message validate_scene gives for `text`, or "" when it passes.
std::string scene_error(const std::string& text) {
  try {
    validate_scene(percussion::parse_scene_text(text, "s.json"));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// The message the schema alone gives for `doc`, or "".
std::string schema_error(const nlohmann::json& doc) {
  try {
    validate_against_schema(doc, "bdem", "s.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(SceneSchema, CommonSectionsParseForAnyMethodName) {
  const percussion::Scene s = percussion::parse_scene_text(
      R"({"method": "later", "time": {"end": 2, "step": 0.1}, "output": {"frame_interval": 0.5},
          "checkpoint": {"every_time": 0.25, "keep": 2}, "anything": 1})", "later.json");
  EXPECT_EQ(s.method, "later");
  EXPECT_EQ(s.time.end, 2);
  ASSERT_TRUE(s.time.step.has_value());
  EXPECT_EQ(*s.time.step, 0.1);
  EXPECT_EQ(s.output.frame_interval, 0.5);
  EXPECT_EQ(s.checkpoint.every_time, 0.25);
  EXPECT_EQ(s.checkpoint.keep, 2);
  EXPECT_EQ(s.document.at("anything"), 1);  // the method's to judge
}

TEST(SceneSchema, RegistryNamesTheMethodsItKnows) {
  ASSERT_FALSE(registered_methods().empty());
  EXPECT_STREQ(registered_methods().front().name, "bdem");
  EXPECT_EQ(scene_error(kBase), "");
  std::string text = kBase;
  text.replace(text.find("\"bdem\""), 6, "\"rigid_bodies\"");
  EXPECT_EQ(scene_error(text), "s.json: /method: unknown method 'rigid_bodies' (registered: bdem, rigid, ipc)");
  EXPECT_EQ(scene_error(R"({"method": "", "time": {"end": 1}, "output": {"frame_interval": 1}})"),
            "s.json: /method: must name a method");
}

TEST(SceneSchema, EveryMethodPublishesItsSchema) {
  for (const MethodType& m : registered_methods()) {
    EXPECT_FALSE(published_schema(m.name).empty()) << m.name;
    EXPECT_TRUE(std::filesystem::exists(source_dir() / "docs/schema" / (std::string(m.name) + ".schema.json")));
  }
  EXPECT_TRUE(published_schema("no_such_method").empty());
}

TEST(SceneSchema, EveryShippedSceneMeetsItsSchema) {
  int scenes = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(source_dir() / "inputs")) {
    if (entry.path().extension() != ".json") continue;
    const percussion::Scene s = percussion::parse_scene_file(entry.path().string());
    EXPECT_NO_THROW(validate_scene(s)) << entry.path();
    ++scenes;
  }
  EXPECT_GE(scenes, 18);
}

TEST(SceneSchema, SchemaReportsTheDeepestPlaceWithItsPointer) {
  const nlohmann::json base = nlohmann::json::parse(kBase);
  EXPECT_EQ(schema_error(base), "");

  nlohmann::json doc = base;
  doc["bodies"][0]["particle_radius"] = -1;
  EXPECT_EQ(schema_error(doc).rfind("s.json: /bodies/0/particle_radius: ", 0), 0u) << schema_error(doc);

  doc = base;
  doc["materials"][0]["colour"] = "red";
  EXPECT_EQ(schema_error(doc).rfind("s.json: /materials/0", 0), 0u) << schema_error(doc);

  doc = base;
  doc["time"]["end"] = "soon";
  EXPECT_EQ(schema_error(doc).rfind("s.json: /time/end: ", 0), 0u) << schema_error(doc);

  doc = base;
  doc.erase("output");
  EXPECT_EQ(schema_error(doc).rfind("s.json: ", 0), 0u);
  EXPECT_NE(schema_error(doc).find("output"), std::string::npos) << schema_error(doc);

  doc = base;
  doc["implicit"] = {{"active_set_rounds", 11}};
  EXPECT_EQ(schema_error(doc).rfind("s.json: /implicit/active_set_rounds: ", 0), 0u) << schema_error(doc);

  doc = base;  // 1e3 is an integer, as the typed readers take it
  doc["checkpoint"] = {{"keep", 1e3}};
  EXPECT_EQ(schema_error(doc), "");
  doc["checkpoint"] = {{"keep", 2.5}};
  EXPECT_EQ(schema_error(doc).rfind("s.json: /checkpoint/keep: ", 0), 0u) << schema_error(doc);
}

// The code's checks and the schema agree: what the typed parser refuses for a range or a type, the schema refuses
// at the same pointer.
TEST(SceneSchema, SchemaAndParserRefuseTheSameRanges) {
  const nlohmann::json base = nlohmann::json::parse(kBase);
  struct Case { const char* pointer; nlohmann::json value; };
  const Case cases[] = {
      {"/materials/0/poisson_ratio", 0.5},     {"/materials/0/restitution", 0},
      {"/bodies/0/bonded", "yes"},              {"/time/step_factor", 1.5},
      {"/bonds/tolerance", 0.5},                {"/contact/skin", -1},
      {"/implicit/hessian", "newton"},          {"/implicit/max_iterations", 0},
      {"/implicit/hessian_lag_contraction", 1}, {"/checkpoint/every_minutes", -1},
      {"/integrator", "leapfrog"},              {"/gravity", nlohmann::json::array({0, -9.81})},
  };
  for (const Case& c : cases) {
    nlohmann::json doc = base;
    doc[nlohmann::json::json_pointer(c.pointer)] = c.value;
    const std::string parser = scene_error(doc.dump());
    const std::string schema = schema_error(doc);
    EXPECT_EQ(parser.rfind(std::string("s.json: ") + c.pointer, 0), 0u) << c.pointer << ": " << parser;
    EXPECT_EQ(schema.rfind(std::string("s.json: ") + c.pointer, 0), 0u) << c.pointer << ": " << schema;
  }
}

}  // namespace

}  // namespace test_scene_schema
