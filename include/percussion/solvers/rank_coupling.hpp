#pragma once
// The blocks that couple one rank's rows of a symmetric 6×6-block MPISBAIJ matrix to other ranks' rows, and the
// exchanges that let block Gauss–Seidel and D-ILU sweep across ranks (eisenstat_dilu.hpp, apply_across and
// factor_across) instead of leaving those blocks out (block Jacobi across ranks).
//
// The global order of the sweeps is PETSc's: rank by rank, and within a rank the local rows, which the caller
// orders in four groups:
//     H (coupled only to higher ranks) | X (to higher and lower ranks) | N (to no other rank) | L (only to lower ones).
// The backward sweep needs, for its H and X rows, the swept values of the higher ranks' rows they couple to; the
// forward sweep needs, for its X and L rows, the products of the lower ranks' blocks with their swept values. Each
// rank sends as soon as the rows the others need are swept: with two ranks, rank 0 sweeps its H rows first in the
// forward sweep and last in the backward one, rank 1 its L rows last and first, and neither waits while the other
// sweeps its interior. Waits only run down (forward) or up (backward) the rank numbers, so they cannot deadlock.
//
// SBAIJ keeps the upper triangle: rank r holds the blocks A_kj of its rows k with j on a higher rank, and both
// directions use those: backward c_k = Σ_j A_kj z_j (z_j from j's owner), forward v_j = Σ_k A_kjᵀ z_k (sent to j's
// owner). Blocks are kept in double: they are a few per cent of a rank's blocks.
#include <mpi.h>
#include <petscmat.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "percussion/parallel/messages.hpp"

namespace percussion::solvers {

class RankCoupling {
 public:
  static constexpr int B = 6;
  // Local rows H = [0, h), X = [h, x), N = [x, l), L = [l, n).
  struct Groups {
    PetscInt h = 0, x = 0, l = 0, n = 0;
  };
  explicit RankCoupling(MPI_Comm comm);

  // Collective. Reads A's blocks that couple the rows [0, x) to higher ranks and, when their pattern changed on
  // some rank, tells each higher neighbour which of its rows this rank needs. False on every rank if some rank's
  // matrix couples a row outside the promise of its groups (a row of N or L to a higher rank, one of H or N to a
  // lower rank): the sweeps would then not follow one global order.
  bool set_up(Mat A, const Groups& groups);
  const Groups& groups() const { return groups_; }

  // The backward sweep: start_backward(); rows L (and X); send_down(z) once the rows lower ranks need (X and L) are
  // swept, z(k, out) writing the scaled value of local row k; finish_pull(c) before the rows X (or H): c_k for the
  // rows [0, x) (the others untouched); end_backward() after the sweep.
  void start_backward() const;
  template <class Z>
  void send_down(Z&& z) const;
  void finish_pull(double* c) const;
  void end_backward() const;
  // The forward sweep: start_forward(); rows H; finish_push(f) before the rows X (or L), f(k, v) adding v_k, a lower
  // rank's products for local row k; send_up(z) once the rows [0, x) are swept; end_forward() after the sweep.
  void start_forward() const;
  template <class F>
  void finish_push(F&& f) const;
  template <class Z>
  void send_up(Z&& z) const;
  void end_forward() const;
  // The same push with 6×6 blocks, for D-ILU's elimination in the global order (eisenstat_dilu.hpp, factor_across):
  // start_forward_blocks(); rows H; finish_push_blocks(f) before X (or L), f(k, S) with S a lower rank's 36 values
  // for local row k; send_up_blocks(f) once the rows [0, x) are final, f(k, A_kj, out) adding row k's 36 values for
  // the remote row j into out (A_kj row-major); end_forward() after.
  void start_forward_blocks() const;
  template <class F>
  void finish_push_blocks(F&& f) const;
  template <class F>
  void send_up_blocks(F&& f) const;

  // The order above, once: rows(begin, end) sweeps local rows, receive() waits for the other side's messages (before
  // X, or before L / H when there is no X), send() sends ours (once the rows the other side needs are swept).
  template <class Rows, class Receive, class Send>
  void in_forward_order(Rows&& rows, Receive&& receive, Send&& send) const;
  template <class Rows, class Receive, class Send>
  void in_backward_order(Rows&& rows, Receive&& receive, Send&& send) const;

