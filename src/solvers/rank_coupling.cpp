#include "percussion/solvers/rank_coupling.hpp"

#include <algorithm>
#include <map>

#include "percussion/solvers/petsc_check.hpp"

namespace percussion::solvers {

RankCoupling::RankCoupling(MPI_Comm comm) : comm_(comm), messages_(comm) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

bool RankCoupling::set_up(Mat A, const Groups& groups) {
  groups_ = groups;
  PetscInt start = 0, end = 0;
  petsc_check(MatGetOwnershipRange(A, &start, &end), "MatGetOwnershipRange");
  const PetscInt* ranges = nullptr;
  petsc_check(MatGetOwnershipRanges(A, &ranges), "MatGetOwnershipRanges");
  const PetscInt first = start / B;
  auto owner = [&](PetscInt point) {
    return static_cast<int>(std::upper_bound(ranges, ranges + size_ + 1, point) - ranges - 1);
  };

  // The blocks of rows [0, x) in columns past this rank's (SBAIJ's upper triangle: higher ranks only), row by row.
  std::vector<PetscInt> row, column;
  std::vector<double> block;
  petsc_check(MatGetRowUpperTriangular(A), "MatGetRowUpperTriangular");
  for (PetscInt k = 0; k < groups.x; ++k) {
    const std::size_t row_start = row.size();
    for (PetscInt a = 0; a < B; ++a) {
      PetscInt count = 0;
      const PetscInt* columns = nullptr;
      const PetscScalar* values = nullptr;
      const PetscInt point = (first + k) * B + a;
      petsc_check(MatGetRow(A, point, &count, &columns, &values), "MatGetRow");
      for (PetscInt i = 0; i < count; ++i) {
        if (columns[i] < end) continue;
        const PetscInt j = columns[i] / B;
        std::size_t e = row_start;
        while (e < row.size() && column[e] != j) ++e;
        if (e == row.size()) {
          row.push_back(k);
          column.push_back(j);
          block.resize(block.size() + B * B, 0.0);
        }
        block[e * B * B + static_cast<std::size_t>(a * B + columns[i] % B)] = values[i];
      }
      petsc_check(MatRestoreRow(A, point, &count, &columns, &values), "MatRestoreRow");
    }
  }
  petsc_check(MatRestoreRowUpperTriangular(A), "MatRestoreRowUpperTriangular");

  // Every block to a higher rank must sit in those rows: the local part's entries beyond the diagonal block's.
  Mat local = nullptr;
  petsc_check(MatGetDiagonalBlock(A, &local), "MatGetDiagonalBlock");
  MatInfo all, diagonal;
  petsc_check(MatGetInfo(A, MAT_LOCAL, &all), "MatGetInfo");
  petsc_check(MatGetInfo(local, MAT_LOCAL, &diagonal), "MatGetInfo");
  int bad = static_cast<double>(block.size()) != all.nz_used - diagonal.nz_used ? 1 : 0;

  std::vector<PetscInt> pattern(2 * row.size());
  for (std::size_t e = 0; e < row.size(); ++e) {
    pattern[2 * e] = row[e];
    pattern[2 * e + 1] = column[e];
  }
  int changed = pattern != pattern_ ? 1 : 0;
  int flags[2] = {bad, changed};
  MPI_Allreduce(MPI_IN_PLACE, flags, 2, MPI_INT, MPI_MAX, comm_);
  if (flags[0]) return false;

  if (flags[1]) {
    // Which rows of each higher rank the blocks touch, and (told by the lower ranks) which rows of ours they need.
    std::map<int, std::vector<PetscInt>> touched;
    for (const PetscInt j : column) touched[owner(j * B)].push_back(j);
    up_.clear();
    for (auto& [q, rows] : touched) {
      std::sort(rows.begin(), rows.end());
      rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
      up_.push_back(Neighbour{q, std::move(rows), {}, {}, {}, {}});
    }
    std::vector<int> send_count(static_cast<std::size_t>(size_), 0), receive_count(static_cast<std::size_t>(size_));
    for (const Neighbour& u : up_) send_count[static_cast<std::size_t>(u.rank)] = static_cast<int>(u.rows.size());
    MPI_Alltoall(send_count.data(), 1, MPI_INT, receive_count.data(), 1, MPI_INT, comm_);
    down_.clear();
    for (int p = 0; p < size_; ++p)
      if (receive_count[static_cast<std::size_t>(p)] > 0)
        down_.push_back(Neighbour{p, std::vector<PetscInt>(static_cast<std::size_t>(receive_count[p])), {}, {}, {}, {}});
    std::vector<MPI_Request> requests;
    for (Neighbour& d : down_) {
      requests.emplace_back();
      MPI_Irecv(d.rows.data(), static_cast<int>(d.rows.size()), MPIU_INT, d.rank, kRowsTag, comm_, &requests.back());
    }
    for (Neighbour& u : up_) {
      requests.emplace_back();
      MPI_Isend(u.rows.data(), static_cast<int>(u.rows.size()), MPIU_INT, u.rank, kRowsTag, comm_, &requests.back());
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    int wrong = 0;
    for (Neighbour& d : down_) {
      wrong |= d.rank > rank_ ? 1 : 0;  // SBAIJ: only a lower rank holds blocks to our rows
      for (PetscInt& r : d.rows) {
        r -= first;
        wrong |= r < groups.h || r >= groups.n ? 1 : 0;  // a row lower ranks couple to must be in X or L
      }
    }
    for (std::vector<Neighbour>* list : {&up_, &down_})
      for (Neighbour& nb : *list) {
        nb.send.assign(nb.rows.size() * B, 0.0);
        nb.receive.assign(nb.rows.size() * B, 0.0);
        nb.block_send.assign(nb.rows.size() * B * B, 0.0);
        nb.block_receive.assign(nb.rows.size() * B * B, 0.0);
      }
    MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_MAX, comm_);
    pattern_ = pattern;
    if (wrong) {
      pattern_.clear();
      return false;
    }
  }

  row_ = std::move(row);
  block_ = std::move(block);
  neighbour_.resize(row_.size());
  slot_.resize(row_.size());
  for (std::size_t e = 0; e < row_.size(); ++e) {
    const int q = owner(column[e] * B);
    std::size_t i = 0;
    while (up_[i].rank != q) ++i;
    neighbour_[e] = static_cast<PetscInt>(i);
    slot_[e] = static_cast<PetscInt>(std::lower_bound(up_[i].rows.begin(), up_[i].rows.end(), column[e]) -
                                      up_[i].rows.begin());
  }
  return true;
}

void RankCoupling::post_receives(std::vector<Neighbour>& from, Buffer buffer, int tag) const {
  for (Neighbour& nb : from) messages_.receive(nb.rank, (nb.*buffer).data(), (nb.*buffer).size(), tag);
}

void RankCoupling::post_sends(std::vector<Neighbour>& to, Buffer buffer, int tag) const {
  for (const Neighbour& nb : to) messages_.send(nb.rank, (nb.*buffer).data(), (nb.*buffer).size(), tag);
}

void RankCoupling::start_backward() const { post_receives(up_, &Neighbour::receive, kBackwardTag); }

void RankCoupling::finish_pull(double* c) const {
  wait_receives();
  std::fill(c, c + static_cast<std::size_t>(groups_.x) * B, 0.0);
  for (std::size_t e = 0; e < row_.size(); ++e) {
    const double* a = &block_[e * B * B];
    const double* z = &up_[static_cast<std::size_t>(neighbour_[e])].receive[static_cast<std::size_t>(slot_[e]) * B];
    double* ck = c + static_cast<std::size_t>(row_[e]) * B;
    for (int r = 0; r < B; ++r)
      for (int col = 0; col < B; ++col) ck[r] += a[r * B + col] * z[col];  // c_k += A_kj z_j
  }
}

void RankCoupling::end_backward() const { wait_sends(); }

void RankCoupling::start_forward() const { post_receives(down_, &Neighbour::receive, kForwardTag); }

void RankCoupling::end_forward() const { wait_sends(); }

void RankCoupling::start_forward_blocks() const { post_receives(down_, &Neighbour::block_receive, kBlocksTag); }

void RankCoupling::wait_receives() const { messages_.wait_receives(); }

void RankCoupling::wait_sends() const { messages_.wait_sends(); }

}  // namespace percussion::solvers
