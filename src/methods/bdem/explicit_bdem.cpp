#include "percussion/methods/bdem/explicit_bdem.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <tuple>

#include "percussion/core/error.hpp"
#include "percussion/geometry/bonding.hpp"
#include "percussion/geometry/obstacle.hpp"
#include "percussion/io/trajectory.hpp"
#include "percussion/parallel/partition.hpp"
#include "percussion/physics/bond_forces.hpp"
#include "percussion/physics/quaternion.hpp"

namespace percussion::bdem {
namespace {
// Eigen's fixed-size vectors are plain arrays: a vector of them is one contiguous block of doubles.
template <class V>
double* flat(std::vector<V>& a) {
  return reinterpret_cast<double*>(a.data());
}
}  // namespace

ExplicitBdem::ExplicitBdem(const Scene& scene, MPI_Comm comm, GlobalModel model)
    : scene_(scene), comm_(comm), halo_(comm) {
  ScopedPhase timer(timers_, Phase::Setup);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  dt_ = model.time_step;
  step_ = model.step;

  // Contact laws per material pair and per obstacle-material pair.
  n_materials_ = static_cast<int>(scene_.materials.size());
  double e_max = 0;
  for (const auto& m : scene_.materials) e_max = std::max(e_max, m.youngs_modulus);
  for (double r : model.radius) r_max_ = std::max(r_max_, r);
  const double k = scene_.contact.stiffness > 0 ? scene_.contact.stiffness : e_max * r_max_;
  for (const auto& a : scene_.materials)
    for (const auto& b : scene_.materials) pair_law_.push_back(physics::combine(a, b, k));
  for (const auto& o : scene_.obstacles)
    for (const auto& m : scene_.materials) {
      Material wall = m;
      wall.friction = o.friction;
      wall.restitution = o.restitution;
      obstacle_law_.push_back(physics::combine(m, wall, k));
    }
  skin_ = scene_.contact.skin > 0 ? scene_.contact.skin : 0.3 * r_max_;
  cutoff_ = 2 * r_max_ + skin_;

  take_my_part(model);
  const bool restart = model.from_checkpoint;
  model = GlobalModel{};  // free the global copy before the run
  rebuild();
  // Forces at the initial state; a checkpoint carries the forces the next half-kick needs, because contact
  // damping saw the half-step velocity when they were computed.
  std::vector<Eigen::Vector3d> f_saved, t_saved;
  if (restart) f_saved = f_, t_saved = t_;
  compute_forces();
  if (restart) f_ = f_saved, t_ = t_saved;
}

void ExplicitBdem::take_my_part(const GlobalModel& g) {
  n_global_ = g.particles();
  bonds_global_ = g.bonds();
  // Graph: intact bonds plus touching neighbours (so unbonded granular scenes partition spatially too).
  std::vector<std::array<std::int64_t, 2>> edges = geometry::touching_pairs(g.x, g.radius, scene_.bonds.tolerance);
  for (std::int64_t k = 0; k < g.bonds(); ++k)
    if (g.intact[k]) edges.push_back(g.pair[k]);
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  const std::vector<int> part = parallel::partition_graph(n_global_, edges, size_);

  for (std::int64_t i = 0; i < n_global_; ++i) {
    if (part[i] != rank_) continue;
    gid_.push_back(i);
    x_.push_back(g.x[i]);
    v_.push_back(g.v[i]);
    w_.push_back(g.w[i]);
    q_.push_back(g.q[i]);
    radius_.push_back(g.radius[i]);
    mass_.push_back(g.mass[i]);
    material_.push_back(g.material[i]);
    constraint_.push_back(g.constraint[i]);
    f_.push_back(g.force.empty() ? Eigen::Vector3d::Zero() : g.force[i]);
    t_.push_back(g.torque.empty() ? Eigen::Vector3d::Zero() : g.torque[i]);
  }
  n_owned_ = gid_.size();
  for (std::int64_t k = 0; k < g.bonds(); ++k) {
    const auto [a, b] = g.pair[k];
    if (part[a] != rank_) continue;
    bonds_.push_back(Bond{k, a, b, part[b], g.rest[k], g.strength[k][0], g.strength[k][1], g.intact[k] != 0, -1, -1});
  }
}

void ExplicitBdem::rebuild() {
  ScopedPhase timer(timers_, Phase::Rebuild);
  std::vector<parallel::Halo::Request> requests;
  for (const auto& b : bonds_)
    if (b.intact && b.b_owner != rank_) requests.push_back({b.b, b.b_owner});
  halo_.build(std::span(x_.data(), n_owned_), std::span(gid_.data(), n_owned_), cutoff_, requests);

  const std::size_t n = n_owned_ + halo_.ghost_count();
  for (auto* a : {&x_, &v_, &w_}) a->resize(n);
  q_.resize(n);
  radius_.resize(n);
  mass_.resize(n);
  material_.resize(n);
  gid_.resize(n_owned_);
  gid_.insert(gid_.end(), halo_.ghost_gids().begin(), halo_.ghost_gids().end());
  halo_.forward({{flat(x_), 3}, {flat(q_), 4}, {flat(v_), 3}, {flat(w_), 3},
                 {radius_.data(), 1}, {mass_.data(), 1}});
  halo_.forward(std::span<int>(material_));

  slot_of_.clear();
  slot_of_.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) slot_of_.emplace(gid_[i], static_cast<std::int32_t>(i));
  for (auto& b : bonds_) {
    b.la = slot_of_.at(b.a);
    auto it = slot_of_.find(b.b);
    b.lb = it == slot_of_.end() ? -1 : it->second;
    if (b.intact && b.lb < 0) throw std::logic_error("bond partner missing from the halo");
  }
  build_pairs();
  build_routing();
  x_ref_.assign(x_.begin(), x_.begin() + static_cast<std::ptrdiff_t>(n_owned_));
}

