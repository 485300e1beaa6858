#include "percussion/methods/bdem/domain.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <tuple>

#include "percussion/core/error.hpp"
#include "percussion/geometry/bonding.hpp"
#include "percussion/io/trajectory.hpp"

namespace percussion::bdem {
using parallel::bucket_sort;

Domain::Domain(const BdemScene& s, MPI_Comm c, const Model& given, PhaseTimers& timers)
    : scene(s),
      comm(c),
      items_(c),
      gid(items_.gids()),
      x(items_.add_field<Eigen::Vector3d>("position")),
      v(items_.add_field<Eigen::Vector3d>("velocity")),
      w(items_.add_field<Eigen::Vector3d>("angular_velocity")),
      q(items_.add_field<Eigen::Vector4d>("quaternion")),
      radius(items_.add_field<double>("radius")),
      mass(items_.add_field<double>("mass")),
      material(items_.add_field<int>("material")),
      constraint(items_.add_field<int>("constraint")),
      timers_(timers),
      sum_(items_) {
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  Model copy;
  if (!given.placed) {
    copy = given;
    place(copy, scene, comm);
  }
  const Model& model = given.placed ? given : copy;
  // Contact laws per material pair and per obstacle-material pair.
  n_materials_ = static_cast<int>(scene.materials.size());
  double e_max = 0;
  for (const auto& m : scene.materials) e_max = std::max(e_max, m.youngs_modulus);
  for (double r : model.radius) r_max = std::max(r_max, r);
  MPI_Allreduce(MPI_IN_PLACE, &r_max, 1, MPI_DOUBLE, MPI_MAX, comm);
  const double k = scene.contact.stiffness > 0 ? scene.contact.stiffness : e_max * r_max;
  for (const auto& a : scene.materials)
    for (const auto& b : scene.materials) pair_law_.push_back(physics::combine(a, b, k));
  for (const auto& o : scene.obstacles)
    for (const auto& m : scene.materials) {
      Material wall = m;
      wall.friction = o.friction;
      wall.restitution = o.restitution;
      obstacle_law_.push_back(physics::combine(m, wall, k));
    }
  // The automatic skin: an implicit step moves a particle as far as tens of explicit steps do, so at the explicit
  // 0.3 r its lists would be rebuilt at nearly every step where fragments fly. 0.8 r stays below the HCP lattice's
  // second shell (2 sqrt2 r), so an intact body gains no candidate pair. Woven yarns are not that lattice: their
  // crossings gain pairs (the paper-size cloth's first 400 steps 18 % slower), so a scene with them keeps 0.3 r.
  const bool woven = std::any_of(scene.bodies.begin(), scene.bodies.end(), [](const Body& b) {
    return b.generator.shape == Generator::Shape::Woven;
  });
  const double automatic_skin = (scene.integrator == "implicit" && !woven ? 0.8 : 0.3) * r_max;
  skin = scene.contact.skin > 0 ? scene.contact.skin : automatic_skin;
  cutoff = 2 * r_max + skin;
  take_my_part(model);
  int restarted = !model.x_ref.empty();  // (a rank may hold no particle)
  MPI_Allreduce(MPI_IN_PLACE, &restarted, 1, MPI_INT, MPI_MAX, comm);
  if (!restarted) {
    rebuild();
    return;
  }
  // Restart: build ghosts and pair lists where the interrupted run last built them, so the pair pattern and
  // the rebuild schedule continue unchanged.
  const std::vector<Eigen::Vector3d> now(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n_owned));
  std::copy(model.x_ref.begin(), model.x_ref.end(), x.begin());
  rebuild();
  std::copy(now.begin(), now.end(), x.begin());
  refresh_ghosts();
}

void Domain::take_my_part(const Model& g) {
  n_global = g.particles();
  bonds_global = g.bonds();
  for (std::size_t i = 0; i < g.rows(); ++i)
    if (g.material[i] < 0 || g.material[i] >= n_materials_ ||
        g.constraint[i] >= static_cast<int>(scene.boundary_conditions.size()))
      throw InputError(scene.path + ": the scene has fewer materials or boundary conditions than the checkpoint uses");
  items_.set_owned(g.id);
  n_owned = items_.owned();
  std::copy(g.x.begin(), g.x.end(), x.begin());
  std::copy(g.v.begin(), g.v.end(), v.begin());
  std::copy(g.w.begin(), g.w.end(), w.begin());
  std::copy(g.q.begin(), g.q.end(), q.begin());
  std::copy(g.radius.begin(), g.radius.end(), radius.begin());
  std::copy(g.mass.begin(), g.mass.end(), mass.begin());
  std::copy(g.material.begin(), g.material.end(), material.begin());
  std::copy(g.constraint.begin(), g.constraint.end(), constraint.begin());
  bonds.reserve(g.bond_rows());
  for (std::size_t k = 0; k < g.bond_rows(); ++k) {
    const auto [a, b] = g.pair[k];
    bonds.push_back(Bond{g.bond_id[k], a, b, g.partner_owner[k], g.rest[k], g.strength[k][0], g.strength[k][1],
                         g.intact[k] != 0, -1, -1});
  }
}

