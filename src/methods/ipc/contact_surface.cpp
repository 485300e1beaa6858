#include "percussion/methods/ipc/contact_surface.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <map>
#include <unordered_map>

#include "percussion/parallel/messages.hpp"

namespace percussion::ipc {
namespace {

// One face's share of a vertex's or edge's area, sent to the rendezvous rank of the key.
struct Share {
  std::int64_t key0, key1;  // vertex: (gid, -1); edge: (smaller gid, larger gid)
  std::int64_t face;        // global id of the contributing face
  double value;
  std::int32_t rank, slot;  // who sent it, and the sender's vertex (≥ 0) or edge (−1 − edge)
};

// The sum and owner of one primitive, back to each rank that contributed.
struct Verdict {
  std::int32_t slot, owner;
  double area;
};

int rendezvous(std::int64_t key0, std::int64_t key1, int ranks) {
  const auto h = static_cast<std::uint64_t>(key0) * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint64_t>(key1 + 1);
  return static_cast<int>((h ^ (h >> 29)) % static_cast<std::uint64_t>(ranks));
}

}  // namespace

ContactSurface build_contact_surface(MPI_Comm comm, const geometry::PlexMesh& mesh) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const int dim = mesh.dim;
  ContactSurface s;
  s.dim = dim;

  std::vector<std::int32_t> surface_of(static_cast<std::size_t>(mesh.local_vertex_count()), -1);
  auto surface_vertex = [&](PetscInt v) {
    std::int32_t& k = surface_of[static_cast<std::size_t>(v)];
    if (k < 0) {
      k = static_cast<std::int32_t>(s.vertex_global_id.size());
      s.vertex_mesh_index.push_back(v);
      s.vertex_global_id.push_back(mesh.vertex_global_id[static_cast<std::size_t>(v)]);
      s.vertex_body.push_back(mesh.vertex_body[static_cast<std::size_t>(v)]);
      for (int c = 0; c < 3; ++c)
        s.vertex_rest.push_back(c < dim ? mesh.vertex_coordinates[static_cast<std::size_t>(v) * dim + c] : 0.0);
    }
    return k;
  };
  auto rest = [&](std::int32_t k) { return Eigen::Map<const Eigen::Vector3d>(&s.vertex_rest[3 * std::size_t(k)]); };

  std::vector<std::vector<Share>> out(static_cast<std::size_t>(ranks));
  auto share = [&](std::int64_t k0, std::int64_t k1, std::int64_t face, double value, std::int32_t slot) {
    out[static_cast<std::size_t>(rendezvous(k0, k1, ranks))].push_back({k0, k1, face, value, rank, slot});
  };
  std::map<std::pair<std::int64_t, std::int64_t>, std::int32_t> edge_of;  // (gid, gid) → edge, sorted
  auto surface_edge = [&](std::int32_t a, std::int32_t b) {
    if (s.vertex_global_id[std::size_t(a)] > s.vertex_global_id[std::size_t(b)]) std::swap(a, b);
    auto [it, fresh] = edge_of.try_emplace({s.vertex_global_id[std::size_t(a)], s.vertex_global_id[std::size_t(b)]},
                                           static_cast<std::int32_t>(s.edges.size()));
    if (fresh) s.edges.push_back({a, b});
    return it->second;
  };

  for (PetscInt f = 0; f < mesh.owned_boundary_face_count; ++f) {
    const std::int64_t face = mesh.boundary_face_global_id[static_cast<std::size_t>(f)];
    std::array<std::int32_t, 3> k{};
    for (int i = 0; i < dim; ++i) k[i] = surface_vertex(mesh.boundary_face_vertices[std::size_t(f) * dim + i]);
    if (dim == 2) {
      s.edges.push_back({k[0], k[1]});  // orientation kept: the outward normal is (b − a) rotated by −90°
      const double half = (rest(k[1]) - rest(k[0])).norm() / 2.0;
      for (int i = 0; i < 2; ++i) share(s.vertex_global_id[std::size_t(k[i])], -1, face, half, k[i]);
    } else {
      s.triangles.push_back(k);
      const double third = (rest(k[1]) - rest(k[0])).cross(rest(k[2]) - rest(k[0])).norm() / 6.0;
      for (int i = 0; i < 3; ++i) share(s.vertex_global_id[std::size_t(k[i])], -1, face, third, k[i]);
      for (const auto& e : geometry::kTriangleEdges) {
        const std::int32_t edge = surface_edge(k[e[0]], k[e[1]]);
        const auto& ab = s.edges[std::size_t(edge)];
        share(s.vertex_global_id[std::size_t(ab[0])], s.vertex_global_id[std::size_t(ab[1])], face, third,
              -1 - edge);  // edges: negative slots
      }
    }
  }
  std::vector<int> counts;
  std::vector<Share> in = parallel::all_to_all(comm, out, counts);

  // Sums in (key, face) order: the same terms in the same order on any rank count.
  std::sort(in.begin(), in.end(), [](const Share& a, const Share& b) {
    return std::tie(a.key0, a.key1, a.face) < std::tie(b.key0, b.key1, b.face);
  });
  std::vector<std::vector<Verdict>> back(static_cast<std::size_t>(ranks));
  for (std::size_t i = 0; i < in.size();) {
    std::size_t j = i;
    double area = 0.0;
    for (; j < in.size() && in[j].key0 == in[i].key0 && in[j].key1 == in[i].key1; ++j) area += in[j].value;
    for (std::size_t k = i; k < j; ++k) back[std::size_t(in[k].rank)].push_back({in[k].slot, in[i].rank, area});
    i = j;
  }
  const std::vector<Verdict> verdicts = parallel::all_to_all(comm, back, counts);

  const std::size_t nv = s.vertex_count();
  s.vertex_area.assign(nv, 0.0);
  s.vertex_owned.assign(nv, 0);
  s.edge_area.assign(s.edges.size(), 0.0);
  s.edge_owned.assign(s.edges.size(), dim == 2 ? 1 : 0);
  for (const Verdict& v : verdicts) {
    if (v.slot >= 0) {
      s.vertex_area[std::size_t(v.slot)] = v.area;
      s.vertex_owned[std::size_t(v.slot)] = v.owner == rank;
    } else {
      s.edge_area[std::size_t(-1 - v.slot)] = v.area;
      s.edge_owned[std::size_t(-1 - v.slot)] = v.owner == rank;
    }
  }
  return s;
}

}  // namespace percussion::ipc
