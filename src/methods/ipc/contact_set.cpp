#include "percussion/methods/ipc/contact_set.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "percussion/geometry/distance/edge_edge_mollifier.hpp"
#include "percussion/methods/ipc/contact_broad_phase.hpp"
#include "percussion/methods/ipc/contact_exchange.hpp"
#include "percussion/parallel/exact_sum.hpp"

namespace percussion::ipc {
namespace {

// A primitive's vertex as it travels to another rank.
struct VertexRecord {
  std::int64_t global_id, dof;
  std::int32_t body, mesh_index;
  double rest[3], x[3], step[3];
};

enum PrimitiveKind : std::int32_t { kVertex = 0, kEdge = 1, kTriangle = 2 };

struct PrimitiveRecord {
  std::int32_t kind, owner;
  double area;
  VertexRecord vertex[3];
};

// Primitives on this rank (its own and copies), over the contact-vertex table.
struct Primitive {
  std::int32_t owner, body;
  double area;
  std::array<std::int32_t, 3> vertex;
};

Eigen::Vector3d at(std::span<const double> v, std::size_t i, int dim) {
  Eigen::Vector3d p = Eigen::Vector3d::Zero();
  for (int c = 0; c < dim; ++c) p[c] = v[i * static_cast<std::size_t>(dim) + c];
  return p;
}

}  // namespace

void ContactSet::build(MPI_Comm comm, const ContactSurface& surface, std::span<const double> x,
                       std::span<const double> step, std::span<const PetscInt> vertex_dof,
                       const ContactOptions& options) {
  comm_ = comm;
  dim_ = surface.dim;
  options_ = options;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const int dim = dim_;
  const double dhat = options.dhat;

  // This rank's surface vertices as records (position now and at the end of the step).
  const std::size_t ns = surface.vertex_count();
  std::vector<VertexRecord> own(ns);
  for (std::size_t i = 0; i < ns; ++i) {
    const auto m = static_cast<std::size_t>(surface.vertex_mesh_index[i]);
    VertexRecord& r = own[i];
    r.global_id = surface.vertex_global_id[i];
    r.dof = vertex_dof.empty() ? r.global_id * dim : vertex_dof[m];
    r.body = surface.vertex_body[i];
    r.mesh_index = static_cast<std::int32_t>(m);
    for (int c = 0; c < 3; ++c) {
      r.rest[c] = surface.vertex_rest[3 * i + c];
      r.x[c] = c < dim ? x[m * dim + c] : 0.0;
      r.step[c] = c < dim && !step.empty() ? step[m * dim + c] : 0.0;
    }
  }
  auto swept = [](const VertexRecord& r, Box& box) {
    box.extend(Eigen::Vector3d(r.x[0], r.x[1], r.x[2]));
    box.extend(Eigen::Vector3d(r.x[0] + r.step[0], r.x[1] + r.step[1], r.x[2] + r.step[2]));
  };

  // Own primitives as records: owned vertices, owned edges, triangles.
  std::vector<PrimitiveRecord> mine;
  std::vector<Box> mine_box;
  auto add_own = [&](PrimitiveKind kind, double area, std::initializer_list<std::int32_t> v) {
    PrimitiveRecord p{kind, rank, area, {}};
    Box box;
    int k = 0;
    for (std::int32_t i : v) {
      p.vertex[k++] = own[std::size_t(i)];
      swept(own[std::size_t(i)], box);
    }
    mine.push_back(p);
    mine_box.push_back(box);
  };
  for (std::size_t i = 0; i < ns; ++i)
    if (surface.vertex_owned[i]) add_own(kVertex, surface.vertex_area[i], {static_cast<std::int32_t>(i)});
  for (std::size_t e = 0; e < surface.edges.size(); ++e)
    if (surface.edge_owned[e]) add_own(kEdge, surface.edge_area[e], {surface.edges[e][0], surface.edges[e][1]});
  for (const auto& t : surface.triangles) add_own(kTriangle, 0.0, {t[0], t[1], t[2]});

  // Primitives go to every rank whose region they come within d̂ of.
  std::vector<int> counts;
  const std::vector<PrimitiveRecord> arrived = send_to_overlapping_ranks(comm, mine, mine_box, dhat, counts);

  // The contact-vertex table: this rank's surface vertices, then copies (first arrival of each global id).
  std::vector<ContactVertices::Entry> entries;
  std::vector<double> position, rest, step_at;
  std::vector<std::int32_t> body;
  std::unordered_map<std::int64_t, std::int32_t> index_of;
  std::vector<std::int32_t> source_rank;
  auto table = [&](const VertexRecord& r, std::int32_t source) {
    auto [it, fresh] = index_of.try_emplace(r.global_id, static_cast<std::int32_t>(entries.size()));
    if (fresh) {
      entries.push_back({r.global_id, r.dof, source, r.mesh_index});
      for (int c = 0; c < dim; ++c) position.push_back(r.x[c]);
      for (int c = 0; c < 3; ++c) {
        rest.push_back(r.rest[c]);
        step_at.push_back(r.x[c] + r.step[c]);
      }
      body.push_back(r.body);
    }
    return it->second;
  };
  for (const VertexRecord& r : own) table(r, rank);
  std::vector<std::int32_t> arrived_from;
  for (int r = 0; r < ranks; ++r) arrived_from.insert(arrived_from.end(), std::size_t(counts[std::size_t(r)]), r);

  // Primitives by kind, own then copies.
  std::vector<Primitive> prims[3];
  std::vector<Box> prim_box[3];
  auto add_primitive = [&](const PrimitiveRecord& p, std::int32_t source) {
    Primitive q{p.owner, p.vertex[0].body, p.area, {-1, -1, -1}};
    Box box;
    for (int k = 0; k <= p.kind; ++k) {
      q.vertex[std::size_t(k)] = table(p.vertex[k], source);
      swept(p.vertex[k], box);
    }
    prims[p.kind].push_back(q);
    prim_box[p.kind].push_back(box.inflated(dhat / 2));
  };
  for (const PrimitiveRecord& p : mine) add_primitive(p, rank);
  for (std::size_t k = 0; k < arrived.size(); ++k) add_primitive(arrived[k], arrived_from[k]);

  // Pairs this rank evaluates: overlapping boxes, no shared vertex, bodies per self_contact, smaller owner here.
  pairs_.clear();
  auto admissible = [&](const Primitive& a, const Primitive& b) {
    if (std::min(a.owner, b.owner) != rank) return false;
    if (!options.self_contact && a.body == b.body) return false;
    for (std::int32_t u : a.vertex)
      for (std::int32_t v : b.vertex)
        if (u >= 0 && u == v) return false;
    return true;
  };
  auto rest_point = [&](std::int32_t i) { return Eigen::Map<const Eigen::Vector3d>(&rest[3 * std::size_t(i)]); };
  if (dim == 2) {
    overlapping_boxes(prim_box[kVertex], prim_box[kEdge], false, [&](std::int32_t v, std::int32_t e) {
      const Primitive &p = prims[kVertex][std::size_t(v)], &q = prims[kEdge][std::size_t(e)];
      if (admissible(p, q))
        pairs_.push_back({PairType::PointEdge2D, {p.vertex[0], q.vertex[0], q.vertex[1], -1}, p.area / 2.0, 0.0});
    });
  } else {
    overlapping_boxes(prim_box[kVertex], prim_box[kTriangle], false, [&](std::int32_t v, std::int32_t t) {
      const Primitive &p = prims[kVertex][std::size_t(v)], &q = prims[kTriangle][std::size_t(t)];
      if (admissible(p, q))
        pairs_.push_back(
            {PairType::PointTriangle, {p.vertex[0], q.vertex[0], q.vertex[1], q.vertex[2]}, p.area / 4.0, 0.0});
    });
    overlapping_boxes(prim_box[kEdge], prim_box[kEdge], true, [&](std::int32_t i, std::int32_t j) {
      const Primitive &a = prims[kEdge][std::size_t(i)], &b = prims[kEdge][std::size_t(j)];
      if (!admissible(a, b)) return;
      const std::array<std::int32_t, 4> s{a.vertex[0], a.vertex[1], b.vertex[0], b.vertex[1]};
      pairs_.push_back({PairType::EdgeEdge, s, (a.area + b.area) / 4.0,
                        geometry::edge_edge_mollifier_threshold(rest_point(s[0]), rest_point(s[1]),
                                                                rest_point(s[2]), rest_point(s[3]))});
    });
  }
  // Vertex–plane pairs of owned vertices whose sweep comes within d̂ of the plane (the offset is linear in α).
  for (std::size_t h = 0; h < options.planes.size(); ++h) {
    const HalfPlane& plane = options.planes[h];
    for (const Primitive& p : prims[kVertex]) {
      if (p.owner != rank) continue;
      const auto i = static_cast<std::size_t>(p.vertex[0]);
      const double s0 = plane.normal.dot(at(position, i, dim) - plane.point);
      const double s1 = plane.normal.dot(Eigen::Map<const Eigen::Vector3d>(&step_at[3 * i]) - plane.point);
      if (std::min(s0, s1) < dhat)
        pairs_.push_back({PairType::PointPlane, {p.vertex[0], static_cast<std::int32_t>(h), -1, -1}, p.area, 0.0});
    }
  }
  vertices_.assign(comm, dim, std::move(entries), std::move(position));
}

double ContactSet::energy(double kappa) const {
  parallel::ExactSum sum;
  const double dhat2 = options_.dhat * options_.dhat;
  bool infinite = false;
  for (const ContactPair& p : pairs_) {
    const double value = pair_barrier_value(p, dim_, vertices_.positions(), options_.planes, dhat2, kappa);
    if (std::isinf(value)) infinite = true;
    sum.add(value);
  }
  return global_energy(comm_, sum, infinite);
}

double ContactSet::min_distance() const {
  double d2 = std::numeric_limits<double>::infinity();
  for (const ContactPair& p : pairs_)
    d2 = std::min(d2, pair_distance2(p, dim_, vertices_.positions(), options_.planes));
  double d = std::isinf(d2) ? d2 : std::copysign(std::sqrt(std::abs(d2)), d2);
  MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_MIN, comm_);
  return d;
}

