// The scene's bodies in one distributed DMPlex: volumes, outward closed boundaries, and the same vertices, ids and
// coordinates on this run's ranks as on one rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <Eigen/Geometry>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "../support/plex_mesh_support.hpp"
#include "percussion/geometry/mesh/plex_mesh.hpp"

namespace mpi_plex_mesh {

namespace {

using namespace percussion::geometry;
using plex_test::allsum;
using plex_test::rank_of;

PlexMesh build(MPI_Comm comm, std::vector<MeshBody> bodies, int overlap = 0) {
  MeshOptions options;
  options.overlap = overlap;
  return build_plex_mesh(comm, bodies, options);
}

TEST(PlexMesh, BoxVolumeIsExactAndEveryCellPositive) {
  for (int dim : {2, 3}) {
    BoxShape box{dim, {-1, 0, 0.5}, {1, 0.5, 1.25}, 0.2};
    const PlexMesh mesh = build(MPI_COMM_WORLD, {MeshBody{box, {}, 0}});
    const double expected = dim == 2 ? 2 * 0.5 : 2 * 0.5 * 0.75;
    EXPECT_NEAR(plex_test::total_volume(MPI_COMM_WORLD, mesh), expected, 1e-12) << "dim " << dim;
    for (double v : cell_signed_volumes(mesh, mesh.vertex_coordinates)) EXPECT_GT(v, 0);
    EXPECT_GT(mesh.global_cell_count, dim == 2 ? 40 : 200);  // the element size was honoured
  }
}

TEST(PlexMesh, DiskAndBallVolumesWithinThePolygonalError) {
  const double r = 1.5, h = 0.3;
  const PlexMesh disk = build(MPI_COMM_WORLD, {MeshBody{DiskShape{r, h}, {}, 0}});
  const PlexMesh ball = build(MPI_COMM_WORLD, {MeshBody{BallShape{r, h}, {}, 0}});
  const double area = plex_test::total_volume(MPI_COMM_WORLD, disk);
  const double volume = plex_test::total_volume(MPI_COMM_WORLD, ball);
  const double exact_area = M_PI * r * r, exact_volume = 4.0 / 3.0 * M_PI * r * r * r;
  // Inscribed: smaller than the exact shape, by at most the segments cut off by chords of length ~h.
  EXPECT_LT(area, exact_area);
  EXPECT_GT(area, exact_area * (1 - h * h / (r * r)));
  EXPECT_LT(volume, exact_volume);
  EXPECT_GT(volume, exact_volume * (1 - 1.5 * h * h / (r * r)));
  EXPECT_EQ(disk.dim, 2);
  EXPECT_EQ(ball.dim, 3);
}

TEST(PlexMesh, BoundaryFacesPointOutward) {
  Placement tilted;
  tilted.translation = Eigen::Vector3d(3, -1, 2);
  tilted.scale = 0.5;
  for (const BodyShape& shape : {BodyShape(DiskShape{1, 0.25}), BodyShape(BallShape{1, 0.35}),
                                 BodyShape(BoxShape{3, {0, 0, 0}, {1, 2, 1}, 0.4})}) {
    tilted.rotation = Eigen::AngleAxisd(0.7, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix();
    if (shape_dimension(shape) == 2) tilted.rotation = Eigen::AngleAxisd(0.7, Eigen::Vector3d::UnitZ()).toRotationMatrix();
    const PlexMesh mesh = build(MPI_COMM_WORLD, {MeshBody{shape, tilted, 0}});
    const double volume = plex_test::total_volume(MPI_COMM_WORLD, mesh);
    EXPECT_NEAR(plex_test::divergence_volume(MPI_COMM_WORLD, mesh), volume, 1e-12 * volume);
  }
}

TEST(PlexMesh, BallSurfaceIsClosedAndConsistentlyOriented) {
  const PlexMesh mesh = build(MPI_COMM_WORLD, {MeshBody{BallShape{1, 0.35}, {}, 0}}, 1);
  const auto faces = plex_test::owned_faces(MPI_COMM_WORLD, mesh);
  if (rank_of(MPI_COMM_WORLD) != 0) return;
  EXPECT_EQ(static_cast<std::int64_t>(faces.size()), mesh.global_boundary_face_count);
  // Closed: every edge on two faces; consistently oriented: each face walks it the other way.
  std::map<std::pair<std::int64_t, std::int64_t>, int> directed;
  for (const auto& f : faces) {
    for (int i = 0; i < 3; ++i) ++directed[{f[i], f[(i + 1) % 3]}];
  }
  for (const auto& [edge, count] : directed) {
    EXPECT_EQ(count, 1);
    EXPECT_EQ(directed.count({edge.second, edge.first}), 1u);
  }
  // A sphere's triangulation: V - E + F = 2.
  std::set<std::int64_t> vertices;
  for (const auto& f : faces) vertices.insert(f.begin(), f.end());
  EXPECT_EQ(static_cast<std::int64_t>(vertices.size()) - static_cast<std::int64_t>(directed.size() / 2) +
                static_cast<std::int64_t>(faces.size()),
            2);
}

// Two bodies, one rotated, scaled and moved: built on this run's ranks with an overlap and on rank 0 alone.
std::vector<MeshBody> two_bodies(int dim) {
  MeshBody box{BoxShape{dim, {0, 0, 0}, {2, 1, 1}, 0.3}, {}, 7};
  MeshBody round{dim == 2 ? BodyShape(DiskShape{1, 0.25}) : BodyShape(BallShape{1, 0.35}), {}, 3};
  round.placement.rotation = Eigen::AngleAxisd(0.3, Eigen::Vector3d::UnitZ()).toRotationMatrix();
  round.placement.translation = Eigen::Vector3d(1, 3, 0);
  round.placement.scale = 0.75;
  return {box, round};
}

TEST(PlexMesh, SameIdsCoordinatesAndFacesOnOneAndManyRanks) {
  for (int dim : {2, 3}) {
    const PlexMesh many = build(MPI_COMM_WORLD, two_bodies(dim), 1);
    const auto vertices = plex_test::owned_vertices(MPI_COMM_WORLD, many);
    auto faces = plex_test::owned_faces(MPI_COMM_WORLD, many);
    // Every rank got a share of the cells and of the vertices.
    EXPECT_GT(many.owned_cell_count, 0);
    EXPECT_GT(many.owned_vertex_count, 0);
    // Ghosts come after the owned items and name another rank as owner.
    for (PetscInt v = 0; v < many.local_vertex_count(); ++v) {
      EXPECT_EQ(many.vertex_owner[static_cast<std::size_t>(v)] == rank_of(MPI_COMM_WORLD), v < many.owned_vertex_count);
    }
    // Cells per body.
    std::map<int, double> body_volume;
    const auto volumes = cell_signed_volumes(many, many.vertex_coordinates);
    for (PetscInt c = 0; c < many.owned_cell_count; ++c) body_volume[many.cell_body[static_cast<std::size_t>(c)]] += volumes[static_cast<std::size_t>(c)];
    EXPECT_NEAR(allsum(MPI_COMM_WORLD, body_volume[7]), 2.0, 1e-12);
    if (rank_of(MPI_COMM_WORLD) != 0) continue;

    const PlexMesh one = build(MPI_COMM_SELF, two_bodies(dim), 0);
    const auto one_vertices = plex_test::owned_vertices(MPI_COMM_SELF, one);
    auto one_faces = plex_test::owned_faces(MPI_COMM_SELF, one);
    EXPECT_EQ(many.global_vertex_count, one.global_vertex_count);
    EXPECT_EQ(many.global_cell_count, one.global_cell_count);
    EXPECT_EQ(many.global_edge_count, one.global_edge_count);
    EXPECT_EQ(many.global_boundary_face_count, one.global_boundary_face_count);
    ASSERT_EQ(static_cast<std::int64_t>(vertices.size()), one.global_vertex_count);  // each id owned once
    EXPECT_EQ(vertices.begin()->first, 0);
    EXPECT_EQ(vertices.rbegin()->first, one.global_vertex_count - 1);
    EXPECT_TRUE(vertices == one_vertices);  // same ids, bitwise the same coordinates
    // The same faces with the same outward order, up to a cyclic shift.
    auto canonical = [](std::vector<std::vector<std::int64_t>>& list) {
      for (auto& f : list) std::rotate(f.begin(), std::min_element(f.begin(), f.end()), f.end());
      std::sort(list.begin(), list.end());
    };
    canonical(faces);
    canonical(one_faces);
    EXPECT_TRUE(faces == one_faces);
    // The moved body's vertices sit around its translation.
    Eigen::Vector2d centre = Eigen::Vector2d::Zero();
    int count = 0;
    for (PetscInt v = 0; v < one.local_vertex_count(); ++v) {
      if (one.vertex_body[static_cast<std::size_t>(v)] != 3) continue;
      centre += Eigen::Vector2d(one.vertex_coordinates[static_cast<std::size_t>(v * dim)],
                                one.vertex_coordinates[static_cast<std::size_t>(v * dim + 1)]);
      ++count;
    }
    EXPECT_NEAR(centre.x() / count, 1, 0.05);
    EXPECT_NEAR(centre.y() / count, 3, 0.05);
  }
}

TEST(PlexMesh, MirroredPositionsInvertEveryCell) {
  const PlexMesh mesh = build(MPI_COMM_WORLD, {MeshBody{BallShape{1, 0.4}, {}, 0}});
  std::vector<double> mirrored = mesh.vertex_coordinates;
  for (std::size_t i = 0; i < mirrored.size(); i += 3) mirrored[i] = -mirrored[i];
  const auto rest = cell_signed_volumes(mesh, mesh.vertex_coordinates);
  const auto after = cell_signed_volumes(mesh, mirrored);
  for (std::size_t c = 0; c < rest.size(); ++c) EXPECT_DOUBLE_EQ(after[c], -rest[c]);
  EXPECT_THROW(cell_signed_volumes(mesh, std::vector<double>(3)), std::invalid_argument);
}

TEST(PlexMesh, CellEdgesFollowTheDocumentedOrder) {
  const PlexMesh mesh = build(MPI_COMM_WORLD, {MeshBody{BallShape{1, 0.4}, {}, 0}}, 1);
  for (PetscInt c = 0; c < mesh.local_cell_count(); ++c) {
    for (int k = 0; k < 6; ++k) {
      const PetscInt e = mesh.cell_edges[static_cast<std::size_t>(c * 6 + k)];
      const PetscInt a = mesh.cell_vertices[static_cast<std::size_t>(c * 4 + kTetrahedronEdges[k][0])];
      const PetscInt b = mesh.cell_vertices[static_cast<std::size_t>(c * 4 + kTetrahedronEdges[k][1])];
      const std::set<PetscInt> want{a, b}, got{mesh.edge_vertices[static_cast<std::size_t>(2 * e)],
                                               mesh.edge_vertices[static_cast<std::size_t>(2 * e + 1)]};
      ASSERT_EQ(want, got);
    }
  }
}

}  // namespace

}  // namespace mpi_plex_mesh
