// Cost of building a distributed ball mesh: Gmsh's generation alone, then the whole build_plex_mesh (generation,
// DMPlex creation and interpolation, partition, distribution, local arrays), and the cell balance over ranks.
// Prints one row per element size; scripts/bench/plex_mesh.sh runs it on 1 and 2 ranks.
// Usage: plex_mesh_build H...   (element sizes of a unit ball)
#include <mpi.h>
#include <petscsys.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "percussion/geometry/mesh/gmsh_generator.hpp"
#include "percussion/geometry/mesh/plex_mesh.hpp"

using namespace percussion::geometry;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  PetscInitialize(nullptr, nullptr, nullptr, nullptr);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) std::printf("ranks  h       cells     vertices  gmsh_s   build_s  max/mean_cells\n");
  for (int i = 1; i < argc; ++i) {
    const double h = std::atof(argv[i]);
    double gmsh_seconds = 0;
    if (rank == 0) {
      const double t = MPI_Wtime();
      generate_gmsh_mesh(BallShape{1, h});
      gmsh_seconds = MPI_Wtime() - t;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const double t = MPI_Wtime();
    const PlexMesh mesh = build_plex_mesh(MPI_COMM_WORLD, std::vector<MeshBody>{MeshBody{BallShape{1, h}, {}, 0}});
    MPI_Barrier(MPI_COMM_WORLD);
    const double build_seconds = MPI_Wtime() - t;
    long owned = mesh.owned_cell_count, most = 0;
    MPI_Reduce(&owned, &most, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      std::printf("%5d  %-6g  %8lld  %8lld  %7.2f  %7.2f  %6.3f\n", size, h, static_cast<long long>(mesh.global_cell_count),
                  static_cast<long long>(mesh.global_vertex_count), gmsh_seconds, build_seconds,
                  static_cast<double>(most) * size / static_cast<double>(mesh.global_cell_count));
    }
  }
  PetscFinalize();
  MPI_Finalize();
  return 0;
}
