// Issue 3 acceptance: implicit and explicit bonded DEM break the same bonds on the same small fracture
// scene (three-point bending, inputs/bdem/three_point_bending_small.json): at least 95% overlap of the
// broken-bond sets and the first fracture within 2 frames, with the implicit run at one step per frame
// (200x the explicit step). And the paper's scale consistency (Table 2, notes test T11): the crack starts in the
// same frame at 613 and 1,848 particles. Runs on 1, 2 and 3 ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "percussion/methods/bdem/scene.hpp"
#include "percussion/methods/bdem/explicit_bdem.hpp"
#include "percussion/methods/bdem/implicit_bdem.hpp"
#include "../support/bdem_test_support.hpp"

namespace mpi_fracture_match {

using namespace percussion;
using namespace percussion::test;

namespace {

std::string scene_path(const std::string& name = "three_point_bending_small") {
  const char* dir = std::getenv("PERCUSSION_SOURCE_DIR");
  return std::string(dir ? dir : ".") + "/inputs/bdem/" + name + ".json";
}

struct Fracture {
  long onset_frame = -1;  // first frame that shows a broken bond
  std::vector<std::int64_t> broken;
};

// Advances to the scene's end time, looking at the broken-bond count at every frame.
Fracture run(bdem::BdemMethod& m, const bdem::BdemScene& scene) {
  Fracture f;
  const double frame = scene.output.frame_interval;
  long next_frame = 1;
  while (m.time() < scene.time.end - 1e-9) {
    m.advance();
    if (m.time() < next_frame * frame - 1e-9) continue;
    if (f.onset_frame < 0 && m.totals().bonds_broken > 0) f.onset_frame = next_frame;
    next_frame = static_cast<long>(std::floor(m.time() / frame + 1e-9)) + 1;
  }
  f.broken = broken_bonds(MPI_COMM_WORLD, m);
  return f;
}

}  // namespace

TEST(FractureMatch, ImplicitAndExplicitBreakTheSameBondsInThreePointBending) {
  const bdem::BdemScene implicit_scene = bdem::parse_scene_file(scene_path());
  ASSERT_EQ(implicit_scene.integrator, "implicit");
  bdem::BdemScene explicit_scene = implicit_scene;
  explicit_scene.integrator = "explicit";
  explicit_scene.time.step.reset();  // its own stable step, time.step_factor x critical

  const bdem::Model gi = bdem::model_from_scene(implicit_scene), ge = bdem::model_from_scene(explicit_scene);
  ASSERT_GT(gi.time_step, 150 * ge.time_step);  // the implicit step is far beyond explicit stability
  bdem::ImplicitBdem implicit(implicit_scene, MPI_COMM_WORLD, gi);
  bdem::ExplicitBdem explicit_(explicit_scene, MPI_COMM_WORLD, ge);
  const Fracture fi = run(implicit, implicit_scene), fe = run(explicit_, explicit_scene);

  ASSERT_GT(fe.broken.size(), 20u);  // the crack grew well beyond its first bonds
  ASSERT_GE(fe.onset_frame, 5);      // and not at the first touch
  std::vector<std::int64_t> common, all;
  std::set_intersection(fe.broken.begin(), fe.broken.end(), fi.broken.begin(), fi.broken.end(),
                        std::back_inserter(common));
  std::set_union(fe.broken.begin(), fe.broken.end(), fi.broken.begin(), fi.broken.end(), std::back_inserter(all));
  const double overlap = static_cast<double>(common.size()) / static_cast<double>(all.size());
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    std::printf("broken bonds: explicit %zu, implicit %zu, common %zu, overlap %.3f; first fracture: frame %ld / %ld\n",
                fe.broken.size(), fi.broken.size(), common.size(), overlap, fe.onset_frame, fi.onset_frame);
  EXPECT_GE(overlap, 0.95) << "explicit " << fe.broken.size() << " broken, implicit " << fi.broken.size()
                           << ", common " << common.size();
  EXPECT_LE(std::abs(fe.onset_frame - fi.onset_frame), 2)
      << "first fracture: explicit frame " << fe.onset_frame << ", implicit frame " << fi.onset_frame;
  EXPECT_LE(max_unit_error(MPI_COMM_WORLD, implicit), 1e-12);
}

TEST(FractureMatch, ThreePointBendingCracksInTheSameFrameAtTwoResolutions) {
  // The paper's Table 2: its bonded DEM fractures at frames 23, 25 and 25 at 532, 1.8K and 18K particles, where
  // FEM and MPM do not agree with themselves. The stress criterion divides the bond forces by the bond's cross
  // section (π r²), so a finer beam under the same load reaches its strength at the same time.
  std::vector<long> onset;
  for (const char* name : {"three_point_bending_small", "three_point_bending_mid"}) {
    bdem::BdemScene scene = bdem::parse_scene_file(scene_path(name));
    ASSERT_EQ(scene.integrator, "implicit");
    scene.time.end = 12 * scene.output.frame_interval;  // the crack starts at frame 8-9 (docs/benchmarks)
    const bdem::Model g = bdem::model_from_scene(scene);
    bdem::ImplicitBdem implicit(scene, MPI_COMM_WORLD, g);
    const Fracture f = run(implicit, scene);
    EXPECT_GT(f.broken.size(), 0u) << name;
    onset.push_back(f.onset_frame);
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::printf("first fracture: frame %ld (613 particles), %ld (1,848)\n", onset[0], onset[1]);
  EXPECT_GE(std::min(onset[0], onset[1]), 5);  // not at the first touch
  EXPECT_LE(std::abs(onset[0] - onset[1]), 1);
}

}  // namespace mpi_fracture_match