void ExplicitBdem::build_pairs() {
  // Candidates: every pair within r_a + r_b + skin whose smaller id is owned here, plus every intact bond.
  struct Entry { std::int64_t ga, gb; std::int32_t a, b, bond; };
  std::vector<Entry> entries;
  const std::size_t n = x_.size();
  cells_.build(std::span<const Eigen::Vector3d>(x_.data(), n), cutoff_);
  cells_.for_each_pair(cutoff_, [&](std::size_t i, std::size_t j, double d2) {
    const double reach = radius_[i] + radius_[j] + skin_;
    if (d2 >= reach * reach) return;
    auto a = static_cast<std::int32_t>(i), b = static_cast<std::int32_t>(j);
    if (gid_[b] < gid_[a]) std::swap(a, b);
    if (static_cast<std::size_t>(a) < n_owned_) entries.push_back({gid_[a], gid_[b], a, b, -1});
  });
  for (std::size_t k = 0; k < bonds_.size(); ++k)
    if (bonds_[k].intact) entries.push_back({bonds_[k].a, bonds_[k].b, bonds_[k].la, bonds_[k].lb, static_cast<std::int32_t>(k)});
  // One pair per particle pair; a bond entry wins over a contact entry.
  std::sort(entries.begin(), entries.end(), [](const Entry& l, const Entry& r) {
    return std::tie(l.ga, l.gb, r.bond) < std::tie(r.ga, r.gb, l.bond);
  });
  pairs_.clear();
  for (std::size_t k = 0; k < entries.size(); ++k) {
    if (k > 0 && entries[k].ga == entries[k - 1].ga && entries[k].gb == entries[k - 1].gb) continue;
    pairs_.push_back({entries[k].a, entries[k].b, entries[k].bond});
  }
}

void ExplicitBdem::build_routing() {
  struct Entry { std::int32_t owned; std::int64_t partner; std::int32_t slot; };
  std::vector<Entry> entries;
  std::vector<std::int32_t> ghost_index;
  std::vector<std::int64_t> tag;
  reverse_slot_.clear();
  const auto np = static_cast<std::int32_t>(pairs_.size());
  for (std::int32_t k = 0; k < np; ++k) {
    const Pair& p = pairs_[k];
    entries.push_back({p.a, gid_[p.b], 2 * k});
    if (static_cast<std::size_t>(p.b) < n_owned_) {
      entries.push_back({p.b, gid_[p.a], 2 * k + 1});
    } else {
      ghost_index.push_back(p.b - static_cast<std::int32_t>(n_owned_));
      tag.push_back(gid_[p.a]);
      reverse_slot_.push_back(2 * k + 1);
    }
  }
  halo_.set_reverse(ghost_index, tag);
  const auto& targets = halo_.reverse_targets();
  for (std::size_t r = 0; r < targets.size(); ++r)
    entries.push_back({targets[r].owned, targets[r].tag, 2 * np + static_cast<std::int32_t>(r)});
  std::sort(entries.begin(), entries.end(),
            [](const Entry& l, const Entry& r) { return std::tie(l.owned, l.partner) < std::tie(r.owned, r.partner); });
  sum_start_.assign(n_owned_ + 1, 0);
  sum_slot_.resize(entries.size());
  for (std::size_t e = 0; e < entries.size(); ++e) {
    ++sum_start_[entries[e].owned + 1];
    sum_slot_[e] = entries[e].slot;
  }
  for (std::size_t i = 0; i < n_owned_; ++i) sum_start_[i + 1] += sum_start_[i];
  contrib_.assign(12 * pairs_.size(), 0.0);
  reverse_send_.assign(6 * reverse_slot_.size(), 0.0);
}