bool Domain::needs_rebuild(long step) {
  // The pair lists hold every pair within r_a + r_b + skin at the last rebuild. A displacement common to all
  // particles changes no distance, so what counts is each particle's displacement d_i minus a common one t:
  // |Δ(p_j − p_i)| = |(d_j − t) − (d_i − t)| ≤ 2 max_i |d_i − t|. With t the centre of the displacements' bounding
  // box (exact under MPI's min and max, so every rank count decides alike), a body in flight rebuilds when it
  // deforms, not every half-skin it falls.
  double box[7];  // −min and max of each displacement component, non-finite flag
  std::fill_n(box, 6, -std::numeric_limits<double>::infinity());
  box[6] = 0;
  for (std::size_t i = 0; i < n_owned; ++i) {
    const Eigen::Vector3d d = x[i] - x_ref_[i];
    for (int a = 0; a < 3; ++a) {
      box[a] = std::max(box[a], -d[a]);
      box[3 + a] = std::max(box[3 + a], d[a]);
    }
    if (!std::isfinite(x[i].sum() + q[i].sum() + v[i].sum() + w[i].sum())) box[6] = 1;
  }
  MPI_Allreduce(MPI_IN_PLACE, box, 7, MPI_DOUBLE, MPI_MAX, comm);
  if (box[6] > 0)
    throw NumericalError("non-finite particle state at step " + std::to_string(step) +
                         " (time step too large for the stiffness?)");
  if (!std::isfinite(box[0])) return false;  // no particle anywhere
  const Eigen::Vector3d t(0.5 * (box[3] - box[0]), 0.5 * (box[4] - box[1]), 0.5 * (box[5] - box[2]));
  double largest = 0;  // max |d_i − t|²
  for (std::size_t i = 0; i < n_owned; ++i) largest = std::max(largest, (x[i] - x_ref_[i] - t).squaredNorm());
  MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_DOUBLE, MPI_MAX, comm);
  return !within_skin(std::sqrt(largest));
}

void Domain::refresh_ghosts() {
  ScopedPhase timer(timers_, Phase::Halo);
  items_.forward(x, q, v, w);
}

void Domain::rebuild() {
  ScopedPhase timer(timers_, Phase::Rebuild);
  std::vector<parallel::DistributedItems::Request> requests;
  for (const auto& b : bonds)
    if (b.intact && b.b_owner != rank) requests.push_back({b.b, b.b_owner});
  // One reach for all: the ghosts of the global cut-off 2 r_max + skin, whatever the radii.
  const double reach = 0.5 * cutoff;
  items_.build_ghosts(std::span<const Eigen::Vector3d>(x.data(), n_owned), std::span<const double>(&reach, 1),
                      requests);
  for (auto& b : bonds) {
    b.la = items_.slot(b.a);
    b.lb = items_.slot(b.b);
    if (b.intact && b.lb < 0) throw std::logic_error("bond partner missing from the halo");
  }
  build_pairs();
  build_routing();
  x_ref_.assign(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n_owned));
  ++rebuilds_;
}

void Domain::send_to_owners(std::span<const double> per_entry, int width, std::vector<double>& received) {
  ScopedPhase timer(timers_, Phase::Halo);
  sum_.send_to_owners(per_entry, width, received);
}

void Domain::forward(std::vector<double>& field) {
  ScopedPhase timer(timers_, Phase::Halo);
  items_.forward(field);
}

void Domain::forward(std::vector<Eigen::Vector3d>& p) {
  ScopedPhase timer(timers_, Phase::Halo);
  items_.forward(p);
}

void Domain::forward(std::vector<Eigen::Vector3d>& p, std::vector<Eigen::Vector4d>& q) {
  ScopedPhase timer(timers_, Phase::Halo);
  items_.forward(p, q);
}

void Domain::build_pairs() {
  // Candidates: every pair within r_a + r_b + skin whose smaller id is owned here, plus every intact bond.
  struct Entry { std::int64_t ga, gb; std::int32_t a, b, bond; };
  std::vector<Entry> entries;
  cells_.build(std::span<const Eigen::Vector3d>(x.data(), x.size()), cutoff);
  cells_.for_each_pair(cutoff, [&](std::size_t i, std::size_t j, double d2) {
    const double reach = radius[i] + radius[j] + skin;
    if (d2 >= reach * reach) return;
    auto a = static_cast<std::int32_t>(i), b = static_cast<std::int32_t>(j);
    if (gid[b] < gid[a]) std::swap(a, b);
    if (static_cast<std::size_t>(a) < n_owned) entries.push_back({gid[a], gid[b], a, b, -1});
  });
  for (std::size_t k = 0; k < bonds.size(); ++k)
    if (bonds[k].intact) entries.push_back({bonds[k].a, bonds[k].b, bonds[k].la, bonds[k].lb, static_cast<std::int32_t>(k)});
  // One pair per particle pair, in global-id order; a bond entry wins over a contact entry. Bucketed by the slot
  // of a, the buckets taken in their particles' id order.
  std::vector<std::int32_t> by_id(x.size()), rank_of(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) by_id[i] = static_cast<std::int32_t>(i);
  std::sort(by_id.begin(), by_id.end(), [&](std::int32_t l, std::int32_t r) { return gid[l] < gid[r]; });
  for (std::size_t k = 0; k < by_id.size(); ++k) rank_of[by_id[k]] = static_cast<std::int32_t>(k);
  bucket_sort(entries, x.size(), [&](const Entry& e) { return rank_of[e.a]; },
              [](const Entry& l, const Entry& r) { return std::tie(l.gb, r.bond) < std::tie(r.gb, l.bond); });
  pairs.clear();
  for (std::size_t k = 0; k < entries.size(); ++k) {
    if (k > 0 && entries[k].ga == entries[k - 1].ga && entries[k].gb == entries[k - 1].gb) continue;
    pairs.push_back({entries[k].a, entries[k].b, entries[k].bond});
  }
}

