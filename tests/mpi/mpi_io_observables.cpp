// Named observables in a trajectory: /observables/<name> tables of the right type and width, one row per frame,
// the same names on every frame and on resume, the old fixed observables under their names, `info` by name.
// Runs at 1, 2 and 3 ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "../support/io_test_support.hpp"
#include "percussion/core/observable_set.hpp"
#include "percussion/io/h5file.hpp"
#include "percussion/io/inspect.hpp"
#include "percussion/io/trajectory.hpp"

namespace mpi_io_observables {

namespace {

using namespace percussion::test;
using percussion::ObservableSet;

constexpr std::int64_t kParticles = 10;

// Frame k's observables; other ranks pass other values, rank 0's are written.
ObservableSet observables(int k) {
  ObservableSet o;
  const double noise = world_rank() == 0 ? 0.0 : 1000.0;
  o.set("elastic_energy", 0.75 * k - 1.0 / 3.0 + noise);
  o.set("impulse", std::array<double, 3>{1.5 * k, -2.0, 1e-300 * k + noise});
  o.set_count("contacts", 40 + 3 * k + (world_rank() == 0 ? 0 : 7));
  o.set("gap", std::ldexp(1.0, -40 - k));
  return o;
}

FrameContent particles(const FrameFields& fields) {
  FrameContent c;
  c.particles = &fields;
  return c;
}

void write(TrajectoryWriter& w, long step, int k) {
  const SyntheticFrame f = make_frame(kParticles, k % 2);
  const FrameFields fields = f.fields();
  w.write_frame(step, 0.5 * step, observables(k), particles(fields));
}

bool holds_int(hid_t file, const std::string& name) { return holds_integers(file, "observables/" + name); }

template <class F>
std::string invalid_argument_text(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no std::invalid_argument)";
}

TEST(NamedObservables, RoundTripWithTypesAndResumeDropsLaterRows) {
  TempDir tmp;
  {
    TrajectoryWriter w(MPI_COMM_WORLD, tmp / "out", kParticles);
    for (int k = 0; k < 3; ++k) write(w, 10 * k, k);
  }
  {
    H5File file = H5File::open_read(MPI_COMM_WORLD, tmp / "out/trajectory.h5");
    EXPECT_EQ(members(file.id(), "observables"),
              (std::vector<std::string>{"contacts", "elastic_energy", "gap", "impulse", "step", "time"}));
    EXPECT_EQ(read_all_int(file.id(), "observables/step"), (std::vector<std::int64_t>{0, 10, 20}));
    EXPECT_EQ(read_all_double(file.id(), "observables/time"), (std::vector<double>{0.0, 5.0, 10.0}));
    EXPECT_EQ(read_all_double(file.id(), "observables/elastic_energy"),
              (std::vector<double>{-1.0 / 3.0, 0.75 - 1.0 / 3.0, 1.5 - 1.0 / 3.0}));
    EXPECT_EQ(read_all_double(file.id(), "observables/gap"),
              (std::vector<double>{std::ldexp(1.0, -40), std::ldexp(1.0, -41), std::ldexp(1.0, -42)}));
    int width = 0;
    EXPECT_EQ(read_all_double(file.id(), "observables/impulse", &width),
              (std::vector<double>{0.0, -2.0, 0.0, 1.5, -2.0, 1e-300, 3.0, -2.0, 2e-300}));
    EXPECT_EQ(width, 3);
    EXPECT_EQ(shape(file.id(), "observables/impulse"), (std::vector<std::int64_t>{3, 3}));
    EXPECT_EQ(shape(file.id(), "observables/gap"), (std::vector<std::int64_t>{3}));
    EXPECT_EQ(read_all_int(file.id(), "observables/contacts"), (std::vector<std::int64_t>{40, 43, 46}));
    EXPECT_TRUE(holds_int(file.id(), "contacts"));
    EXPECT_TRUE(holds_int(file.id(), "step"));
    EXPECT_FALSE(holds_int(file.id(), "gap"));
    EXPECT_FALSE(holds_int(file.id(), "impulse"));
  }
  {
    // Continue after step 10: frame 2's rows go, the continued frame follows the kept ones.
    TrajectoryWriter w(MPI_COMM_WORLD, tmp / "out", kParticles, /*resume_step=*/15);
    EXPECT_EQ(w.frames(), 2);
    write(w, 12, 5);
  }
  H5File file = H5File::open_read(MPI_COMM_WORLD, tmp / "out/trajectory.h5");
  EXPECT_EQ(read_all_int(file.id(), "observables/step"), (std::vector<std::int64_t>{0, 10, 12}));
  EXPECT_EQ(read_all_int(file.id(), "observables/contacts"), (std::vector<std::int64_t>{40, 43, 55}));
  EXPECT_EQ(read_all_double(file.id(), "observables/elastic_energy"),
            (std::vector<double>{-1.0 / 3.0, 0.75 - 1.0 / 3.0, 3.75 - 1.0 / 3.0}));
  EXPECT_EQ(shape(file.id(), "observables/impulse"), (std::vector<std::int64_t>{3, 3}));
  EXPECT_EQ(members(file.id(), "frames"), (std::vector<std::string>{"000000", "000001", "000002"}));
}

TEST(NamedObservables, AMissingNewOrRetypedNameThrowsAndWritesNothing) {
  TempDir tmp;
  const SyntheticFrame f = make_frame(kParticles, 0);
  const FrameFields fields = f.fields();
  TrajectoryWriter w(MPI_COMM_WORLD, tmp / "out", kParticles);
  write(w, 0, 0);

  ObservableSet missing = observables(1);
  ObservableSet fewer;
  for (const auto& o : missing.values())
    if (o.name != "gap") fewer.set(o.name, 0.0);
  fewer.set("impulse", std::array<double, 3>{});
  fewer.set_count("contacts", 1);
  std::string text = invalid_argument_text([&] { w.write_frame(5, 1.0, fewer, particles(fields)); });
  EXPECT_NE(text.find("observable \"gap\" is missing"), std::string::npos) << text;
  EXPECT_NE(text.find("step 5"), std::string::npos) << text;

  ObservableSet more = observables(1);
  more.set("heat", 2.0);
  text = invalid_argument_text([&] { w.write_frame(5, 1.0, more, particles(fields)); });
  EXPECT_NE(text.find("observable \"heat\" is new"), std::string::npos) << text;

  ObservableSet retyped = observables(1);
  retyped.set("contacts", 3.5);  // a count became a float
  text = invalid_argument_text([&] { w.write_frame(5, 1.0, retyped, particles(fields)); });
  EXPECT_NE(text.find("\"contacts\" is a float scalar, earlier frames have a count scalar"), std::string::npos)
      << text;

  ObservableSet reserved;
  reserved.set("time", 1.0);
  text = invalid_argument_text([&] { w.write_frame(5, 1.0, reserved, particles(fields)); });
  EXPECT_NE(text.find("\"time\" is reserved"), std::string::npos) << text;

  // Nothing of the rejected frames reached the file; the writer goes on.
  EXPECT_EQ(w.frames(), 1);
  write(w, 7, 1);
  w.close();
  H5File file = H5File::open_read(MPI_COMM_WORLD, tmp / "out/trajectory.h5");
  EXPECT_EQ(members(file.id(), "frames"), (std::vector<std::string>{"000000", "000001"}));
  EXPECT_EQ(read_all_int(file.id(), "observables/step"), (std::vector<std::int64_t>{0, 7}));
  EXPECT_FALSE(exists(file.id(), "observables/heat"));
  EXPECT_EQ(read_all_double(file.id(), "observables/gap").size(), 2u);
}

TEST(NamedObservables, AResumedTrajectoryKeepsItsNames) {
  TempDir tmp;
  {
    TrajectoryWriter w(MPI_COMM_WORLD, tmp / "out", kParticles);
    write(w, 0, 0);
    write(w, 10, 1);
  }
  const SyntheticFrame f = make_frame(kParticles, 0);
  const FrameFields fields = f.fields();
  {
    TrajectoryWriter w(MPI_COMM_WORLD, tmp / "out", kParticles, /*resume_step=*/10);
    ObservableSet other = observables(2);
    other.set("heat", 1.0);
    const std::string text = invalid_argument_text([&] { w.write_frame(20, 1.0, other, particles(fields)); });
    EXPECT_NE(text.find("\"heat\" is new (the trajectory being continued has: contacts, elastic_energy, gap, impulse"),
              std::string::npos)
        << text;
    write(w, 20, 2);
    EXPECT_EQ(w.frames(), 3);
  }
  {
    // Resumed before its first frame: nothing is kept, so the run may report other names.
    TrajectoryWriter w(MPI_COMM_WORLD, tmp / "late", kParticles);
    write(w, 5, 0);
  }
  {
    TrajectoryWriter w(MPI_COMM_WORLD, tmp / "late", kParticles, /*resume_step=*/2);
    EXPECT_EQ(w.frames(), 0);
    ObservableSet other;
    other.set("heat", 4.0);
    w.write_frame(3, 1.5, other, particles(fields));
  }
  H5File file = H5File::open_read(MPI_COMM_WORLD, tmp / "late/trajectory.h5");
  EXPECT_EQ(members(file.id(), "observables"), (std::vector<std::string>{"heat", "step", "time"}));
  EXPECT_EQ(read_all_double(file.id(), "observables/heat"), (std::vector<double>{4.0}));
}

TEST(NamedObservables, TheFixedObservablesKeepTheirNamesAndInfoPrintsThemAll) {
  TempDir tmp;
  {
    TrajectoryWriter w(MPI_COMM_WORLD, tmp / "fixed", kParticles);
    write_fixed(w, make_observables(0, 0), make_frame(kParticles, 0).fields());
    write_fixed(w, make_observables(4, 1), make_frame(kParticles, 1).fields());
  }
  {
    TrajectoryWriter w(MPI_COMM_WORLD, tmp / "named", kParticles);
    for (int k = 0; k < 3; ++k) write(w, 10 * k, k);
  }
  H5File file = H5File::open_read(MPI_COMM_WORLD, tmp / "fixed/trajectory.h5");
  EXPECT_EQ(members(file.id(), "observables"),
            (std::vector<std::string>{"angular_momentum", "bonds_broken", "contacts", "kinetic", "momentum",
                                      "potential", "step", "time", "total"}));
  EXPECT_TRUE(holds_int(file.id(), "bonds_broken"));
  EXPECT_TRUE(holds_int(file.id(), "contacts"));
  EXPECT_FALSE(holds_int(file.id(), "kinetic"));
  EXPECT_EQ(shape(file.id(), "observables/momentum"), (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(read_all_double(file.id(), "observables/momentum"), (std::vector<double>{0.0, 0.2, 0.3, 0.1, 0.2, 0.3}));
  EXPECT_EQ(read_all_int(file.id(), "observables/bonds_broken"), (std::vector<std::int64_t>{0, 3}));
  if (world_rank() != 0) return;
  std::ostringstream out;
  print_info(tmp / "named/trajectory.h5", out);
  const std::string t = out.str();
  EXPECT_NE(t.find("contacts = 46\n"), std::string::npos) << t;
  EXPECT_NE(t.find("impulse = (3, -2, 2e-300)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("elastic_energy = 1.16667\n"), std::string::npos) << t;
  EXPECT_NE(t.find("gap = "), std::string::npos) << t;
  std::ostringstream fixed;
  print_info(tmp / "fixed/trajectory.h5", fixed);
  EXPECT_NE(fixed.str().find("bonds_broken = 3\n"), std::string::npos) << fixed.str();
  EXPECT_NE(fixed.str().find("momentum = (0.1"), std::string::npos) << fixed.str();
}

}  // namespace

}  // namespace mpi_io_observables