void ExplicitBdem::compute_forces() {
  {
    ScopedPhase timer(timers_, Phase::Pairs);
    pair_energy_ = 0;
    contacts_ = 0;
    const bool tensile_only = scene_.bonds.tensile_only;
    auto store = [this](std::size_t k, const Eigen::Vector3d& fa, const Eigen::Vector3d& ta, const Eigen::Vector3d& fb,
                        const Eigen::Vector3d& tb) {
      double* c = &contrib_[12 * k];
      for (int d = 0; d < 3; ++d) {
        c[d] = fa[d];
        c[3 + d] = ta[d];
        c[6 + d] = fb[d];
        c[9 + d] = tb[d];
      }
    };
    for (std::size_t k = 0; k < pairs_.size(); ++k) {
      const Pair& p = pairs_[k];
      if (p.bond >= 0 && bonds_[p.bond].intact) {
        Bond& bond = bonds_[p.bond];
        const physics::BondForces bf = physics::bond_forces(x_[p.a], q_[p.a], x_[p.b], q_[p.b], bond.rest, tensile_only);
        if (!physics::bond_breaks(bf.sigma, bf.tau, bond.sigma_c, bond.tau_c)) {
          store(k, bf.fi, bf.ti, bf.fj, bf.tj);
          pair_energy_ += bf.energy;
          continue;
        }
        // Broken at this state: the pair falls through to contact, here and in every later evaluation.
        bond.intact = false;
      }
      const physics::ContactForce cf =
          physics::sphere_sphere(x_[p.a], v_[p.a], w_[p.a], radius_[p.a], mass_[p.a], x_[p.b], v_[p.b], w_[p.b],
                                 radius_[p.b], mass_[p.b], pair_law(material_[p.a], material_[p.b]));
      if (cf.active) {
        store(k, cf.fi, cf.ti, cf.fj, cf.tj);
        pair_energy_ += cf.energy;
        ++contacts_;
      } else {
        std::fill_n(&contrib_[12 * k], 12, 0.0);
      }
    }
  }
  {
    ScopedPhase timer(timers_, Phase::Halo);
    for (std::size_t e = 0; e < reverse_slot_.size(); ++e)
      std::copy_n(&contrib_[6 * static_cast<std::size_t>(reverse_slot_[e])], 6, &reverse_send_[6 * e]);
    halo_.reverse(reverse_send_, 6, received_);
  }
  ScopedPhase timer(timers_, Phase::Pairs);
  const std::size_t local_slots = 2 * pairs_.size();
  obstacle_energy_ = 0;
  const int nm = n_materials_;
  for (std::size_t i = 0; i < n_owned_; ++i) {
    Eigen::Vector3d f = Eigen::Vector3d::Zero(), t = Eigen::Vector3d::Zero();
    for (std::int32_t e = sum_start_[i]; e < sum_start_[i + 1]; ++e) {
      const auto s = static_cast<std::size_t>(sum_slot_[e]);
      const double* c = s < local_slots ? &contrib_[6 * s] : &received_[6 * (s - local_slots)];
      f += Eigen::Vector3d(c[0], c[1], c[2]);
      t += Eigen::Vector3d(c[3], c[4], c[5]);
    }
    for (std::size_t o = 0; o < scene_.obstacles.size(); ++o) {
      const physics::ContactLaw& law = obstacle_law_[o * nm + material_[i]];
      geometry::for_each_plane(scene_.obstacles[o], [&](const Eigen::Vector3d& point, const Eigen::Vector3d& normal) {
        const physics::ContactForce cf = physics::sphere_plane(x_[i], v_[i], w_[i], radius_[i], mass_[i], point, normal, law);
        if (!cf.active) return;
        f += cf.fi;
        t += cf.ti;
        obstacle_energy_ += cf.energy;
        ++contacts_;
      });
    }
    f += mass_[i] * scene_.gravity;
    f_[i] = f;
    t_[i] = t;
  }
}

