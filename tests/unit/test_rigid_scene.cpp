// A rigid scene builds only the slice of bodies it is asked for (issue 64: nothing of global size on any rank): any
// split of the ids into slices gives, ball for ball, what the whole scene gives, jittered lattices included.
#include <gtest/gtest.h>

#include "percussion/core/error.hpp"
#include "percussion/methods/rigid/scene.hpp"

namespace test_rigid_scene {

using namespace percussion;
using namespace percussion::rigid;

namespace {

const char* kScene = R"({"method": "rigid", "mode": "resolve", "dimension": 3,
  "bodies": [
    {"type": "ball", "position": [-5, 0, 0], "velocity": [1, 0, 0]},
    {"type": "ball_lattice", "min": [0, 0, 0], "max": [5, 4, 3], "radius": 0.5, "jitter": 0.3, "seed": 4},
    {"type": "ball_line", "from": [0, -3, 0], "to": [6, -3, 0], "radius": 0.5, "fixed": true},
    {"type": "ball", "position": [-5, 5, 0], "mass": 2}
  ]})";

}  // namespace

TEST(RigidScene, SlicesRebuildTheWholeScene) {
  const Scene common = parse_scene_text(kScene, "slices.json");
  const RigidScene whole = parse_scene(common);
  // 1 + 5 x 4 x 3 + 7 + 1 balls; the line's 7 are fixed.
  ASSERT_EQ(whole.body_count, 69);
  ASSERT_EQ(static_cast<std::int64_t>(whole.balls.size()), 69);
  ASSERT_EQ(whole.entries.size(), 4u);
  EXPECT_EQ(whole.entries[2].first, 61);
  EXPECT_EQ(whole.entries[2].fixed, 7);
  EXPECT_EQ(entry_pointer(whole, 0), "/bodies/0");
  EXPECT_EQ(entry_pointer(whole, 60), "/bodies/1");
  EXPECT_EQ(entry_pointer(whole, 67), "/bodies/2");
  EXPECT_EQ(entry_pointer(whole, 68), "/bodies/3");
  for (const std::int64_t cut : {std::int64_t{0}, std::int64_t{1}, std::int64_t{17}, std::int64_t{61},
                                 std::int64_t{64}, std::int64_t{69}}) {
    for (const BodySlice slice : {BodySlice{0, cut}, BodySlice{cut, 69}}) {
      const RigidScene part = parse_scene(common, slice);
      EXPECT_EQ(part.body_count, 69);
      ASSERT_EQ(static_cast<std::int64_t>(part.balls.size()), slice.end - slice.begin);
      EXPECT_EQ(part.first_body, slice.begin);
      for (std::int64_t id = slice.begin; id < slice.end; ++id) {
        const Ball& a = part.balls[id - slice.begin];
        const Ball& b = whole.balls[id];
        EXPECT_EQ(a.position, b.position) << id;  // bit for bit: the jitter draws are skipped, not redrawn
        EXPECT_EQ(a.velocity, b.velocity) << id;
        EXPECT_EQ(a.mass, b.mass) << id;
        EXPECT_EQ(a.fixed, b.fixed) << id;
      }
    }
  }
  // The jitter did act: lattice balls move with different velocities.
  EXPECT_NE(whole.balls[1].velocity, whole.balls[2].velocity);
}

TEST(RigidScene, WholeSceneRefusesOverlapsButAnEmptySliceOnlyCounts) {
  const std::string text = R"({"method": "rigid", "mode": "resolve", "dimension": 2, "bodies": [
    {"type": "ball_lattice", "min": [0, 0], "max": [4, 4], "radius": 0.5},
    {"type": "ball", "position": [1.2, 0.5]}]})";
  const Scene common = parse_scene_text(text, "overlap.json");
  try {
    parse_scene(common);
    FAIL() << "an overlap was accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("overlap.json: /bodies: balls ", 0), 0u) << what;
    EXPECT_NE(what.find("(/bodies/0) and 16 (/bodies/1) overlap"), std::string::npos) << what;
  }
  const RigidScene counted = parse_scene(common, BodySlice{0, 0});
  EXPECT_EQ(counted.body_count, 17);
  EXPECT_TRUE(counted.balls.empty());
}

}  // namespace test_rigid_scene