void Domain::unlink_broken_bonds() {
  for (Pair& p : pairs)
    if (p.bond >= 0 && !bonds[static_cast<std::size_t>(p.bond)].intact) p.bond = -1;
}

void Domain::build_routing() {
  // Contribution 2k of pair k is to its particle a, 2k + 1 to b, each keyed by the other's id.
  partners_owned_.assign(n_owned, 0);
  partners_other_.assign(n_owned, 0);
  const std::size_t np = pairs.size();
  std::vector<std::int32_t> target(2 * np);
  std::vector<std::int64_t> key(2 * np);
  for (std::size_t k = 0; k < np; ++k) {
    const Pair& p = pairs[k];
    target[2 * k] = p.a;
    key[2 * k] = gid[p.b];
    target[2 * k + 1] = p.b;
    key[2 * k + 1] = gid[p.a];
    if (static_cast<std::size_t>(p.b) < n_owned) {
      ++partners_owned_[p.a];
      ++partners_owned_[p.b];
    } else {
      ++partners_other_[p.a];
    }
  }
  sum_.set_up(target, key);
  for (const auto& in : sum_.incoming()) ++partners_other_[in.owned];
  contrib_.assign(12 * np, 0.0);
}

void Domain::sum_pairs(std::vector<Eigen::Vector3d>& f, std::vector<Eigen::Vector3d>& t,
                       const std::vector<std::int32_t>* only) {
  {
    ScopedPhase timer(timers_, Phase::Halo);
    sum_.exchange<6>(contrib_);
  }
  ScopedPhase timer(timers_, Phase::Pairs);
  f.resize(n_owned);
  t.resize(n_owned);
  sum_.total<6>(contrib_, only, [&](std::size_t i, const double* c) {
    f[i] = Eigen::Vector3d(c[0], c[1], c[2]);
    t[i] = Eigen::Vector3d(c[3], c[4], c[5]);
  });
}

Totals Domain::totals(double interaction_energy, long contacts) const {
  // [kinetic, potential, momentum(3), angular momentum(3), bonds broken, contacts]
  double local[10] = {};
  for (std::size_t i = 0; i < n_owned; ++i) {
    const double m = mass[i], inertia = 0.4 * m * radius[i] * radius[i];
    local[0] += 0.5 * m * v[i].squaredNorm() + 0.5 * inertia * w[i].squaredNorm();
    local[1] -= m * scene.gravity.dot(x[i]);
    const Eigen::Vector3d p = m * v[i], l = x[i].cross(p) + inertia * w[i];
    for (int d = 0; d < 3; ++d) {
      local[2 + d] += p[d];
      local[5 + d] += l[d];
    }
  }
  local[1] += interaction_energy;
  for (const auto& b : bonds) local[8] += b.intact ? 0 : 1;
  local[9] = static_cast<double>(contacts);
  double global[10];
  MPI_Allreduce(local, global, 10, MPI_DOUBLE, MPI_SUM, comm);
  Totals o;
  o.kinetic = global[0];
  o.potential = global[1];
  o.total = global[0] + global[1];
  for (int d = 0; d < 3; ++d) {
    o.momentum[d] = global[2 + d];
    o.angular_momentum[d] = global[5 + d];
  }
  o.bonds_broken = std::lround(global[8]);
  o.contacts = std::lround(global[9]);
  return o;
}

void Domain::write_frame(io::TrajectoryWriter& writer, long step, double time, const ObservableSet& o) const {
  ScopedPhase timer(timers_, Phase::Output);
  std::vector<std::int64_t> intact;
  for (const auto& b : bonds)
    if (b.intact) intact.insert(intact.end(), {b.a, b.b});
  const std::size_t n = n_owned;
  io::FrameFields fields{std::span<const std::int64_t>(gid.data(), n),
                         flat(std::span<const Eigen::Vector3d>(x.data(), n)),
                         flat(std::span<const Eigen::Vector4d>(q.data(), n)),
                         flat(std::span<const Eigen::Vector3d>(v.data(), n)),
                         flat(std::span<const Eigen::Vector3d>(w.data(), n)),
                         std::span<const double>(radius.data(), n),
                         intact};
  io::FrameContent content;
  content.particles = &fields;
  writer.write_frame(step, time, o, content);
}

}  // namespace percussion::bdem
