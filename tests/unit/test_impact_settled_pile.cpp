// The impact QPs of a settling granular pile (tests/data/settled_pile_*component.txt, components extracted from
// inputs/rigid/granular_box.json with energetic restitution 0.9, 0.7 and 0.3): their Delassus matrices are nearly
// singular and highly degenerate; TRON stalls where the objective's round-off hides the remaining decrease, and on the
// larger two its restarts stall too, so the active-set finish completes them. The QP must converge with exact
// complementarity, and energetic restitution (notes 003 Alg. J2) must give a feasible blend with the energy the
// model says.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <ostream>
#include <string>
#include <vector>

#include "percussion/physics/impact/contact_qp.hpp"
#include "percussion/physics/impact/gauss_seidel.hpp"
#include "percussion/physics/impact/restitution.hpp"

namespace test_impact_settled_pile {

using namespace percussion::impact;

namespace {

struct Pile {
  ImpactSystem system;
  std::vector<double> v;
};

std::filesystem::path source_dir() {
  if (const char* dir = std::getenv("PERCUSSION_SOURCE_DIR")) return dir;
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
}

Pile load_pile(const std::string& name) {
  std::ifstream in(source_dir() / "tests/data" / name);
  EXPECT_TRUE(in) << "tests/data/" << name << " not found";
  std::string line;
  std::stringstream body;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '#') body << line << '\n';
  }
  int bodies = 0, contacts = 0;
  double mass = 0.0;
  body >> bodies >> contacts >> mass;
  Pile p;
  for (int k = 0; k < bodies; ++k) p.system.add_point_mass(2, mass);
  p.v.resize(static_cast<std::size_t>(2 * bodies));
  for (double& x : p.v) body >> x;
  for (int c = 0; c < contacts; ++c) {
    int a = 0, b = 0;
    double n[2], minus[2];
    body >> a >> b >> n[0] >> n[1];
    minus[0] = -n[0], minus[1] = -n[1];
    if (b >= 0) p.system.add_constraint(a, n, b, minus);
    else p.system.add_constraint(a, n);
  }
  p.system.finish();
  EXPECT_TRUE(body) << "truncated data file";
  return p;
}

double norm(const ImpactSystem& s, const std::vector<double>& v) { return std::sqrt(s.energy_norm_squared(v.data())); }

struct Case {
  std::string file;
  int contacts = 0;
  double restitution = 0.0;  // the run the component was taken from
  bool needs_finish = false;  // TRON with its restarts stops short there: the active-set finish completes the QP
  double energy_ratio = 1.0;  // ‖v_in‖_M / ‖v‖_M is below this (the projection's dissipation, measured)
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.file; }

const Case kPile09{"settled_pile_component.txt", 627, 0.9, false, 0.9};
const Case kPile07{"settled_pile_c07_component.txt", 1223, 0.7, true, 0.99};
const Case kPile03{"settled_pile_c03_component.txt", 1163, 0.3, true, 0.96};

class ImpactSettledPile : public ::testing::TestWithParam<Case> {};
class ImpactSettledPileRestitution : public ::testing::TestWithParam<Case> {};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return "restitution_" + std::to_string(static_cast<int>(std::lround(10 * info.param.restitution)));
}

}  // namespace

TEST_P(ImpactSettledPile, InelasticQpConvergesWithExactKkt) {
  const Pile p = load_pile(GetParam().file);
  ASSERT_EQ(p.system.constraints(), GetParam().contacts);
  std::vector<int> all(static_cast<std::size_t>(p.system.constraints()));
  for (int c = 0; c < p.system.constraints(); ++c) all[c] = c;
  const ImpactQp qp(p.system, all, p.v.data());
  const QpResult r = qp.solve_nonnegative();
  ASSERT_TRUE(r.converged) << r.reason;
  // The stall each case was taken for: the first TRON run stops short; a restart from its iterate, or the finish.
  EXPECT_GE(r.restarts, 1);
  if (GetParam().needs_finish) {
    EXPECT_GE(r.finish_iterations, 1);
  }
  EXPECT_LE(r.residual, 1e-13);
  const double scale = norm(p.system, p.v);
  std::vector<double> g(all.size());
  qp.gradient(r.x.data(), g.data());
  std::vector<double> v = p.v;
  for (int c = 0; c < p.system.constraints(); ++c) {
    ASSERT_GE(r.x[c], 0.0);
    if (r.x[c] > 0.0) {
      EXPECT_LE(std::abs(g[c]), 1e-13 * scale) << "contact " << c;
    }
    p.system.apply(c, r.x[c], v.data());
  }
  // The gradient of the QP is the post-impact slope Nᵀv: every contact separates or rests, to the tolerance.
  for (int c = 0; c < p.system.constraints(); ++c) EXPECT_GE(p.system.slope(c, v.data()), -1e-13 * scale);
  // ½‖v'‖² − ½‖v‖² is the QP's optimal value, and the inelastic projection removes energy.
  EXPECT_NEAR(0.5 * (norm(p.system, v) * norm(p.system, v) - scale * scale), qp.objective(r.x.data()),
              1e-12 * scale * scale);
  EXPECT_LT(norm(p.system, v), GetParam().energy_ratio * scale);
}

