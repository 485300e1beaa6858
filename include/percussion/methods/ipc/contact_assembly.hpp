#pragma once
// Contact blocks (contact_blocks.hpp) added into the step's gradient and Hessian on the ranks that own their rows,
// in an order that does not depend on message arrival: every entry travels to its row's owner, which sorts the
// entries of each (row, column) by value before summing. A run and its restart then add the same numbers in the
// same order (bit-identical on the same rank count), and the matrix needs no off-rank insertion.
#include <mpi.h>
#include <petscmat.h>

#include <functional>
#include <vector>

#include "percussion/methods/ipc/contact_blocks.hpp"

namespace percussion::ipc {

class ContactAssembly {
 public:
  // Collective. rows: a global vector of the system (its ownership ranges and block size dim are read).
  ContactAssembly(MPI_Comm comm, ::Vec rows, int dim);

  // Collective. Adds every block that for_each emits into `gradient` (owned rows, in place) or into `hessian`
  // (ADD_VALUES on owned rows, then a final assembly). A negative first dof marks a vertex whose dofs are not
  // unknowns (prescribed): its rows and columns are skipped.
  void add(const std::function<void(const ContactBlock&)>& for_each, ::Vec gradient);
  void add(const std::function<void(const ContactBlock&)>& for_each, ::Mat hessian);

 private:
  struct Entry {
    PetscInt row, col;  // col = -1 for vector entries
    double value;
  };
  // Sends entries to their rows' owners; returns this rank's entries sorted by (row, col, value).
  std::vector<Entry> gather(std::vector<std::vector<Entry>>& out) const;
  int owner(PetscInt row) const;

  MPI_Comm comm_;
  int dim_ = 1, rank_ = 0;
  std::vector<PetscInt> ranges_;  // ownership ranges of the rows, size ranks + 1
};

}  // namespace percussion::ipc
