// Gmsh files: a mesh Gmsh writes reads back through DMPlex unchanged; missing and malformed files are input errors
// that name the file, on every rank.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../support/plex_mesh_support.hpp"
#include "percussion/core/error.hpp"
#include "percussion/geometry/mesh/gmsh_generator.hpp"
#include "percussion/geometry/mesh/plex_mesh.hpp"

namespace mpi_plex_mesh_gmsh {

namespace {

using namespace percussion::geometry;
using percussion::InputError;

// A file name unique to this run (ctest may run the 1, 2 and 3 rank variants at once), known to every rank.
std::string scratch(const std::string& name) {
  long pid = static_cast<long>(getpid());
  MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  return (std::filesystem::temp_directory_path() / ("percussion_" + std::to_string(pid) + "_" + name)).string();
}

// The message every rank got from building a one-body scene of the file, or "" if it built.
std::string build_error(const std::string& path) {
  try {
    build_plex_mesh(MPI_COMM_WORLD, std::vector<MeshBody>{MeshBody{GmshFileShape{path}, {}, 0}});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(PlexMeshGmsh, FileWrittenByGmshReadsBackAsTheGeneratedMesh) {
  const std::vector<GeneratedShape> shapes{DiskShape{1, 0.3}, BallShape{1, 0.4}};
  for (const GeneratedShape& shape : shapes) {
    const std::string path = scratch("shape.msh");
    if (plex_test::rank_of(MPI_COMM_WORLD) == 0) write_gmsh_file(shape, path);
    MPI_Barrier(MPI_COMM_WORLD);
    BodyShape generated = std::visit([](const auto& s) { return BodyShape(s); }, shape);
    const PlexMesh from_file = build_plex_mesh(MPI_COMM_WORLD, std::vector<MeshBody>{MeshBody{GmshFileShape{path}, {}, 0}});
    const PlexMesh direct = build_plex_mesh(MPI_COMM_WORLD, std::vector<MeshBody>{MeshBody{generated, {}, 0}});
    if (plex_test::rank_of(MPI_COMM_WORLD) == 0) std::remove(path.c_str());
    EXPECT_EQ(from_file.dim, direct.dim);
    EXPECT_EQ(from_file.global_vertex_count, direct.global_vertex_count);
    EXPECT_EQ(from_file.global_cell_count, direct.global_cell_count);
    EXPECT_EQ(from_file.global_boundary_face_count, direct.global_boundary_face_count);
    const double volume = plex_test::total_volume(MPI_COMM_WORLD, direct);
    // The file stores coordinates to 16 digits.
    EXPECT_NEAR(plex_test::total_volume(MPI_COMM_WORLD, from_file), volume, 1e-12 * volume);
    EXPECT_NEAR(plex_test::divergence_volume(MPI_COMM_WORLD, from_file), volume, 1e-12 * volume);
  }
}

// Files the gmsh program wrote (tests/data/mesh/*.geo say how): format 2.2 with physical faces, and format 4.1
// without physical groups, where points and lines are saved next to the cells.
TEST(PlexMeshGmsh, FilesFromTheGmshProgramRead) {
  const char* source = std::getenv("PERCUSSION_SOURCE_DIR");
  const std::string dir = std::string(source ? source : ".") + "/tests/data/mesh/";
  for (const auto& [file, volume] : {std::pair{"box_1x2x3_msh22.msh", 6.0}, std::pair{"rectangle_2x1.msh", 2.0}}) {
    const std::vector<MeshBody> body{MeshBody{GmshFileShape{dir + file}, {}, 0}};
    const PlexMesh mesh = build_plex_mesh(MPI_COMM_WORLD, body);
    EXPECT_NEAR(plex_test::total_volume(MPI_COMM_WORLD, mesh), volume, 1e-12) << file;
    EXPECT_NEAR(plex_test::divergence_volume(MPI_COMM_WORLD, mesh), volume, 1e-12) << file;
    if (plex_test::rank_of(MPI_COMM_WORLD) != 0) continue;
    const PlexMesh one = build_plex_mesh(MPI_COMM_SELF, body);
    EXPECT_EQ(mesh.global_boundary_face_count, one.global_boundary_face_count) << file;
    EXPECT_EQ(mesh.global_vertex_count, one.global_vertex_count) << file;
  }
}

TEST(PlexMeshGmsh, MissingFileIsAnInputErrorNamingIt) {
  const std::string path = scratch("does_not_exist.msh");
  const std::string message = build_error(path);
  EXPECT_NE(message.find(path), std::string::npos) << message;
}

TEST(PlexMeshGmsh, MalformedFileIsAnInputErrorNamingIt) {
  const std::string path = scratch("malformed.msh");
  // Not a mesh at all, then a mesh Gmsh wrote cut off in its nodes and in its elements.
  for (double kept : {0.0, 0.3, 0.9}) {
    if (plex_test::rank_of(MPI_COMM_WORLD) == 0) {
      if (kept == 0) {
        std::ofstream(path) << "this is not a mesh\n";
      } else {
        write_gmsh_file(BallShape{1, 0.5}, path);
        const auto size = static_cast<double>(std::filesystem::file_size(path));
        std::filesystem::resize_file(path, static_cast<std::uintmax_t>(kept * size));
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const std::string message = build_error(path);
    EXPECT_NE(message.find(path), std::string::npos) << "kept " << kept << ": " << message;
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (plex_test::rank_of(MPI_COMM_WORLD) == 0) std::remove(path.c_str());
}

TEST(PlexMeshGmsh, MixedDimensionsReflectionsAndUnknownPartitionersAreInputErrors) {
  std::vector<MeshBody> bodies{MeshBody{DiskShape{1, 0.5}, {}, 0}, MeshBody{BallShape{1, 0.5}, {}, 1}};
  EXPECT_THROW(build_plex_mesh(MPI_COMM_WORLD, bodies), InputError);
  std::vector<MeshBody> disk{MeshBody{DiskShape{1, 0.5}, {}, 0}};
  EXPECT_THROW(build_plex_mesh(MPI_COMM_WORLD, disk, MeshOptions{"shell", 0}), InputError);
  EXPECT_THROW(build_plex_mesh(MPI_COMM_WORLD, disk, MeshOptions{"no-such-partitioner", 0}), InputError);
  std::vector<MeshBody> reflected{MeshBody{DiskShape{1, 0.5}, {}, 0}};
  reflected[0].placement.rotation(0, 0) = -1;
  EXPECT_THROW(build_plex_mesh(MPI_COMM_WORLD, reflected), InputError);
}

}  // namespace

}  // namespace mpi_plex_mesh_gmsh
