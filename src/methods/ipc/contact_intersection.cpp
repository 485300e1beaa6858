#include "percussion/methods/ipc/contact_intersection.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "percussion/geometry/intersection/edge_triangle.hpp"
#include "percussion/geometry/intersection/ray_parity.hpp"
#include "percussion/geometry/intersection/segment_segment.hpp"
#include "percussion/methods/ipc/contact_broad_phase.hpp"
#include "percussion/methods/ipc/contact_exchange.hpp"

namespace percussion::ipc {
namespace {

using Kind = IntersectionExample::Kind;

// A surface primitive (2D: edge; 3D: edge or triangle) as it travels to the ranks whose region it overlaps.
struct Record {
  std::int32_t corners, owner, body, unused;
  std::int64_t gid[3];
  double x[3][3];
  Eigen::Vector3d at(int k) const { return {x[k][0], x[k][1], x[k][2]}; }
  Box box() const {
    Box b;
    for (int k = 0; k < corners; ++k) b.extend(at(k));
    return b;
  }
  bool shares_vertex(const Record& o) const {
    for (int i = 0; i < corners; ++i)
      for (int j = 0; j < o.corners; ++j)
        if (gid[i] == o.gid[j]) return true;
    return false;
  }
};

// Examples compare by kind (primitive pairs of two bodies before those of one), then by vertex ids, so that
// every rank count picks the same one.
struct Candidate {
  std::int32_t rank_key = std::numeric_limits<std::int32_t>::max();
  IntersectionExample example;
  bool operator<(const Candidate& o) const {
    return rank_key != o.rank_key ? rank_key < o.rank_key : example.vertex < o.example.vertex;
  }
};

void offer(Candidate& best, std::int32_t key, const IntersectionExample& e) {
  const Candidate c{key, e};
  if (c < best) best = c;
}

// The triangle's ids rotated to start at the smallest (orientation kept), edges' in increasing order.
IntersectionExample primitive_example(const Record& a, const Record& b) {
  IntersectionExample e;
  e.kind = Kind::primitives;
  const Record *first = &a, *second = &b;
  std::array<std::int64_t, 2> ea{std::min(a.gid[0], a.gid[1]), std::max(a.gid[0], a.gid[1])};
  if (b.corners == 2) {
    std::array<std::int64_t, 2> eb{std::min(b.gid[0], b.gid[1]), std::max(b.gid[0], b.gid[1])};
    if (eb < ea) {
      std::swap(ea, eb);
      std::swap(first, second);
    }
    e.vertex = {ea[0], ea[1], eb[0], eb[1], -1};
  } else {
    const int k = static_cast<int>(std::min_element(b.gid, b.gid + 3) - b.gid);
    e.vertex = {ea[0], ea[1], b.gid[k], b.gid[(k + 1) % 3], b.gid[(k + 2) % 3]};
  }
  e.body = {first->body, second->body};
  return e;
}

// Own primitives (2D: the boundary edges; 3D: owned edges and the triangles) at the positions x.
std::vector<Record> own_records(const ContactSurface& s, std::span<const double> x, int rank) {
  const int dim = s.dim;
  auto make = [&](std::initializer_list<std::int32_t> v) {
    Record r{static_cast<std::int32_t>(v.size()), rank, 0, 0, {-1, -1, -1}, {}};
    int k = 0;
    for (std::int32_t i : v) {
      const auto m = static_cast<std::size_t>(s.vertex_mesh_index[std::size_t(i)]);
      r.gid[k] = s.vertex_global_id[std::size_t(i)];
      r.body = s.vertex_body[std::size_t(i)];
      for (int c = 0; c < 3; ++c) r.x[k][c] = c < dim ? x[m * std::size_t(dim) + std::size_t(c)] : 0.0;
      ++k;
    }
    return r;
  };
  std::vector<Record> out;
  for (std::size_t e = 0; e < s.edges.size(); ++e)
    if (s.edge_owned[e]) out.push_back(make({s.edges[e][0], s.edges[e][1]}));
  for (const auto& t : s.triangles) out.push_back(make({t[0], t[1], t[2]}));
  return out;
}

// Own primitives plus copies of other ranks' that overlap this rank's region (the pair set's exchange rule).
std::vector<Record> gather_overlapping(MPI_Comm comm, std::vector<Record> mine) {
  std::vector<Box> boxes;
  for (const Record& r : mine) boxes.push_back(r.box());
  std::vector<int> counts;
  const std::vector<Record> arrived = send_to_overlapping_ranks(comm, mine, boxes, 0.0, counts);
  mine.insert(mine.end(), arrived.begin(), arrived.end());
  return mine;
}

// Primitive pairs this rank tests (the smaller owner), counted by same or different body.
void test_pairs(const std::vector<Record>& all, int dim, int rank, std::int64_t counts[2], Candidate& best) {
  std::vector<Box> edge_box, tri_box;
  std::vector<std::int32_t> edges, triangles;
  for (std::size_t i = 0; i < all.size(); ++i) {
    (all[i].corners == 2 ? edges : triangles).push_back(static_cast<std::int32_t>(i));
    (all[i].corners == 2 ? edge_box : tri_box).push_back(all[i].box());
  }
  auto record = [&](const Record& a, const Record& b, bool meet) {
    if (!meet) return;
    const bool self = a.body == b.body;
    ++counts[self ? 1 : 0];
    offer(best, self ? 1 : 0, primitive_example(a, b));
  };
  auto admissible = [&](const Record& a, const Record& b) {
    return std::min(a.owner, b.owner) == rank && !a.shares_vertex(b);
  };
  if (dim == 2) {
    overlapping_boxes(edge_box, edge_box, true, [&](std::int32_t i, std::int32_t j) {
      const Record &a = all[std::size_t(edges[std::size_t(i)])], &b = all[std::size_t(edges[std::size_t(j)])];
      if (!admissible(a, b)) return;
      auto flat = [](const Record& r, int k) { return Eigen::Vector2d(r.x[k][0], r.x[k][1]); };
      record(a, b,
             geometry::segment_segment(flat(a, 0), flat(a, 1), flat(b, 0), flat(b, 1)) !=
                 geometry::Intersection::none);
    });
    return;
  }
  overlapping_boxes(edge_box, tri_box, false, [&](std::int32_t i, std::int32_t j) {
    const Record &a = all[std::size_t(edges[std::size_t(i)])], &b = all[std::size_t(triangles[std::size_t(j)])];
    if (!admissible(a, b)) return;
    record(a, b, geometry::edge_triangle(a.at(0), a.at(1), b.at(0), b.at(1), b.at(2)) != geometry::Intersection::none);
  });
}

}  // namespace

namespace {

Eigen::Vector3d surface_point(const ContactSurface& s, std::span<const double> x, std::size_t i) {
  Eigen::Vector3d p = Eigen::Vector3d::Zero();
  const auto m = static_cast<std::size_t>(s.vertex_mesh_index[i]);
  for (int c = 0; c < s.dim; ++c) p[c] = x[m * std::size_t(s.dim) + std::size_t(c)];
  return p;
}

// Owned surface vertices on or behind a plane (each vertex once, at its first such plane).
std::int64_t behind_planes(const ContactSurface& s, std::span<const double> x, std::span<const HalfPlane> planes,
                           Candidate& best) {
  std::int64_t n = 0;
  for (std::size_t i = 0; i < s.vertex_count(); ++i) {
    if (!s.vertex_owned[i]) continue;
    const Eigen::Vector3d p = surface_point(s, x, i);
    for (std::size_t h = 0; h < planes.size(); ++h)
      if (planes[h].normal.dot(p - planes[h].point) <= 0) {
        ++n;
        IntersectionExample e;
        e.kind = Kind::plane;
        e.body = {s.vertex_body[i], -1};
        e.plane = static_cast<std::int32_t>(h);
        e.vertex[0] = s.vertex_global_id[i];
        offer(best, 2, e);
        break;
      }
  }
  return n;
}

// Bodies whose first surface vertex (smallest global id) is inside another body: the parity of the crossings of
// the ray from it with the other body's boundary faces, summed over the ranks that own the faces.
std::int64_t nested_bodies(MPI_Comm comm, const ContactSurface& s, std::span<const double> x, Candidate& best) {
  int bodies = 0;
  for (int b : s.vertex_body) bodies = std::max(bodies, b + 1);
  MPI_Allreduce(MPI_IN_PLACE, &bodies, 1, MPI_INT, MPI_MAX, comm);
  const auto nb = static_cast<std::size_t>(bodies);
  if (nb < 2) return 0;
  std::vector<std::int64_t> first(nb, std::numeric_limits<std::int64_t>::max());
  for (std::size_t i = 0; i < s.vertex_count(); ++i) {
    auto& f = first[static_cast<std::size_t>(s.vertex_body[i])];
    f = std::min(f, s.vertex_global_id[i]);
  }
  MPI_Allreduce(MPI_IN_PLACE, first.data(), bodies, MPI_INT64_T, MPI_MIN, comm);
  std::vector<double> origin(3 * nb, std::numeric_limits<double>::infinity());
  for (std::size_t i = 0; i < s.vertex_count(); ++i) {
    const auto b = static_cast<std::size_t>(s.vertex_body[i]);
    if (s.vertex_global_id[i] != first[b]) continue;
    const Eigen::Vector3d p = surface_point(s, x, i);
    for (int c = 0; c < 3; ++c) origin[3 * b + std::size_t(c)] = p[c];
  }
  MPI_Allreduce(MPI_IN_PLACE, origin.data(), 3 * bodies, MPI_DOUBLE, MPI_MIN, comm);
  // crossings[inner · nb + outer]; 2D faces are the edges (all owned), 3D faces the triangles (all owned).
  std::vector<std::int64_t> crossings(nb * nb, 0);
  auto face = [&](std::span<const std::int32_t> v) {
    const auto outer = static_cast<std::size_t>(s.vertex_body[std::size_t(v[0])]);
    Box box;
    for (std::int32_t i : v) box.extend(surface_point(s, x, std::size_t(i)));
    for (std::size_t inner = 0; inner < nb; ++inner) {
      const Eigen::Vector3d p(origin[3 * inner], origin[3 * inner + 1], origin[3 * inner + 2]);
      // The ray runs along +x: faces left of, above or below it are not crossed.
      if (inner == outer || p.x() > box.upper.x() || p.y() < box.lower.y() || p.y() > box.upper.y() ||
          (s.dim == 3 && (p.z() < box.lower.z() || p.z() > box.upper.z())))
        continue;
      auto at = [&](int k) { return surface_point(s, x, std::size_t(v[std::size_t(k)])); };
      const bool crosses = s.dim == 2 ? geometry::ray_crosses_segment(p.head<2>(), at(0).head<2>(), at(1).head<2>())
                                      : geometry::ray_crosses_triangle(p, at(0), at(1), at(2));
      crossings[inner * nb + outer] += crosses;
    }
  };
  if (s.dim == 2)
    for (const auto& e : s.edges) face(e);
  else
    for (const auto& t : s.triangles) face(t);
  MPI_Allreduce(MPI_IN_PLACE, crossings.data(), static_cast<int>(nb * nb), MPI_INT64_T, MPI_SUM, comm);
  std::int64_t n = 0;
  for (std::size_t inner = 0; inner < nb; ++inner)
    for (std::size_t outer = 0; outer < nb; ++outer)
      if (crossings[inner * nb + outer] % 2 == 1) {
        ++n;
        IntersectionExample e;
        e.kind = Kind::nested;
        e.body = {static_cast<std::int32_t>(inner), static_cast<std::int32_t>(outer)};
        e.vertex[0] = first[inner];
        offer(best, 3, e);
      }
  return n;
}

}  // namespace

IntersectionReport find_intersections(MPI_Comm comm, const ContactSurface& surface, std::span<const double> x,
                                      std::span<const HalfPlane> planes) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  Candidate best;
  std::int64_t counts[4] = {0, 0, 0, 0};
  test_pairs(gather_overlapping(comm, own_records(surface, x, rank)), surface.dim, rank, counts, best);
  counts[2] = behind_planes(surface, x, planes, best);
  MPI_Allreduce(MPI_IN_PLACE, counts, 3, MPI_INT64_T, MPI_SUM, comm);
  counts[3] = nested_bodies(comm, surface, x, best);  // already global
  // The first example over all ranks.
  std::vector<Candidate> all(static_cast<std::size_t>(ranks));
  MPI_Allgather(&best, sizeof(Candidate), MPI_BYTE, all.data(), sizeof(Candidate), MPI_BYTE, comm);
  IntersectionReport report{counts[0], counts[1], counts[2], counts[3], {}};
  report.example = std::min_element(all.begin(), all.end())->example;
  return report;
}

