#include "percussion/methods/ipc/contact_assembly.hpp"

#include <algorithm>

#include "percussion/parallel/messages.hpp"
#include "percussion/solvers/petsc_check.hpp"

namespace percussion::ipc {

using solvers::petsc_check;

ContactAssembly::ContactAssembly(MPI_Comm comm, ::Vec rows, int dim) : comm_(comm), dim_(dim) {
  MPI_Comm_rank(comm, &rank_);
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  const PetscInt* r = nullptr;
  petsc_check(VecGetOwnershipRanges(rows, &r), "VecGetOwnershipRanges");
  ranges_.assign(r, r + ranks + 1);
}

int ContactAssembly::owner(PetscInt row) const {
  return static_cast<int>(std::upper_bound(ranges_.begin(), ranges_.end(), row) - ranges_.begin()) - 1;
}

std::vector<ContactAssembly::Entry> ContactAssembly::gather(std::vector<std::vector<Entry>>& out) const {
  std::vector<int> counts;
  std::vector<Entry> mine = parallel::all_to_all(comm_, out, counts);  // this rank's own entries included
  std::sort(mine.begin(), mine.end(), [](const Entry& a, const Entry& b) {
    if (a.row != b.row) return a.row < b.row;
    if (a.col != b.col) return a.col < b.col;
    return a.value < b.value;
  });
  return mine;
}

void ContactAssembly::add(const std::function<void(const ContactBlock&)>& for_each, ::Vec gradient) {
  std::vector<std::vector<Entry>> out(ranges_.size() - 1);
  for_each([&](int count, const std::int64_t*, const PetscInt* dof, const double* values) {
    for (int a = 0; a < count; ++a) {
      if (dof[a] < 0) continue;
      for (int i = 0; i < dim_; ++i) {
        const PetscInt row = dof[a] + i;
        out[static_cast<std::size_t>(owner(row))].push_back({row, -1, values[a * dim_ + i]});
      }
    }
  });
  const std::vector<Entry> entries = gather(out);
  PetscScalar* g = nullptr;
  petsc_check(VecGetArray(gradient, &g), "VecGetArray");
  for (std::size_t k = 0; k < entries.size();) {
    const PetscInt row = entries[k].row;
    double sum = 0;
    for (; k < entries.size() && entries[k].row == row; ++k) sum += entries[k].value;
    g[row - ranges_[static_cast<std::size_t>(rank_)]] += sum;
  }
  petsc_check(VecRestoreArray(gradient, &g), "VecRestoreArray");
}

void ContactAssembly::add(const std::function<void(const ContactBlock&)>& for_each, ::Mat hessian) {
  std::vector<std::vector<Entry>> out(ranges_.size() - 1);
  for_each([&](int count, const std::int64_t*, const PetscInt* dof, const double* values) {
    const int n = count * dim_;
    for (int a = 0; a < count; ++a) {
      if (dof[a] < 0) continue;
      for (int i = 0; i < dim_; ++i) {
        const PetscInt row = dof[a] + i;
        auto& list = out[static_cast<std::size_t>(owner(row))];
        for (int b = 0; b < count; ++b) {
          if (dof[b] < 0) continue;
          for (int j = 0; j < dim_; ++j) list.push_back({row, dof[b] + j, values[(a * dim_ + i) * n + b * dim_ + j]});
        }
      }
    }
  });
  std::vector<Entry> entries = gather(out);
  std::vector<PetscInt> cols;
  std::vector<PetscScalar> vals;
  for (std::size_t k = 0; k < entries.size();) {
    const PetscInt row = entries[k].row;
    cols.clear();
    vals.clear();
    while (k < entries.size() && entries[k].row == row) {
      const PetscInt col = entries[k].col;
      double sum = 0;
      for (; k < entries.size() && entries[k].row == row && entries[k].col == col; ++k) sum += entries[k].value;
      cols.push_back(col);
      vals.push_back(sum);
    }
    petsc_check(MatSetValues(hessian, 1, &row, static_cast<PetscInt>(cols.size()), cols.data(), vals.data(),
                             ADD_VALUES),
                "MatSetValues");
  }
  petsc_check(MatAssemblyBegin(hessian, MAT_FINAL_ASSEMBLY), "MatAssemblyBegin");
  petsc_check(MatAssemblyEnd(hessian, MAT_FINAL_ASSEMBLY), "MatAssemblyEnd");
}

}  // namespace percussion::ipc
