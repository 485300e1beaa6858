#pragma once
// A distributed symmetric block system A y = b (one bs×bs block row per owned item) on PETSc: an SBAIJ matrix
// (upper triangle; callers add both triangles) preallocated from per-row block counts and reused while the
// pattern holds, solved by a KSP under an options prefix, so that -<prefix>ksp_type and -<prefix>pc_type name every
// choice and -<prefix>ksp_monitor, -<prefix>ksp_converged_reason watch the solver that runs. By default on 6x6-block
// SBAIJ: the fused CG (fused_cg_ksp.hpp, "fusedcg") with block symmetric Gauss–Seidel by Eisenstat's trick
// ("percussion_gs"); the project's other preconditioners are "percussion_dilu", "percussion_icc_sp" and
// "percussion_pbjacobi" (block_preconditioners.hpp). Gauss–Seidel's and D-ILU's sweeps run across the ranks when the
// caller gives preallocate() the rows' sides (rank_coupling.hpp). Other block sizes (3 for mesh vertices) and
// formats get PETSc's CG with block Jacobi by default. An algebraic multigrid (GAMG, hypre, ML) is built from an AIJ
// copy of the matrix, since PETSc 3.18's multigrids take AIJ only, and from a near-nullspace the caller supplies.
#include <petscksp.h>

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "percussion/solvers/eisenstat_dilu.hpp"
#include "percussion/solvers/petsc_check.hpp"
#include "percussion/solvers/rank_coupling.hpp"
#include "percussion/solvers/single_precision_icc.hpp"
#include "percussion/solvers/single_precision_product.hpp"

namespace percussion::solvers {

class BlockSystem {
 public:
  // Defaults (the fused CG with use_blocks()' preconditioner on 6x6 blocks, PETSc's CG with block Jacobi otherwise;
  // the true residual's norm) may be overridden by the options database under `prefix`.
  BlockSystem(MPI_Comm comm, std::string prefix, int block_size);
  ~BlockSystem();
  BlockSystem(const BlockSystem&) = delete;
  BlockSystem& operator=(const BlockSystem&) = delete;

  // Collective. Create the matrix for n_owned block rows with at most d_nnz[i] blocks in owned columns and
  // o_nnz[i] in other ranks' columns. Returns the global block index of this rank's first row.
  // With `sides` (per item i: bit kLowerRank if it couples to an item of a lower rank, kHigherRank if to one of a
  // higher rank), the items' rows are ordered so that block Gauss–Seidel sweeps across the ranks
  // (rank_coupling.hpp): item i is the local row local_row(i) (first_row() + local_row(i) globally), and rhs,
  // solution and near-nullspace modes hold the rows in that order. d_nnz and o_nnz stay per item.
  static constexpr char kLowerRank = 1, kHigherRank = 2;
  // With `pattern_follows` the caller gives the pattern next (set_pattern), and an SBAIJ matrix is allocated only
  // then.
  PetscInt preallocate(PetscInt n_owned, std::span<const PetscInt> d_nnz, std::span<const PetscInt> o_nnz,
                       std::span<const char> sides = {}, bool pattern_follows = false);
  // Collective, after preallocate(): the matrix's blocks, given whole. Item i's row holds the blocks of the global
  // block columns columns[start[i]] ... columns[start[i + 1] − 1] (either triangle, any order, repeats allowed) and
  // its diagonal block. A 6x6-block SBAIJ matrix is then allocated for exactly these blocks, and every block is
  // inserted once in order: no first assembly then searches its rows, shifts their blocks or squeezes out slots left
  // unused, and add_at() works from the first assembly on. Other formats keep preallocate()'s counts. (Any block
  // size.)
  void set_pattern(std::span<const PetscInt> start, std::span<const PetscInt> columns);
  PetscInt first_row() const { return first_row_; }
  PetscInt local_row(std::size_t item) const {
    return local_row_.empty() ? static_cast<PetscInt>(item) : local_row_[item];
  }
  // Block Gauss–Seidel (the default's blocks or the fallback's) and D-ILU sweep across the ranks where the rows were
  // ordered by `sides` (on by default), instead of leaving the blocks between ranks out. Call before preallocate().
  void use_sweeps_across_ranks(bool on) { across_asked_ = on; }
  bool ready() const { return A_ != nullptr; }

