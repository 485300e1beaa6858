// Block D-ILU with Eisenstat's trick on small sequential SBAIJ matrices: the split operator Ĉ, the right-hand
// side map b ↦ W⁻¹b and the solution map ŷ ↦ W⁻ᵀŷ must agree with the dense W⁻¹ A W⁻ᵀ; on a block chain D-ILU
// is the exact block Cholesky factorisation (Ĉ = I); on a ring it is approximate but Ĉ stays SPD; indefinite
// pivots make it shift; new values on the same pattern are taken with the old pivots; zero blocks of the pattern
// change nothing.
#include <gtest/gtest.h>
#include <petscmat.h>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <array>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include "percussion/solvers/block_cholesky.hpp"
#include "percussion/solvers/eisenstat_dilu.hpp"
#include "../support/block_matrix_support.hpp"

namespace test_eisenstat_dilu {

using percussion::solvers::EisenstatDilu;
using Block = percussion::test::Block6;
using percussion::test::coupled;
using percussion::test::indefinite_chain;
using percussion::test::Sparse;

namespace {

// Also checks what every product must give: u·out as returned, and the same out again (the sweep leaves its
// accumulator zero for the next one).
Eigen::VectorXd split_product(const EisenstatDilu& d, const Eigen::VectorXd& u) {
  Eigen::VectorXd out(u.size()), again(u.size());
  const double dot = d.apply(u.data(), out.data(), false, {}, [](const double*, double*) {});
  EXPECT_NEAR(dot, u.dot(out), 1e-12 * u.norm() * out.norm());
  d.apply(u.data(), again.data(), false, {}, [](const double*, double*) {});
  EXPECT_EQ(again, out);
  return out;
}
Eigen::VectorXd to_split(const EisenstatDilu& d, const Eigen::VectorXd& b) {
  Eigen::VectorXd out(b.size());
  d.to_split(b.data(), out.data());
  return out;
}
Eigen::VectorXd from_split(const EisenstatDilu& d, const Eigen::VectorXd& y) {
  Eigen::VectorXd out(y.size());
  d.from_split(y.data(), out.data());
  return out;
}

// Ĉ u = W⁻¹ A W⁻ᵀ u, with W⁻ᵀ and W⁻¹ the solution and right-hand-side maps, to float rounding.
void expect_split_of(const EisenstatDilu& d, const Eigen::MatrixXd& dense, int trials, double tolerance = 1e-5) {
  for (int trial = 0; trial < trials; ++trial) {
    const Eigen::VectorXd u = Eigen::VectorXd::Random(dense.rows());
    const Eigen::VectorXd expected = to_split(d, dense * from_split(d, u));
    EXPECT_LT((split_product(d, u) - expected).norm(), tolerance * expected.norm());
  }
}

}  // namespace

TEST(EisenstatDilu, IsTheExactBlockCholeskyOnAChain) {
  // A block chain has no fill, so D-ILU's M = (P + L) P⁻¹ (P + Lᵀ) is A itself: Ĉ = I, and the solution map of
  // the split right-hand side solves A y = b. The coupling blocks are not symmetric, so a transposed block
  // (PETSc stores blocks column by column) would show.
  std::mt19937 gen(3);
  const Sparse s = coupled(12, false, gen);
  Mat A = s.petsc();
  EisenstatDilu d;
  EXPECT_EQ(d.factor(A), 0.0);
  EXPECT_EQ(d.rows(), 12);
  const Eigen::MatrixXd dense = s.dense();
  for (int trial = 0; trial < 3; ++trial) {
    const Eigen::VectorXd u = Eigen::VectorXd::Random(72);
    EXPECT_LT((split_product(d, u) - u).norm(), 1e-5 * u.norm());
    const Eigen::VectorXd b = Eigen::VectorXd::Random(72);
    const Eigen::VectorXd exact = dense.llt().solve(b);
    EXPECT_LT((from_split(d, to_split(d, b)) - exact).norm(), 1e-5 * exact.norm());
  }
  expect_split_of(d, dense, 3);
  MatDestroy(&A);
}

TEST(EisenstatDilu, IsASymmetricPositiveDefiniteSplitWhereDiluIsApproximate) {
  // A ring has fill that D-ILU drops: Ĉ ≠ I, but it is still W⁻¹ A W⁻ᵀ, symmetric and positive definite.
  std::mt19937 gen(5);
  const Sparse s = coupled(16, true, gen);
  Mat A = s.petsc();
  EisenstatDilu d;
  EXPECT_EQ(d.factor(A), 0.0);
  expect_split_of(d, s.dense(), 5);
  for (int trial = 0; trial < 5; ++trial) {
    const Eigen::VectorXd x = Eigen::VectorXd::Random(96), y = Eigen::VectorXd::Random(96);
    const Eigen::VectorXd cx = split_product(d, x), cy = split_product(d, y);
    EXPECT_NEAR(y.dot(cx), x.dot(cy), 1e-5 * cx.norm() * y.norm());
    EXPECT_GT(x.dot(cx), 0.0);
    EXPECT_GT((cx - x).norm(), 1e-4 * x.norm());  // really approximate: the ring's fill is missing
    EXPECT_LT((cx - x).norm(), x.norm());          // but a preconditioner: Ĉ is within 1 of I here
  }
  MatDestroy(&A);
}

TEST(EisenstatDilu, Avx2SweepsAgreeWithTheGenericOnes) {
  // The tests above run the AVX2 sweeps where the CPU has them; here they meet the portable Eigen sweeps on the
  // same ring, with and without the coupling term of other ranks' blocks, to float rounding; with either pivots
  // (Gauss–Seidel's set-up has its own AVX2 kernel, and its sweeps skip K̃ = −I).
  if (!percussion::solvers::avx2::supported()) GTEST_SKIP() << "no AVX2/FMA on this CPU";
  std::mt19937 gen(11);
  const Sparse s = coupled(16, true, gen);
  Mat A = s.petsc();
  for (const auto pivots : {EisenstatDilu::Pivots::Incomplete, EisenstatDilu::Pivots::Diagonal}) {
    EisenstatDilu fast(pivots), generic(pivots);
    generic.use_avx2(false);
    ASSERT_EQ(fast.factor(A), 0.0);
    ASSERT_EQ(generic.factor(A), 0.0);
    auto coupling = [](const double* z, double* w) {
      for (int i = 0; i < 96; ++i) w[i] = 0.3 * z[(i + 7) % 96];
    };
    std::vector<PetscInt> every_row(16);  // this coupling touches every row
    for (PetscInt k = 0; k < 16; ++k) every_row[static_cast<std::size_t>(k)] = k;
    for (const bool with_coupling : {false, true}) {
      const Eigen::VectorXd u = Eigen::VectorXd::Random(96);
      Eigen::VectorXd a(96), b(96);
      const double dot_a = fast.apply(u.data(), a.data(), with_coupling, every_row, coupling);
      const double dot_b = generic.apply(u.data(), b.data(), with_coupling, every_row, coupling);
      EXPECT_LT((a - b).norm(), 1e-6 * b.norm());
      EXPECT_NEAR(dot_a, u.dot(a), 1e-12 * u.norm() * a.norm());
      EXPECT_NEAR(dot_b, u.dot(b), 1e-12 * u.norm() * b.norm());
      EXPECT_GT((a - u).norm(), 1e-3 * u.norm());  // not trivially equal: Ĉ is not I on a ring
      EXPECT_LT((from_split(fast, u) - from_split(generic, u)).norm(), 1e-6 * from_split(generic, u).norm());
      EXPECT_LT((to_split(fast, u) - to_split(generic, u)).norm(), 1e-6 * to_split(generic, u).norm());
    }
  }
  MatDestroy(&A);
}

// Gauss–Seidel's pivots are factored four at a time with AVX2: each must be the scalar kernel's to the bit (so the
// AVX2 and portable runs, and an update of a few rows and a full set-up, agree), and a block that is not positive
// definite must be reported in its own lane.
TEST(EisenstatDilu, FourPivotFactorsAreTheScalarOnesToTheBit) {
  if (!percussion::solvers::avx2::supported()) GTEST_SKIP() << "no AVX2/FMA on this CPU";
  using Block = Eigen::Matrix<double, 6, 6, Eigen::RowMajor>;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (int trial = 0; trial < 50; ++trial) {
    std::array<Block, 4> a, m, expected;
    for (auto& block : a) {
      Block g;
      for (double& v : g.reshaped()) v = uniform(rng);
      block = g * g.transpose() + 0.1 * Block::Identity();
    }
    const int broken = trial % 5;  // lane 4 (none) or a lane whose block is indefinite
    if (broken < 4) a[static_cast<std::size_t>(broken)](3, 3) = -1.0;
    const double* in[4] = {a[0].data(), a[1].data(), a[2].data(), a[3].data()};
    double* out[4] = {m[0].data(), m[1].data(), m[2].data(), m[3].data()};
    const int positive = percussion::solvers::avx2::inverse_cholesky_factor4(in, out);
    for (std::size_t lane = 0; lane < 4; ++lane) {
      const bool ok = percussion::solvers::inverse_cholesky_factor<6>(a[lane].data(), expected[lane].data());
      EXPECT_EQ(ok, static_cast<int>(lane) != broken);
      EXPECT_EQ((positive >> lane) & 1, ok ? 1 : 0);
      if (!ok) continue;
      for (int e = 0; e < 36; ++e) EXPECT_EQ(m[lane].data()[e], expected[lane].data()[e]) << "lane " << lane << " entry " << e;
    }
  }
}

TEST(EisenstatDilu, GaussSeidelPivotsGiveTheSplitOfA) {
  // With A's own diagonal blocks as pivots, M = (D + L) D⁻¹ (D + Lᵀ): the split is still W⁻¹ A W⁻ᵀ, and on a chain
  // (where D-ILU is exact) it is not I. Both the AVX2 set-up and the portable one.
  std::mt19937 gen(13);
  const Sparse s = coupled(12, false, gen);
  Mat A = s.petsc();
  for (const bool avx2 : {true, false}) {
    EisenstatDilu d(EisenstatDilu::Pivots::Diagonal);
    d.use_avx2(avx2);
    ASSERT_EQ(d.factor(A), 0.0);
    expect_split_of(d, s.dense(), 3);
    const Eigen::VectorXd u = Eigen::VectorXd::Random(72);
    EXPECT_GT((split_product(d, u) - u).norm(), 1e-3 * u.norm());
  }
  MatDestroy(&A);
}

// A contact refresh changes a few rows: their diagonal blocks, a block that stays nonzero, a contact that closes
// (a zero block of the pattern turns nonzero) and one that opens. update() forms those rows again and copies the
// rest: the operator and both maps are a fresh set-up's to the bit, with the AVX2 set-up and the portable one; a
// row left unflagged shows.
TEST(EisenstatDilu, GaussSeidelUpdateOfChangedRowsIsTheFullSetUp) {
  for (const auto& [avx2, halves] : {std::pair{true, false}, std::pair{false, false}, std::pair{true, true}}) {
    std::mt19937 gen(17);
    Sparse before = coupled(16, true, gen);
    for (int i = 0; i + 4 < before.n; i += 3) before.blocks.emplace_back(i, i + 4, Block::Zero());  // candidates
    before.blocks.emplace_back(9, 14, percussion::test::random_block(gen));  // a contact that will open
    Sparse after = before;
    std::vector<char> changed(16, 0);
    for (auto& [r, c, b] : after.blocks) {
      if (r == c && (r == 3 || r == 9)) b += 2.0 * Block::Identity();          // changed diagonal blocks
      if (r == 6 && c == 10) b = 0.3 * percussion::test::random_block(gen);  // a contact that closes
      if (r == 9 && c == 14) b.setZero();                                     // and one that opens
      if (r == 3 && c == 4) b *= 0.5;                                         // a nonzero block that changes
    }
    for (const int row : {3, 4, 6, 9, 10, 14}) changed[static_cast<std::size_t>(row)] = 1;
    Mat A = before.petsc(), A2 = after.petsc();
    EisenstatDilu updated(EisenstatDilu::Pivots::Diagonal), fresh(EisenstatDilu::Pivots::Diagonal),
        unflagged(EisenstatDilu::Pivots::Diagonal);
    for (EisenstatDilu* d : {&updated, &fresh, &unflagged}) {
      d->use_avx2(avx2);
      d->use_half(halves);
    }
    ASSERT_EQ(updated.factor(A), 0.0);
    ASSERT_EQ(unflagged.factor(A), 0.0);
    ASSERT_TRUE(updated.update(A2, changed));
    ASSERT_EQ(fresh.factor(A2), 0.0);
    changed[9] = 0;  // the opened contact is still flagged by row 14, but not row 9's diagonal block
    ASSERT_TRUE(unflagged.update(A2, changed));
    for (int trial = 0; trial < 3; ++trial) {
      const Eigen::VectorXd u = Eigen::VectorXd::Random(96);
      EXPECT_EQ(split_product(updated, u), split_product(fresh, u));
      EXPECT_EQ(to_split(updated, u), to_split(fresh, u));
      EXPECT_EQ(from_split(updated, u), from_split(fresh, u));
      EXPECT_NE(split_product(unflagged, u), split_product(fresh, u));
    }
    expect_split_of(updated, after.dense(), 2, halves ? 3e-3 : 1e-5);
    MatDestroy(&A);
    MatDestroy(&A2);
  }
}

// size_for() sizes the set-up's storage ahead of it (BlockSystem::set_pattern): a set-up and an update after it, for
// the exact pattern, a larger one (a rank's count includes its columns on other ranks) or a smaller one, are those
// of an object never sized, to the bit, with either kernels, floats or halves.
TEST(EisenstatDilu, GaussSeidelSizedForItsPatternSetsUpTheSame) {
  for (const auto& [avx2, halves] : {std::pair{true, false}, std::pair{false, false}, std::pair{true, true}}) {
    std::mt19937 gen(29);
    Sparse before = coupled(12, true, gen);
    Sparse after = before;
    std::vector<char> changed(12, 0);
    for (auto& [r, c, b] : after.blocks)
      if (r == c && r == 5) b += Block::Identity();
    changed[5] = 1;
    Mat A = before.petsc(), A2 = after.petsc();
    const std::size_t blocks = before.blocks.size();  // (both triangles: more than the upper triangle SBAIJ keeps)
    for (const std::size_t sized : {blocks, 4 * blocks, std::size_t{3}}) {
      EisenstatDilu sized_first(EisenstatDilu::Pivots::Diagonal), fresh(EisenstatDilu::Pivots::Diagonal);
      for (EisenstatDilu* d : {&sized_first, &fresh}) {
        d->use_avx2(avx2);
        d->use_half(halves);
      }
      sized_first.size_for(12, sized);
      ASSERT_EQ(sized_first.factor(A), 0.0);
      ASSERT_EQ(fresh.factor(A), 0.0);
      const Eigen::VectorXd u = Eigen::VectorXd::Random(72);
      EXPECT_EQ(split_product(sized_first, u), split_product(fresh, u)) << sized;
      EXPECT_EQ(to_split(sized_first, u), to_split(fresh, u)) << sized;
      sized_first.size_for(12, sized);  // (again, between a set-up and the update that starts from it)
      ASSERT_TRUE(sized_first.update(A2, changed));
      ASSERT_TRUE(fresh.update(A2, changed));
      EXPECT_EQ(split_product(sized_first, u), split_product(fresh, u)) << sized;
      EXPECT_EQ(from_split(sized_first, u), from_split(fresh, u)) << sized;
    }
    MatDestroy(&A);
    MatDestroy(&A2);
  }
}

// CG on the split keeps its vectors as floats (fused_cg.hpp): the sweeps round u to floats and form out in floats
// anyway, so for a u that floats hold exactly, float vectors must give the double vectors' out to the bit, with
// either pivots, either kernels, floats or halves, with and without the coupling term.
TEST(EisenstatDilu, FloatVectorsGiveTheDoubleVectorsProductToTheBit) {
  std::mt19937 gen(23);
  const Sparse s = coupled(16, true, gen);
  Mat A = s.petsc();
  auto coupling = [](const double* z, double* w) {
    for (int i = 0; i < 96; ++i) w[i] = 0.3 * z[(i + 7) % 96];
  };
  std::vector<PetscInt> every_row(16);
  for (PetscInt k = 0; k < 16; ++k) every_row[static_cast<std::size_t>(k)] = k;
  const bool avx2 = percussion::solvers::avx2::supported();
  for (const auto pivots : {EisenstatDilu::Pivots::Incomplete, EisenstatDilu::Pivots::Diagonal})
    for (const bool fast : {false, true})
      for (const bool halves : {false, true}) {
        if ((fast || halves) && !avx2) continue;
        if (halves && !fast) continue;  // (only the AVX2 sweeps read halves)
        EisenstatDilu d(pivots);
        d.use_avx2(fast);
        d.use_half(halves);
        ASSERT_EQ(d.factor(A), 0.0);
        for (const bool with_coupling : {false, true}) {
          const Eigen::VectorXf uf = Eigen::VectorXd::Random(96).cast<float>();
          const Eigen::VectorXd u = uf.cast<double>();
          Eigen::VectorXd out(96);
          Eigen::VectorXf out_f(96);
          const double dot = d.apply(u.data(), out.data(), with_coupling, every_row, coupling);
          const double dot_f = d.apply(uf.data(), out_f.data(), with_coupling, every_row, coupling);
          EXPECT_EQ(out_f.cast<double>(), out) << "fast " << fast << " halves " << halves;
          EXPECT_NEAR(dot_f, dot, 1e-14 * std::abs(dot));
          EXPECT_GT((out - u).norm(), 1e-3 * u.norm());  // Ĉ is not I on a ring
        }
      }
  MatDestroy(&A);
}

// With halves, the sweeps read the scaled blocks rounded to 11 bits (2⁻¹¹ relative): the operator moves by about
// that much from the floats' and no more, and it is still symmetric, both sweeps reading the same rounded blocks
// (so CG sees W̃⁻¹ Ã W̃⁻ᵀ for the rounded Ã), with either pivots.
TEST(EisenstatDilu, HalvesRoundTheSplitAndKeepItSymmetric) {
  if (!percussion::solvers::avx2::supported()) GTEST_SKIP() << "no AVX2/FMA/F16C on this CPU";
  std::mt19937 gen(19);
  const Sparse s = coupled(16, true, gen);
  Mat A = s.petsc();
  for (const auto pivots : {EisenstatDilu::Pivots::Incomplete, EisenstatDilu::Pivots::Diagonal}) {
    EisenstatDilu floats(pivots), halves(pivots);
    halves.use_half(true);
    ASSERT_EQ(floats.factor(A), 0.0);
    ASSERT_EQ(halves.factor(A), 0.0);
    for (int trial = 0; trial < 3; ++trial) {
      const Eigen::VectorXd x = Eigen::VectorXd::Random(96), y = Eigen::VectorXd::Random(96);
      const Eigen::VectorXd cx = split_product(halves, x), cy = split_product(halves, y), fx = split_product(floats, x);
      EXPECT_GT((cx - fx).norm(), 1e-6 * fx.norm());  // rounded to halves (floats: about 1e-8)
      EXPECT_LT((cx - fx).norm(), 2e-3 * fx.norm());
      EXPECT_NEAR(y.dot(cx), x.dot(cy), 1e-5 * cx.norm() * y.norm());
      EXPECT_GT(x.dot(cx), 0.0);
      const Eigen::VectorXd bx = to_split(halves, x), bf = to_split(floats, x);
      EXPECT_LT((bx - bf).norm(), 2e-3 * bf.norm());
      EXPECT_LT((from_split(halves, x) - from_split(floats, x)).norm(), 2e-3 * from_split(floats, x).norm());
    }
  }
  MatDestroy(&A);
}

TEST(EisenstatDilu, ShiftsTheDiagonalWhenAPivotIsNotPositiveDefinite) {
  // The shift must reach α ≥ 3 (indefinite_chain); the split must still be W⁻¹ A W⁻ᵀ (A itself is indefinite here,
  // so only the identity, not positivity, can be checked).
  const Sparse s = indefinite_chain(10);
  Mat A = s.petsc();
  EisenstatDilu d;
  const double shift = d.factor(A).value();
  EXPECT_GE(shift, 3.0);
  EXPECT_LT(shift, 8.0);  // doublings from 0.01: 5.12 is the first at or above 3
  expect_split_of(d, s.dense(), 3);
  MatDestroy(&A);
}

TEST(EisenstatDilu, TakesNewValuesOnTheSamePatternWithTheOldPivots) {
  std::mt19937 gen(7);
  const Sparse first = coupled(14, true, gen);
  Sparse second = first;  // same pattern, other values
  for (auto& [r, c, b] : second.blocks) b = r == c ? Block(b + 2.0 * Block::Identity()) : Block(0.5 * b);
  Mat A = first.petsc(), A2 = second.petsc();
  EisenstatDilu d;
  ASSERT_EQ(d.factor(A), 0.0);
  const Eigen::VectorXd u = Eigen::VectorXd::Random(84);
  const Eigen::VectorXd before = split_product(d, u);
  ASSERT_TRUE(d.rescale(A2));
  expect_split_of(d, second.dense(), 3);
  EXPECT_GT((split_product(d, u) - before).norm(), 1e-3 * before.norm());  // the operator did change
  // Another pattern is refused and changes nothing.
  const Sparse chain = coupled(14, false, gen);
  Mat A3 = chain.petsc();
  EXPECT_FALSE(d.rescale(A3));
  expect_split_of(d, second.dense(), 1);
  MatDestroy(&A);
  MatDestroy(&A2);
  MatDestroy(&A3);
}

// Contact candidates apart leave zero blocks in the pattern; D-ILU leaves them out of its pivots and sweeps. The
// operator and both maps are those of the matrix without them, to the bit; and when such a block turns nonzero
// on the same pattern (a contact closes), the old pivots take it.
TEST(EisenstatDilu, LeavesOutTheZeroBlocksOfThePattern) {
  std::mt19937 gen(5);
  const Sparse plain = coupled(14, true, gen);
  Sparse with_zeros = plain;
  for (int i = 0; i + 3 < plain.n; i += 2) with_zeros.blocks.emplace_back(i, i + 3, Block::Zero());
  Mat A = plain.petsc(), Z = with_zeros.petsc();
  EisenstatDilu a, z;
  ASSERT_EQ(a.factor(A), 0.0);
  ASSERT_EQ(z.factor(Z), 0.0);
  for (int trial = 0; trial < 3; ++trial) {
    const Eigen::VectorXd u = Eigen::VectorXd::Random(84);
    EXPECT_EQ(split_product(z, u), split_product(a, u));
    EXPECT_EQ(to_split(z, u), to_split(a, u));
    EXPECT_EQ(from_split(z, u), from_split(a, u));
  }
  Sparse closed = with_zeros;  // the same pattern, the zero blocks now contacts
  for (auto& [r, c, b] : closed.blocks)
    if (b.isZero()) b = 0.3 * percussion::test::random_block(gen);
  Mat C = closed.petsc();
  ASSERT_TRUE(z.rescale(C));
  expect_split_of(z, closed.dense(), 3);
  MatDestroy(&A);
  MatDestroy(&Z);
  MatDestroy(&C);
}

TEST(EisenstatDilu, RejectsAMatrixThatIsNotSbaijOfBlockSizeSix) {
  Mat A;
  ASSERT_EQ(MatCreateSeqBAIJ(PETSC_COMM_SELF, 6, 12, 12, 2, nullptr, &A), 0);
  MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY);
  MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY);
  EisenstatDilu d;
  EXPECT_THROW(d.factor(A), std::exception);
  MatDestroy(&A);
}

}  // namespace test_eisenstat_dilu