void ExplicitBdem::advance() {
  const double h = dt_;
  double local[2] = {0, 0};  // max squared displacement since the last rebuild; non-finite flag
  {
    ScopedPhase timer(timers_, Phase::Integrate);
    for (std::size_t i = 0; i < n_owned_; ++i) {
      if (constraint_[i] >= 0) {
        v_[i] = scene_.boundary_conditions[constraint_[i]].velocity;
        w_[i].setZero();
        x_[i] += h * v_[i];
      } else {
        const double inv_m = 1.0 / mass_[i];
        const double inv_i = 1.0 / (0.4 * mass_[i] * radius_[i] * radius_[i]);
        v_[i] += (0.5 * h * inv_m) * f_[i];
        w_[i] += (0.5 * h * inv_i) * t_[i];
        x_[i] += h * v_[i];
        q_[i] = quat::advance_world(q_[i], w_[i], h);
      }
      local[0] = std::max(local[0], (x_[i] - x_ref_[i]).squaredNorm());
      if (!std::isfinite(x_[i].sum() + q_[i].sum())) local[1] = 1;
    }
  }
  double global[2];
  MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, comm_);
  if (global[1] > 0)
    throw NumericalError("non-finite particle state at step " + std::to_string(step_ + 1) +
                         " (time step too large for the stiffness?)");
  if (2 * std::sqrt(global[0]) > skin_) {
    rebuild();
  } else {
    ScopedPhase timer(timers_, Phase::Halo);
    halo_.forward({{flat(x_), 3}, {flat(q_), 4}, {flat(v_), 3}, {flat(w_), 3}});
  }
  compute_forces();
  {
    ScopedPhase timer(timers_, Phase::Integrate);
    for (std::size_t i = 0; i < n_owned_; ++i) {
      if (constraint_[i] >= 0) continue;
      const double inv_m = 1.0 / mass_[i];
      const double inv_i = 1.0 / (0.4 * mass_[i] * radius_[i] * radius_[i]);
      v_[i] += (0.5 * h * inv_m) * f_[i];
      w_[i] += (0.5 * h * inv_i) * t_[i];
    }
  }
  ++step_;
}

Observables ExplicitBdem::observables() {
  // [kinetic, potential, momentum(3), angular momentum(3), bonds broken, contacts]
  double local[10] = {};
  for (std::size_t i = 0; i < n_owned_; ++i) {
    const double m = mass_[i], inertia = 0.4 * m * radius_[i] * radius_[i];
    local[0] += 0.5 * m * v_[i].squaredNorm() + 0.5 * inertia * w_[i].squaredNorm();
    local[1] -= m * scene_.gravity.dot(x_[i]);
    const Eigen::Vector3d p = m * v_[i], l = x_[i].cross(p) + inertia * w_[i];
    for (int d = 0; d < 3; ++d) {
      local[2 + d] += p[d];
      local[5 + d] += l[d];
    }
  }
  local[1] += pair_energy_ + obstacle_energy_;
  for (const auto& b : bonds_) local[8] += b.intact ? 0 : 1;
  local[9] = static_cast<double>(contacts_);
  double global[10];
  MPI_Allreduce(local, global, 10, MPI_DOUBLE, MPI_SUM, comm_);
  Observables o;
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

void ExplicitBdem::write_frame(io::TrajectoryWriter& writer) {
  const Observables o = observables();
  ScopedPhase timer(timers_, Phase::Output);
  std::vector<std::int64_t> bonds;
  for (const auto& b : bonds_)
    if (b.intact) bonds.insert(bonds.end(), {b.a, b.b});
  const std::size_t n = n_owned_;
  io::FrameFields fields{std::span<const std::int64_t>(gid_.data(), n),
                         std::span<const double>(flat(x_), 3 * n),
                         std::span<const double>(flat(q_), 4 * n),
                         std::span<const double>(flat(v_), 3 * n),
                         std::span<const double>(flat(w_), 3 * n),
                         std::span<const double>(radius_.data(), n),
                         bonds};
  io::FrameObservables fo{step_, time(), o.kinetic, o.potential, o.total, o.momentum, o.angular_momentum,
                          o.bonds_broken, o.contacts};
  writer.write_frame(fo, fields);
}

}  // namespace percussion::bdem