std::string describe(const IntersectionReport& r, int dim) {
  const IntersectionExample& e = r.example;
  auto id = [&](int k) { return std::to_string(e.vertex[std::size_t(k)]); };
  switch (e.kind) {
    case Kind::none: return "";
    case Kind::primitives: {
      const std::string bodies = e.body[0] == e.body[1] ? "body " + std::to_string(e.body[0]) + " intersects itself"
                                                         : "body " + std::to_string(e.body[0]) + " and body " +
                                                               std::to_string(e.body[1]) + " intersect";
      const std::string other =
          dim == 2 ? "edge " + id(2) + "–" + id(3) : "triangle " + id(2) + ", " + id(3) + ", " + id(4);
      return bodies + ": edge " + id(0) + "–" + id(1) + " meets " + other + " (global vertex ids; " +
             std::to_string(r.between_bodies + r.within_body) + " intersecting primitive pairs)";
    }
    case Kind::plane:
      return "vertex " + id(0) + " of body " + std::to_string(e.body[0]) + " is on or behind obstacle " +
             std::to_string(e.plane) + " (" + std::to_string(r.behind_planes) + " such vertices)";
    case Kind::nested:
      return "body " + std::to_string(e.body[0]) + " lies inside body " + std::to_string(e.body[1]) +
             " (its vertex " + id(0) + ")";
  }
  return "";
}

std::string input_pointer(const IntersectionReport& r) {
  if (r.example.kind == Kind::plane) return "/obstacles/" + std::to_string(r.example.plane);
  return "/bodies";
}

}  // namespace percussion::ipc
