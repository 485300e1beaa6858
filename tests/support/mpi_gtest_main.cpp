// One main for every test executable: MPI and PETSc up, GoogleTest, then down again.
// Only rank 0 prints GoogleTest's listener output so MPI runs stay readable.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscsys.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  PetscOptionsSetValue(nullptr, "-no_signal_handler", nullptr);
  PetscInitialize(nullptr, nullptr, nullptr, nullptr);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int result = RUN_ALL_TESTS();
  // A failure on any rank fails the run on every rank.
  int any = result;
  MPI_Allreduce(&result, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  PetscFinalize();
  MPI_Finalize();
  return any;
}