  // With 6x6 blocks and SBAIJ, products by the rank's diagonal block use a single-precision copy of it, made at
  // every assemble() (single_precision_product.hpp): for inexact Newton solves, not for tight tolerances.
  // Call before the first assemble().
  void use_single_precision_product(bool on) { single_precision_product_ = on; }
  // IC(0)'s factor read as halves by the AVX2 application (on by default; avx2_block_kernels.hpp).
  void use_half_precision_factor(bool on) { icc_.use_half(on); }
  // D-ILU's and Gauss–Seidel's scaled blocks read as halves by the AVX2 sweeps (eisenstat_dilu.hpp).
  void use_half_precision_split(bool on) {
    dilu_.use_half(on);
    gauss_seidel_.use_half(on);
  }
  // CG on a split system keeps its vectors x, r, p, q as floats when it is asked for kFloatVectorsRtol or more (on
  // by default; fused_cg.hpp): the sweeps read p as floats and form q in floats anyway.
  void use_float_cg_vectors(bool on) { float_cg_vectors_ = on; }
  static constexpr double kFloatVectorsRtol = 1e-5;
  // The default preconditioner on 6x6-block SBAIJ (-<prefix>pc_type overrides, and then decides blocks()): block
  // Jacobi across ranks with IC(0) blocks (single_precision_icc.hpp, percussion_icc_sp); D-ILU applied by
  // Eisenstat's trick (eisenstat_dilu.hpp, percussion_dilu), whose CG iteration costs two sweeps over the
  // off-diagonal blocks instead of a product and two triangular solves; or block symmetric Gauss–Seidel by the same
  // trick (percussion_gs), the fallback's (solve_fallback), which needs no elimination, is set up again after every
  // assembly (only in the changed rows after a contact refresh) and suits contact-dominated matrices.
  // Call before preallocate().
  enum class Blocks { Icc, Dilu, GaussSeidel };
  void use_blocks(Blocks blocks) { blocks_ = blocks; }
  Blocks blocks() const { return blocks_; }
  // The registered name of each (block_preconditioners.hpp).
  static const char* blocks_pc(Blocks blocks);
  // The fallback's preconditioner (solve_fallback): block symmetric Gauss–Seidel by default, point-block Jacobi
  // with `on` false.
  void use_gauss_seidel_fallback(bool on) { gauss_seidel_fallback_ = on; }

  void zero();                                                  // keep the pattern, zero the values
  void add_block(PetscInt row, PetscInt col, const double* v);  // bs×bs, row-major; rows may be other ranks'
  void assemble();                                              // collective
  // Direct insertion, without MatSetValuesBlocked's search of the row and call overhead. Once an SBAIJ
  // pattern is set (its first assemble() since preallocate()), local_position gives where block (row, col),
  // row < col both owned by this rank, sits in the rank's block of the matrix; -1 if there is none or the pattern
  // is not set yet. add_at(position, v) then adds v as add_block(row, col, v) would; with column_major, v holds the
  // block column by column (as PETSc keeps it).
  PetscInt local_position(PetscInt row, PetscInt col) const;
  void add_at(PetscInt position, const double* v, bool column_major = false);

  // A replaceable part of the matrix (the Newton matrix's contact terms): its blocks, given by add_replaceable()
  // between zero() and assemble(), enter the matrix with the others. Between a later begin_replacement() and
  // assemble() the caller gives that part again, absolutely and whole, and assemble() writes what changed: the
  // matrix is then, to the bit, the one zero(), the kept blocks and the new part would assemble, whatever the parts
  // given in between. So a lagged matrix whose contacts are brought up to date is a function of the two states
  // alone, which a restart can assemble again. Diagonal blocks must be the rank's own rows and are given whole at
  // each replacement; off-diagonal ones sit where no kept block does and are given where they changed (`changed`;
  // a replacement sets them, an assembly after zero() adds them). SBAIJ, after the first assemble().
  void begin_replacement();
  void add_replaceable(PetscInt row, PetscInt col, const double* v, bool changed = true);
  void add_replaceable_at(PetscInt position, const double* v, bool column_major, bool changed = true);
  // Whether the preconditioner's set-up depends on the matrix alone (Gauss–Seidel blocks), not on which matrices
  // it was first built from (a lagged IC(0) or D-ILU, a kept multigrid): then two runs that assemble the same
  // matrix by different ways solve alike.
  bool preconditioner_follows_matrix() const { return eisenstat_ && blocks_ == Blocks::GaussSeidel; }