 private:
  // Message tags: the backward sweep's values, the forward sweep's products, the rows' lists, D-ILU's Schur blocks.
  static constexpr int kBackwardTag = 7301, kForwardTag = 7302, kRowsTag = 7303, kBlocksTag = 7304;
  struct Neighbour {
    int rank;
    std::vector<PetscInt> rows;  // up: its global block rows that this rank's blocks touch; down: local rows it needs
    std::vector<double> send, receive;              // 6 per row
    std::vector<double> block_send, block_receive;  // 36 per row
  };
  using Buffer = std::vector<double> Neighbour::*;
  void post_receives(std::vector<Neighbour>& from, Buffer buffer, int tag) const;
  void post_sends(std::vector<Neighbour>& to, Buffer buffer, int tag) const;
  // Waits for the posted receives, then f(local row, its `width` values) for each row of `from`.
  template <class F>
  void deliver(const std::vector<Neighbour>& from, Buffer buffer, std::size_t width, F&& f) const;
  void wait_receives() const;
  void wait_sends() const;

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  Groups groups_;
  // Higher ranks whose rows this rank's blocks touch; lower ranks that need ours. (Their buffers change in the const
  // sweeps.)
  mutable std::vector<Neighbour> up_, down_;
  // The blocks: entry e couples local row row_[e] to row slot_[e] of up_[neighbour_[e]] (36 values, row-major).
  std::vector<PetscInt> row_, neighbour_, slot_;
  std::vector<double> block_;
  std::vector<PetscInt> pattern_;  // (row, global column) of each entry as last exchanged
  mutable parallel::Messages messages_;
};

template <class Z>
void RankCoupling::send_down(Z&& z) const {
  for (Neighbour& d : down_)
    for (std::size_t i = 0; i < d.rows.size(); ++i) z(d.rows[i], &d.send[i * B]);
  post_sends(down_, &Neighbour::send, kBackwardTag);
}

template <class F>
void RankCoupling::deliver(const std::vector<Neighbour>& from, Buffer buffer, std::size_t width, F&& f) const {
  wait_receives();
  for (const Neighbour& nb : from)
    for (std::size_t i = 0; i < nb.rows.size(); ++i) f(nb.rows[i], &(nb.*buffer)[i * width]);
}

template <class F>
void RankCoupling::finish_push(F&& f) const {
  deliver(down_, &Neighbour::receive, B, f);
}

template <class Z>
void RankCoupling::send_up(Z&& z) const {
  for (Neighbour& u : up_) std::fill(u.send.begin(), u.send.end(), 0.0);
  double zk[B];
  PetscInt last = -1;
  for (std::size_t e = 0; e < row_.size(); ++e) {
    if (row_[e] != last) z(last = row_[e], zk);  // the entries come row by row
    const double* a = &block_[e * B * B];
    double* v = &up_[static_cast<std::size_t>(neighbour_[e])].send[static_cast<std::size_t>(slot_[e]) * B];
    for (int r = 0; r < B; ++r)
      for (int c = 0; c < B; ++c) v[c] += a[r * B + c] * zk[r];  // v_j += A_kjᵀ z_k
  }
  post_sends(up_, &Neighbour::send, kForwardTag);
}

template <class F>
void RankCoupling::finish_push_blocks(F&& f) const {
  deliver(down_, &Neighbour::block_receive, B * B, f);
}

template <class F>
void RankCoupling::send_up_blocks(F&& f) const {
  for (Neighbour& u : up_) std::fill(u.block_send.begin(), u.block_send.end(), 0.0);
  for (std::size_t e = 0; e < row_.size(); ++e)
    f(row_[e], &block_[e * B * B],
      &up_[static_cast<std::size_t>(neighbour_[e])].block_send[static_cast<std::size_t>(slot_[e]) * B * B]);
  post_sends(up_, &Neighbour::block_send, kBlocksTag);
}

template <class Rows, class Receive, class Send>
void RankCoupling::in_forward_order(Rows&& rows, Receive&& receive, Send&& send) const {
  const Groups& g = groups_;
  const bool x_rows = g.x > g.h;
  rows(PetscInt{0}, g.h);
  if (x_rows) receive();
  rows(g.h, g.x);
  send();
  rows(g.x, g.l);
  if (!x_rows) receive();
  rows(g.l, g.n);
}

template <class Rows, class Receive, class Send>
void RankCoupling::in_backward_order(Rows&& rows, Receive&& receive, Send&& send) const {
  const Groups& g = groups_;
  const bool x_rows = g.x > g.h;
  rows(g.l, g.n);
  if (!x_rows) send();
  rows(g.x, g.l);
  receive();
  rows(g.h, g.x);
  if (x_rows) send();
  rows(PetscInt{0}, g.h);
}

}  // namespace percussion::solvers
