// The distributed intersection check of the contact surfaces (methods/ipc/contact_intersection) on generated
// meshes: overlapping bodies, a strip folded through itself, vertices on and behind a plane and bodies touching
// give the counts of an all-pairs serial reference, on this run's ranks as on one; separated bodies and bodies
// d̂ apart give none; a body inside another is found by ray parity.
#include <gtest/gtest.h>
#include <mpi.h>

#include "../support/ipc_contact_support.hpp"
#include "percussion/geometry/intersection/edge_triangle.hpp"
#include "percussion/methods/ipc/contact_broad_phase.hpp"
#include "percussion/geometry/intersection/segment_segment.hpp"
#include "percussion/methods/ipc/contact_intersection.hpp"

namespace mpi_ipc_intersection {

namespace {

using namespace ipc_contact_test;
using percussion::ipc::ContactSurface;
using percussion::ipc::IntersectionExample;
using percussion::ipc::IntersectionReport;
using Kind = IntersectionExample::Kind;

IntersectionReport check(MPI_Comm comm, const Scene& s) {
  const Built b = build(comm, s);
  return ipc::find_intersections(comm, b.surface, b.x, s.options.planes);
}

// All primitive pairs (whose closed boxes overlap: the others cannot meet) and all vertices of a one-rank
// surface, without broad phase or exchange: {between bodies, within one body, on or behind a plane}.
std::array<std::int64_t, 3> brute_force(const Built& one, const Scene& s) {
  const ContactSurface& f = one.surface;
  auto at = [&](std::int32_t i) {
    Eigen::Vector3d p = Eigen::Vector3d::Zero();
    for (int c = 0; c < f.dim; ++c) p[c] = one.x[std::size_t(f.vertex_mesh_index[std::size_t(i)]) * f.dim + c];
    return p;
  };
  auto apart = [&](std::initializer_list<std::int32_t> u, std::initializer_list<std::int32_t> v) {
    ipc::Box a, b;
    for (std::int32_t i : u) a.extend(at(i));
    for (std::int32_t i : v) b.extend(at(i));
    return !a.overlaps(b);
  };
  std::array<std::int64_t, 3> n{0, 0, 0};
  auto count = [&](std::int32_t u, std::int32_t v, bool meet) {
    if (meet) ++n[f.vertex_body[std::size_t(u)] == f.vertex_body[std::size_t(v)] ? 1 : 0];
  };
  for (std::size_t i = 0; i < f.edges.size(); ++i) {
    const auto& e = f.edges[i];
    if (f.dim == 2) {
      for (std::size_t j = i + 1; j < f.edges.size(); ++j) {
        const auto& g = f.edges[j];
        if (e[0] == g[0] || e[0] == g[1] || e[1] == g[0] || e[1] == g[1] || apart({e[0], e[1]}, {g[0], g[1]}))
          continue;
        count(e[0], g[0], geometry::segment_segment(at(e[0]).head<2>(), at(e[1]).head<2>(), at(g[0]).head<2>(),
                                                    at(g[1]).head<2>()) != geometry::Intersection::none);
      }
      continue;
    }
    for (const auto& t : f.triangles) {
      if (std::find(t.begin(), t.end(), e[0]) != t.end() || std::find(t.begin(), t.end(), e[1]) != t.end() ||
          apart({e[0], e[1]}, {t[0], t[1], t[2]}))
        continue;
      count(e[0], t[0],
            geometry::edge_triangle(at(e[0]), at(e[1]), at(t[0]), at(t[1]), at(t[2])) != geometry::Intersection::none);
    }
  }
  for (std::size_t i = 0; i < f.vertex_count(); ++i)
    for (const ipc::HalfPlane& h : s.options.planes)
      if (h.normal.dot(at(static_cast<std::int32_t>(i)) - h.point) <= 0) {
        ++n[2];
        break;
      }
  return n;
}

// The report on this run's ranks equals the one-rank report and the serial reference's counts.
IntersectionReport expect_consistent(const Scene& s) {
  const IntersectionReport r = check(MPI_COMM_WORLD, s);
  // Every rank holds the same report.
  std::int64_t mine[8] = {r.between_bodies, r.within_body, r.behind_planes, r.nested,
                          static_cast<std::int64_t>(r.example.kind), r.example.vertex[0], r.example.vertex[2],
                          r.example.body[1]};
  std::int64_t low[8], high[8];
  MPI_Allreduce(mine, low, 8, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(mine, high, 8, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  for (int k = 0; k < 8; ++k) EXPECT_EQ(low[k], high[k]) << k;
  if (rank_of(MPI_COMM_WORLD) == 0) {
    const Built serial = build(MPI_COMM_SELF, s);
    const IntersectionReport one = ipc::find_intersections(MPI_COMM_SELF, serial.surface, serial.x, s.options.planes);
    const auto ref = brute_force(serial, s);
    EXPECT_EQ(r.between_bodies, ref[0]);
    EXPECT_EQ(r.within_body, ref[1]);
    EXPECT_EQ(r.behind_planes, ref[2]);
    EXPECT_EQ(r.nested, one.nested);
    EXPECT_EQ(r.example.kind, one.example.kind);
    EXPECT_EQ(r.example.body, one.example.body);
    EXPECT_EQ(r.example.vertex, one.example.vertex);
    EXPECT_EQ(r.example.plane, one.example.plane);
  }
  return r;
}

Scene two_disks(double distance, double inner_radius = 0.5) {
  Scene s;
  s.bodies = {body(geometry::DiskShape{0.5, 0.1}, Eigen::Vector3d::Zero(), 0),
              body(geometry::DiskShape{inner_radius, 0.1}, Eigen::Vector3d(distance, 0.0123, 0), 1)};
  s.options.dhat = 0.01;
  return s;
}

// Unit squares side by side, gap apart in x (exactly: 1 + gap is a double's sum of exact binary fractions).
Scene two_squares(double gap) {
  Scene s;
  const geometry::BoxShape square{2, {0, 0, 0}, {1, 1, 0}, 0.25};
  s.bodies = {body(square, Eigen::Vector3d::Zero(), 0), body(square, Eigen::Vector3d(1 + gap, 0.375, 0), 1)};
  s.options.dhat = 0.0625;
  return s;
}

TEST(IpcIntersection, OverlappingBodiesIntersect) {
  const IntersectionReport disks = expect_consistent(two_disks(0.9));
  EXPECT_GE(disks.between_bodies, 2);  // the circles cross twice
  EXPECT_EQ(disks.within_body, 0);
  EXPECT_EQ(disks.example.kind, Kind::primitives);
  EXPECT_EQ(disks.example.body, (std::array<std::int32_t, 2>{0, 1}));
  EXPECT_NE(ipc::describe(disks, 2).find("body 0 and body 1 intersect: edge "), std::string::npos);
  EXPECT_EQ(ipc::input_pointer(disks), "/bodies");
  const IntersectionReport boxes = expect_consistent(two_boxes(-0.1, 0.05));
  EXPECT_GE(boxes.between_bodies, 4);  // the upper cube's four vertical sides cross the lower's top
  EXPECT_EQ(boxes.example.body, (std::array<std::int32_t, 2>{0, 1}));
  EXPECT_NE(ipc::describe(boxes, 3).find("meets triangle"), std::string::npos);
}

TEST(IpcIntersection, SeparatedAndDhatApartBodiesDoNot) {
  for (const Scene& s : {two_boxes(0.02, 0.05), disk_box_plane(0.01, 0.03), folded_strip(0.02, 0.03),
                         two_squares(0.0625)}) {
    const IntersectionReport r = expect_consistent(s);
    EXPECT_EQ(r.count(), 0);
    EXPECT_EQ(r.example.kind, Kind::none);
    EXPECT_EQ(ipc::describe(r, 2), "");
  }
}

TEST(IpcIntersection, TouchingBodiesAndSelfIntersectionCount) {
  // Squares sharing a side: collinear overlaps, touching.
  const IntersectionReport squares = expect_consistent(two_squares(0.0));
  EXPECT_GE(squares.between_bodies, 3);
  // Cubes face to face.
  EXPECT_GT(expect_consistent(two_boxes(0.0, 0.05)).between_bodies, 0);
  // A strip folded through itself: its legs' edges cross, no other body involved.
  const IntersectionReport strip = expect_consistent(folded_strip(-0.02, 0.03));
  EXPECT_GE(strip.within_body, 1);
  EXPECT_EQ(strip.between_bodies, 0);
  EXPECT_EQ(strip.example.body, (std::array<std::int32_t, 2>{0, 0}));
  EXPECT_NE(ipc::describe(strip, 2).find("body 0 intersects itself"), std::string::npos);
}

TEST(IpcIntersection, VerticesOnOrBehindAPlane) {
  // The box 0.01 below the plane y = −0.5 (the disk clear of it): its bottom side's vertices (2 / 0.2 + 1 at
  // least) are behind the plane.
  Scene sunk = disk_box_plane(0.01, 0.03);
  sunk.bodies[0].placement.translation.y() = -0.01;
  const IntersectionReport behind = expect_consistent(sunk);
  EXPECT_GE(behind.behind_planes, 11);
  EXPECT_EQ(behind.between_bodies, 0);
  EXPECT_EQ(behind.example.kind, Kind::plane);
  EXPECT_EQ(behind.example.body[0], 0);
  EXPECT_EQ(ipc::input_pointer(behind), "/obstacles/0");
  // Exactly on the plane counts too (the barrier is infinite there).
  sunk.bodies[0].placement.translation.y() = 0.0;
  EXPECT_EQ(expect_consistent(sunk).behind_planes, behind.behind_planes);
}

TEST(IpcIntersection, ABodyInsideAnotherIsFoundByRayParity) {
  const IntersectionReport disk = expect_consistent(two_disks(0.1, 0.2));
  EXPECT_EQ(disk.between_bodies + disk.within_body, 0);
  EXPECT_EQ(disk.nested, 1);
  EXPECT_EQ(disk.example.kind, Kind::nested);
  EXPECT_EQ(disk.example.body, (std::array<std::int32_t, 2>{1, 0}));
  EXPECT_NE(ipc::describe(disk, 2).find("body 1 lies inside body 0"), std::string::npos);
  // A cube in a cube, both axis-aligned: the ray from a corner runs along the outer cube's grid lines.
  Scene cubes;
  cubes.bodies = {body(geometry::BoxShape{3, {0, 0, 0}, {1, 1, 1}, 0.5}, Eigen::Vector3d::Zero(), 0),
                  body(geometry::BoxShape{3, {0, 0, 0}, {0.5, 0.5, 0.5}, 0.5}, Eigen::Vector3d(0.25, 0.25, 0.25), 1)};
  const IntersectionReport boxes = expect_consistent(cubes);
  EXPECT_EQ(boxes.between_bodies, 0);
  EXPECT_EQ(boxes.nested, 1);
  EXPECT_EQ(boxes.example.body, (std::array<std::int32_t, 2>{1, 0}));
}

}  // namespace

}  // namespace mpi_ipc_intersection