TEST_P(ImpactSettledPileRestitution, EnergeticRestitutionBlendsFeasibleEnds) {
  const Pile p = load_pile(GetParam().file);
  const double c = GetParam().restitution, tolerance = 1e-12;
  const ElasticResolver elastic = [&](const ImpactSystem& s, std::vector<double>& v) {
    GaussSeidelOptions o;
    o.resolve.tolerance = tolerance;
    return gauss_seidel(s, v, o);
  };
  RestitutionOptions options;
  options.restitution = c;
  options.tolerance = tolerance;
  std::vector<double> v = p.v;
  const RestitutionResult r = energetic_restitution(p.system, v, elastic, options);
  ASSERT_TRUE(r.terminated) << r.reason;
  const double before = norm(p.system, p.v);
  // Both ends rebuilt from their impulses: v_in is the inelastic projection, v_el keeps the energy.
  std::vector<double> v_in = p.v, v_el = p.v;
  for (int i = 0; i < p.system.constraints(); ++i) {
    p.system.apply(i, r.inelastic.impulses[i], v_in.data());
    p.system.apply(i, r.elastic.impulses[i], v_el.data());
  }
  EXPECT_NEAR(norm(p.system, v_el), before, 1e-12 * before);
  EXPECT_NEAR(norm(p.system, v_in), r.inelastic.norm_after, 1e-13 * before);
  for (std::size_t k = 0; k < v.size(); ++k) EXPECT_NEAR(v[k], (1 - c) * v_in[k] + c * v_el[k], 1e-13 * before);
  for (int i = 0; i < p.system.constraints(); ++i) {
    EXPECT_GE(p.system.slope(i, v_in.data()), -1e-13 * before) << "inelastic end, contact " << i;
    EXPECT_GE(p.system.slope(i, v.data()), -tolerance * before) << "blend, contact " << i;
  }
  // The blend's energy: ‖(1−c)v_in + c v_el‖², below the initial energy by convexity.
  EXPECT_LT(r.norm_after, before);
  EXPECT_GT(r.norm_after, r.inelastic.norm_after);
}

INSTANTIATE_TEST_SUITE_P(Components, ImpactSettledPile, ::testing::Values(kPile09, kPile07, kPile03), case_name);
// The blend on the smallest and on the one whose QP the finish from TAO's iterate completes (the other QP is the same).
INSTANTIATE_TEST_SUITE_P(Components, ImpactSettledPileRestitution, ::testing::Values(kPile09, kPile03), case_name);

// The resting-contact projection of a time step (rigid::project_onto_contacts) accepts a QP whose residual misses
// the QP's own 1e-13 when it is within a tenth of the 1e-10 feasibility tolerance: the velocity it gives must then be
// feasible to that bound, and the projection must remove energy only.
TEST(ImpactSettledPileProjection, ResidualWithinTheFeasibilityToleranceLeavesEveryContactFeasible) {
  const Pile p = load_pile("settled_pile_projection_component.txt");
  ASSERT_EQ(p.system.constraints(), 1530);
  std::vector<int> all(static_cast<std::size_t>(p.system.constraints()));
  for (int c = 0; c < p.system.constraints(); ++c) all[c] = c;
  const ImpactQp qp(p.system, all, p.v.data());
  const QpResult r = qp.solve_nonnegative();
  EXPECT_FALSE(r.converged) << "the case no longer needs the looser acceptance: " << r.reason;
  ASSERT_LE(r.residual, 1e-11) << r.reason;
  const double scale = norm(p.system, p.v);
  std::vector<double> v = p.v;
  for (int c = 0; c < p.system.constraints(); ++c) {
    ASSERT_GE(r.x[c], 0.0);
    p.system.apply(c, r.x[c], v.data());
  }
  double worst = 0.0;
  for (int c = 0; c < p.system.constraints(); ++c) worst = std::min(worst, p.system.slope(c, v.data()));
  EXPECT_GE(worst, -1e-11 * scale);
  EXPECT_LT(norm(p.system, v), scale);
}

}  // namespace test_impact_settled_pile
