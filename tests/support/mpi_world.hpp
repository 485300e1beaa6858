#pragma once
// This process's rank and the rank count of MPI_COMM_WORLD, for tests.
#include <mpi.h>

namespace percussion::test {

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

inline int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

}  // namespace percussion::test
