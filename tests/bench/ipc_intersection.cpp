// Cost of the distributed intersection check (methods/ipc/contact_intersection) on two unit cubes 0.01 apart:
// surface triangles, seconds per check (the slowest rank, best of 3) for a few mesh sizes.
// Usage: mpirun -n N ipc_intersection [element sizes...]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "percussion/geometry/mesh/plex_mesh.hpp"
#include "percussion/methods/ipc/contact_intersection.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  PetscInitializeNoArguments();
  using namespace percussion;
  std::vector<double> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atof(argv[i]));
  if (sizes.empty()) sizes = {0.1, 0.05, 0.035};
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (rank == 0) std::printf("ranks element_size triangles pairs_found seconds_per_check\n");
  for (double h : sizes) {
    const geometry::BoxShape cube{3, {0, 0, 0}, {1, 1, 1}, h};
    geometry::Placement upper;
    upper.translation = Eigen::Vector3d(0.137, 0.071, 1.01);
    const std::vector<geometry::MeshBody> bodies = {{cube, {}, 0}, {cube, upper, 1}};
    const geometry::PlexMesh mesh = geometry::build_plex_mesh(MPI_COMM_WORLD, bodies);
    const ipc::ContactSurface surface = ipc::build_contact_surface(MPI_COMM_WORLD, mesh);
    long triangles = static_cast<long>(surface.triangles.size());
    MPI_Allreduce(MPI_IN_PLACE, &triangles, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    double best = 1e300;
    ipc::IntersectionReport report;
    for (int repeat = 0; repeat < 3; ++repeat) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double start = MPI_Wtime();
      report = ipc::find_intersections(MPI_COMM_WORLD, surface, mesh.vertex_coordinates, {});
      double seconds = MPI_Wtime() - start;
      MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      best = std::min(best, seconds);
    }
    if (rank == 0) std::printf("%d %g %ld %ld %.4f\n", ranks, h, triangles, static_cast<long>(report.count()), best);
  }
  PetscFinalize();
  MPI_Finalize();
  return 0;
}