  // True when the preconditioner is an algebraic multigrid, which wants a near-nullspace.
  bool multigrid() const { return multigrid_; }
  // False until the first solve after preallocate(): that one builds the preconditioner whatever it is asked.
  bool has_preconditioner() const { return built_; }
  // Collective. `modes` holds `count` vectors of bs values per owned row, one after the other (for bonded
  // particles: the six rigid-body motions). They are orthonormalised and given to the multigrid at its next
  // set-up as the near-nullspace its coarse spaces must represent.
  void set_near_nullspace(std::span<const double> modes, int count);

  struct Result {
    PetscInt iterations;
    int reason;
    double residual_norm;
    bool preconditioner_shifted = false;  // this solve factored IC(0) or D-ILU, and it needed a diagonal shift
  };
  // Collective. rhs and solution hold bs values per owned row. With refresh false the preconditioner of the
  // last refresh is kept although the matrix changed (lagged: Newton iterations of one time step), which
  // saves its set-up; the first solve after preallocate() always builds it.
  Result solve(std::span<const double> rhs, std::span<double> solution, double rtol, bool refresh = true);
  // Collective. The same system by CG with point-block Jacobi (bs×bs diagonal blocks inverted), which stays
  // SPD where an incomplete factorisation breaks down; options under `prefix`fallback_.
  Result solve_block_jacobi(std::span<const double> rhs, std::span<double> solution, double rtol);
  // Collective. The fallback where the default preconditioner broke down or shifted: CG on the Eisenstat split with
  // the diagonal blocks as pivots (block symmetric Gauss–Seidel, eisenstat_dilu.hpp), which is SPD whatever the
  // off-diagonal blocks and is set up again only when the matrix changed, and then only in the rows additions touched
  // since its last set-up unless zero() was called; point-block Jacobi (solve_block_jacobi)
  // when turned off, for other block sizes or formats, when the fallback's options (-<prefix>fallback_ksp_type,
  // -<prefix>fallback_pc_type) ask for another method, if the diagonal blocks are not positive definite, or if
  // Gauss–Seidel is already the default's blocks.
  Result solve_fallback(std::span<const double> rhs, std::span<double> solution, double rtol);
  // y = D⁻¹ x with D the bs×bs diagonal blocks of the assembled matrix (the fallback's preconditioner).
  void apply_block_jacobi(const double* x, double* y) const;
  // The default preconditioner's set-up (IC(0) of this rank's diagonal block of P; false if no diagonal shift
  // gives positive definite pivots) and application (NaN after a failed set-up).
  bool factor_icc(Mat P);
  void apply_icc(const double* x, double* y) const;
  // Factorisations of the default preconditioner's blocks (IC(0) or D-ILU) so far on this rank, and those that
  // needed a diagonal shift for positive definite pivots.
  long block_factorisations() const { return block_factorisations_; }
  // out = Ĉ u, the Eisenstat split operator (eisenstat_dilu.hpp), returning the rank's part of u·out; and w = O z,
  // the blocks coupling ranks.
  double apply_split(const double* u, double* out) const;
  void rank_coupling(const double* z, double* w) const;
  long block_shifted() const { return block_shifted_; }
  // Diagonal blocks point-block Jacobi has inverted so far (a block equal to the one its row last inverted keeps
  // that inverse).
  long diagonal_inversions() const { return diagonal_inversions_; }
  // Gauss–Seidel set-ups (of the default's blocks or of the fallback) that formed only the rows changed since the
  // last one.
  long gauss_seidel_updates() const { return gauss_seidel_.partial_set_ups(); }
  // Gauss–Seidel set-ups and D-ILU factorisations whose sweeps ran across the ranks.
  long set_ups_across_ranks() const { return across_set_ups_; }
  // Solves (the same on every rank) whose factorisation no diagonal shift made positive definite on some rank;
  // each returned KSP_DIVERGED_PC_FAILED without iterating.
  long failed_set_ups() const { return failed_set_ups_; }