void ContactSet::for_each_gradient(double kappa, const ContactBlock& add) const {
  const double dhat2 = options_.dhat * options_.dhat;
  std::int64_t gid[4];
  PetscInt dof[4];
  for (const ContactPair& p : pairs_) {
    const PairEnergy<12> e = pair_barrier(p, dim_, vertices_.positions(), options_.planes, dhat2, kappa);
    if (e.value == 0.0) continue;
    add(stencil_ids(vertices_, p, gid, dof), gid, dof, e.gradient.data());
  }
}

void ContactSet::for_each_hessian(double kappa, bool project, const ContactBlock& add) const {
  const double dhat2 = options_.dhat * options_.dhat;
  std::int64_t gid[4];
  PetscInt dof[4];
  double block[144];
  for (const ContactPair& p : pairs_) {
    const PairEnergy<12> e = pair_barrier(p, dim_, vertices_.positions(), options_.planes, dhat2, kappa);
    if (e.value == 0.0) continue;
    const int n = stencil_ids(vertices_, p, gid, dof);
    hessian_block(e.hessian, n * dim_, project, block);
    add(n, gid, dof, block);
  }
}

PetscErrorCode ContactSet::add_gradient(double kappa, ::Vec gradient) const {
  return add_blocks([&](const ContactBlock& add) { for_each_gradient(kappa, add); }, dim_, gradient);
}

PetscErrorCode ContactSet::add_hessian(double kappa, bool project, ::Mat hessian) const {
  return add_blocks([&](const ContactBlock& add) { for_each_hessian(kappa, project, add); }, dim_, hessian);
}

}  // namespace percussion::ipc