 private:
  friend struct BlockPreconditionerAccess;  // the registered preconditioners (block_preconditioners.cpp)
  void destroy();
  void make_fallback_ksp();  // the fallback's KSP, at its first solve (its options decide fused_fallback_cg_)
  MPI_Comm comm_;
  std::string prefix_;
  int bs_;
  PetscInt first_row_ = 0, n_owned_ = 0;
  bool multigrid_ = false, built_ = false, upper_only_ = false;
  bool own_blocks_ = false;   // 6x6-block SBAIJ: the project's preconditioners and kernels apply
  bool point_block_ = false;  // the default KSP's preconditioner is percussion_pbjacobi
  Mat A_ = nullptr;
  Mat P_ = nullptr;  // AIJ copy the multigrid is built from (null: the preconditioner uses A_)
  MatNullSpace near_null_ = nullptr;
  Vec b_ = nullptr, y_ = nullptr;
  KSP ksp_ = nullptr, fallback_ = nullptr;
  SinglePrecisionIcc icc_;
  // Eisenstat D-ILU: CG on the split system, a shell operator.
  EisenstatDilu dilu_;
  Blocks blocks_ = Blocks::Icc;  // asked for
  bool eisenstat_ = false;       // a split is in use (D-ILU or Gauss–Seidel blocks, and the default preconditioner)
  const EisenstatDilu& split() const { return blocks_ == Blocks::GaussSeidel ? gauss_seidel_ : dilu_; }
  bool coupled_ = false;         // more than one rank: the split operator needs the coupling blocks
  std::vector<PetscInt> interface_rows_;  // rows with a partner on another rank: the only ones the coupling touches
  long assemblies_ = 0, factored_assembly_ = -1;
  Mat split_op_ = nullptr;
  Vec coupling_in_ = nullptr, coupling_out_ = nullptr;
  std::vector<double> split_b_hat_, split_y_hat_;
  std::vector<float> split_y_hat_float_;  // CG's ŷ with float vectors (use_float_cg_vectors)
  // Block symmetric Gauss–Seidel (the fallback's, or the default's blocks) and the assembly it was set up from.
  EisenstatDilu gauss_seidel_{EisenstatDilu::Pivots::Diagonal};
  bool gauss_seidel_fallback_ = true;
  long gauss_seidel_assembly_ = -1;
  bool gauss_seidel_usable_ = false;  // its diagonal blocks were SPD on every rank at that assembly
  // The rows (local) that additions touched since Gauss–Seidel's last set-up, which updates only those
  // (EisenstatDilu::update): all after zero() or a new pattern; or some other rank's, which only a full set-up
  // everywhere then covers.
  std::vector<char> changed_rows_;
  // Sweeps across ranks: the items' rows (empty: in item order), the groups, and the coupling blocks.
  std::vector<PetscInt> local_row_;
  RankCoupling::Groups groups_;
  RankCoupling coupling_;
  bool across_asked_ = true, across_ = false, across_ready_ = false, across_refused_ = false;
  bool pattern_follows_ = false;  // preallocate() left the allocation of the SBAIJ matrix to set_pattern()
  long across_set_ups_ = 0;
  bool dilu_across_ = false;  // D-ILU's last factorisation ran across the ranks
  bool across(const EisenstatDilu& split) const {
    return !across_refused_ && ((across_ready_ && &split == &gauss_seidel_) || (dilu_across_ && &split == &dilu_));
  }
  // Collective: the coupling blocks of the current assembly read (once per assembly); false when the rows were not
  // ordered or the caller's groups do not match the matrix (then block Jacobi across ranks from now on).
  bool couple_ranks();
  long coupling_assembly_ = -1;
  void order_rows(std::span<const char> sides, bool across);  // local_row_ and groups_ from the items' sides
  void to_split(const EisenstatDilu& split, const double* b, double* b_hat) const;
  template <class V>
  void from_split(const EisenstatDilu& split, const V* y_hat, double* y) const;
  bool all_rows_changed_ = true, changed_elsewhere_ = false;
  void mark_changed(PetscInt row, PetscInt col);  // an addition to block (row, col), global rows
  bool set_up_gauss_seidel();  // collective: for the current assembly; false if it is not usable on some rank
  template <class V>
  double apply_split(const EisenstatDilu& split, const V* u, V* out) const;  // Ĉ u of either split
  // The fused CG on a split system (D-ILU's or Gauss–Seidel's) as `ksp`, stopped at kSplitForcing·rtol.
  Result run_split(const EisenstatDilu& split, std::span<const double> rhs, std::span<double> solution, double rtol,
                   KSP ksp);
  // The fused CG (its KSPs are "fusedcg" with our preconditioners, fused_cg_ksp.hpp) runs on our arrays and kernels
  // for the split system, the IC(0)-preconditioned one and the point-block Jacobi fallback; other Krylov methods run
  // through KSPSolve. multiply() runs A's MatMult on the loops' arrays through these Vecs (made at the first fused
  // solve that multiplies by A).
  bool fused_split_cg_ = false, fused_icc_cg_ = false, fused_fallback_cg_ = false;
  long icc_assembly_ = -1;  // the assembly IC(0) was last factored from
  std::vector<double> cg_work_;
  std::vector<float> cg_work_float_;  // the split's r, p, q as floats (use_float_cg_vectors)
  bool float_cg_vectors_ = true;
  Vec product_in_ = nullptr, product_out_ = nullptr;
  void multiply(const double* x, double* y) const;
  Result run_fused(KSP ksp, std::span<const double> rhs, std::span<double> solution, double rtol,
                   void (BlockSystem::*precondition)(const double*, double*) const);
  Result solve_split(std::span<const double> rhs, std::span<double> solution, double rtol, bool refresh);
  Result solve_gauss_seidel(std::span<const double> rhs, std::span<double> solution, double rtol);
  // CG on the default preconditioner's split system: the fused loop, or PETSc's KSP when its options ask.
  Result solve_on_split(const EisenstatDilu& split, std::span<const double> rhs, std::span<double> solution,
                        double rtol);
  SinglePrecisionProduct product_;
  bool single_precision_product_ = false;
  long block_factorisations_ = 0, block_shifted_ = 0, block_failed_ = 0, failed_set_ups_ = 0;
  void count_factorisation(std::optional<double> shift);  // one factorisation: the shift it needed, or failed
  struct FactorStatus {
    bool shifted, failed;
  };
  // Collective: some rank shifted, or failed, a factorisation since the counts were taken.
  FactorStatus factor_status_since(long shifted_before, long failed_before) const;
  Result failed_set_up(std::span<double> solution);  // forgets the preconditioner, zero solution, PC_FAILED
  // Diagonal blocks (bs×bs per owned row) summed by add_block since zero(), inserted into the matrix once per
  // row by assemble(), and kept so point-block Jacobi needs neither a conversion to AIJ (PETSc 3.18 inverts
  // block diagonals of (B)AIJ only) nor a pass over the matrix; its inverses are read back from the matrix
  // instead when some diagonal block came from another rank.
  std::vector<double> diagonal_;
  std::vector<float> diagonal_inverse_;  // inverted in double, kept in floats
  std::vector<double> inverted_diagonal_;  // the blocks diagonal_inverse_ holds the inverses of
  long diagonal_inversions_ = 0;           // blocks inverted (not kept) so far
  // The rank's block of the matrix as add_at() sees it: block CSR of its upper triangle (empty until the
  // pattern is set), and its value array from the first add_at() after zero() until assemble().
  std::vector<PetscInt> local_first_, local_column_;
  PetscScalar* local_values_ = nullptr;
  // The replaceable part's diagonal blocks per owned row (zero where has_ is 0; rows_ lists where it is 1): the ones
  // in the matrix, and those being given (next_). The matrix's diagonal block is diagonal_ + that part.
  struct ReplaceableDiagonal {
    std::vector<double> blocks;
    std::vector<char> has;
    std::vector<PetscInt> rows;
    void reset(std::size_t n, std::size_t bb);
    void clear();  // no row holds a block
    double* row(PetscInt r, std::size_t bb);  // r's block, zeroed when it enters
  };
  ReplaceableDiagonal replaceable_, replaceable_next_;
  bool replacing_ = false;  // between begin_replacement() and assemble()
  // diagonal_ + the replaceable part of row r into out (bs×bs row-major).
  void total_diagonal(PetscInt r, const ReplaceableDiagonal& part, double* out) const;
  void set_at(PetscInt position, const double* v, bool column_major = false);  // add_at, overwriting
  double* local_block(PetscInt position);  // where add_at and set_at write (marks the block's rows changed)
  void write_replacement();  // assemble()'s part in a replacement: the diagonal blocks whose part changed
  bool diagonal_complete_ = false;  // every diagonal addition since zero() was local
  bool diagonal_inserted_ = false;  // assemble() has put diagonal_ into the matrix since zero()
  bool diagonal_inverted_ = false;  // diagonal_inverse_ is up to date
  void invert_diagonal();
  // KSPSolve from zero to rtol, through b_ and y_.
  Result run(KSP ksp, std::span<const double> rhs, std::span<double> solution, double rtol);
  // Point-block Jacobi by `ksp` (the fallback's, or the default one with percussion_pbjacobi).
  Result solve_block_jacobi(KSP ksp, std::span<const double> rhs, std::span<double> solution, double rtol);
};

}  // namespace percussion::solvers
