// Per-component impact resolution: build the component's ImpactSystem in contact order, run the operator (with
// restitution and friction as the scene says), write the velocities back.
#include "percussion/methods/rigid/resolve.hpp"

#include <algorithm>
#include <cmath>

#include <Eigen/Geometry>  // cross()

#include "percussion/core/splitmix.hpp"
#include "percussion/methods/rigid/box_contacts.hpp"
#include "percussion/physics/impact/anti_locking.hpp"
#include "percussion/physics/impact/contact_qp.hpp"
#include "percussion/physics/impact/friction.hpp"
#include "percussion/physics/impact/gauss_seidel.hpp"
#include "percussion/physics/impact/generalized_reflections.hpp"
#include "percussion/physics/impact/impact_system.hpp"
#include "percussion/physics/impact/lineality_distance.hpp"
#include "percussion/physics/impact/restitution.hpp"

namespace percussion::rigid {

namespace {

// One component as an impact problem: its bodies in ascending id, its contacts in contact order.
class ComponentProblem {
 public:
  ComponentProblem(const BallState& balls, int dim, std::span<const Contact> contacts, const Components& comps,
                   std::int64_t comp, std::vector<int>& local)
      : balls_(balls), dim_(dim), contacts_(contacts), comps_(comps), comp_(comp), local_(local) {
    for (std::int64_t i = first_body(); i < end_body(); ++i) {
      const std::int64_t k = comps.body_list[i];
      local_[k] = balls.is_box(k) ? system.add_body(6, box_mass_block(balls, k))
                                  : system.add_point_mass(dim, balls.mass[k]);
    }
    for (std::int64_t i = comps.contact_start[comp]; i < comps.contact_start[comp + 1]; ++i) {
      const Contact& c = contacts[comps.contact_list[i]];
      add_row(c, c.normal, [&](int a, std::span<const double> g_a, int b, std::span<const double> g_b) {
        system.add_constraint(a, g_a, b, g_b);
        one_sided_ = one_sided_ || b < 0;
      });
    }
    system.finish();
    v.resize(system.dofs());
    for (std::int64_t i = first_body(); i < end_body(); ++i) {
      const std::int64_t k = comps.body_list[i];
      const int at = system.body_offset(local_[k]);
      for (int d = 0; d < dim; ++d) v[at + d] = balls.velocity[k][d];
      if (balls.is_box(k))
        for (int d = 0; d < 3; ++d) v[at + 3 + d] = balls.angular_velocity[k][d];
    }
  }
  ~ComponentProblem() {
    for (std::int64_t i = first_body(); i < end_body(); ++i) local_[comps_.body_list[i]] = -1;
  }

  std::int64_t first_body() const { return comps_.body_start[comp_]; }
  std::int64_t end_body() const { return comps_.body_start[comp_ + 1]; }
  std::int64_t smallest_body() const { return balls_.global_id(comps_.body_list[first_body()]); }
  // Global index of the component's c-th constraint in the contact list.
  std::int64_t contact(int c) const { return comps_.contact_list[comps_.contact_start[comp_] + c]; }
  bool one_sided() const { return one_sided_; }
  // Ball centres as a velocity: without walls or fixed bodies every contact separates along it, which proves that
  // there is no implicit equality (the lineality program is skipped).
  std::vector<double> centres() const {
    std::vector<double> w(system.dofs());
    for (std::int64_t i = first_body(); i < end_body(); ++i) {
      const std::int64_t k = comps_.body_list[i];
      for (int d = 0; d < dim_; ++d) w[system.body_offset(local_[k]) + d] = balls_.position[k][d];
    }
    return w;  // a box's angular part stays 0: a convex body's centre lies behind each of its contact points
  }

  void write_back(BallState& balls) const {
    for (std::int64_t i = first_body(); i < end_body(); ++i) {
      const std::int64_t k = comps_.body_list[i];
      const int at = system.body_offset(local_[k]);
      for (int d = 0; d < dim_; ++d) balls.velocity[k][d] = v[at + d];
      if (balls.is_box(k))
        for (int d = 0; d < 3; ++d) balls.angular_velocity[k][d] = v[at + 3 + d];
    }
  }

  // Friction contacts with a tangent perpendicular to the normal (2D), or two (3D), built like the normal's blocks.
  std::vector<impact::FrictionContact> friction(double mu) const {
    std::vector<impact::FrictionContact> out;
    for (int c = 0; c < system.constraints(); ++c) {
      const Contact& k = contacts_[contact(c)];
      Eigen::Vector3d t1, t2;
      if (dim_ == 2) {
        t1 = Eigen::Vector3d(-k.normal[1], k.normal[0], 0);
      } else {
        const Eigen::Vector3d axis = std::abs(k.normal[0]) < 0.9 ? Eigen::Vector3d::UnitX() : Eigen::Vector3d::UnitY();
        t1 = k.normal.cross(axis).normalized();
        t2 = k.normal.cross(t1);
      }
      impact::FrictionContact f;
      f.constraint = c;
      f.mu = mu;
      const auto blocks = [&](const Eigen::Vector3d& t, std::vector<double>& on_a, std::vector<double>& on_b) {
        add_row(k, t, [&](int, std::span<const double> g_a, int, std::span<const double> g_b) {
          on_a.assign(g_a.begin(), g_a.end());
          on_b.assign(g_b.begin(), g_b.end());
        });
      };
      blocks(t1, f.t1_a, f.t1_b);
      if (dim_ == 3) blocks(t2, f.t2_a, f.t2_b);
      out.push_back(std::move(f));
    }
    return out;
  }

  impact::ImpactSystem system;
  std::vector<double> v;

 private:
  // Box k's 6×6 mass block: m I and the world inertia R diag(I_body) Rᵀ.
  static std::vector<double> box_mass_block(const BallState& balls, std::int64_t k) {
    const Eigen::Matrix3d r = box_of(balls, static_cast<std::size_t>(k)).axes;
    const Eigen::Matrix3d inertia =
        r * geometry::box_inertia(balls.mass[k], balls.half_extents[k]).asDiagonal() * r.transpose();
    std::vector<double> block(36, 0.0);
    for (int d = 0; d < 3; ++d) block[d * 6 + d] = balls.mass[k];
    for (int x = 0; x < 3; ++x)
      for (int y = 0; y < 3; ++y) block[(3 + x) * 6 + 3 + y] = inertia(x, y);
    return block;
  }
  // Hands `add` the raw row of contact c along direction t (its normal, or a tangent): −t on end a and t on end b
  // for a ball, (∓t, ∓r×t) for a box, r from the body's centre to the contact point; a one-sided contact (a wall,
  // or a fixed end) keeps its moving body on end a and passes b = −1.
  template <class Add>
  void add_row(const Contact& c, const Eigen::Vector3d& t, Add&& add) const {
    const std::int64_t n = static_cast<std::int64_t>(balls_.size());
    const auto block = [&](std::int64_t k, double sign, double* g) {
      for (int d = 0; d < dim_; ++d) g[d] = sign * t[d];
      if (!balls_.is_box(k)) return dim_;
      const Eigen::Vector3d arm = (c.point - balls_.position[k]).cross(t);
      for (int d = 0; d < 3; ++d) g[3 + d] = sign * arm[d];
      return 6;
    };
    double ga[6], gb[6];
    const bool a_moves = !balls_.fixed[c.a];
    const bool b_moves = c.b < n && !balls_.fixed[c.b];
    if (a_moves && b_moves) {
      const int la = block(c.a, -1.0, ga), lb = block(c.b, 1.0, gb);
      add(local_[c.a], std::span<const double>(ga, la), local_[c.b], std::span<const double>(gb, lb));
    } else if (a_moves) {
      add(local_[c.a], std::span<const double>(ga, block(c.a, -1.0, ga)), -1, std::span<const double>{});
    } else {
      add(local_[c.b], std::span<const double>(gb, block(c.b, 1.0, gb)), -1, std::span<const double>{});
    }
  }

  const BallState& balls_;
  int dim_;
  std::span<const Contact> contacts_;
  const Components& comps_;
  std::int64_t comp_;
  std::vector<int>& local_;
  bool one_sided_ = false;
};

}  // namespace

InstantResult resolve_contacts(BallState& balls, int dimension, std::span<const Contact> contacts,
                               const Components& components, const ImpactSettings& settings) {
  InstantResult out;
  out.impulses.assign(contacts.size(), 0.0);
  out.tangential.assign(contacts.size(), 0.0);
  out.implicit_equality.assign(contacts.size(), 0);
  out.components = components.count();
  out.contacts = static_cast<std::int64_t>(contacts.size());
  std::vector<int> local(balls.size(), -1);
  for (std::int64_t comp = 0; comp < components.count(); ++comp) {
    ComponentProblem p(balls, dimension, contacts, components, comp, local);
    out.largest_component = std::max(out.largest_component, p.end_body() - p.first_body());
    impact::Resolution elastic_report;
    const auto plain_with = [&](const impact::ImpactSystem& s, std::vector<double>& v,
                                const impact::ResolveOptions& ro) {
      if (settings.op == Operator::generalized_reflections) {
        elastic_report = impact::generalized_reflections(s, v, ro);
      } else {
        impact::GaussSeidelOptions o;
        o.resolve = ro;
        o.order = settings.order;
        o.seed = splitmix64(settings.seed ^ splitmix64(static_cast<std::uint64_t>(p.smallest_body())));
        if (settings.restitution_model == "pairwise") o.restitution = settings.restitution;
        elastic_report = impact::gauss_seidel(s, v, o);
      }
      return elastic_report;
    };
    const impact::ElasticResolver plain = [&](const impact::ImpactSystem& s, std::vector<double>& v) {
      return plain_with(s, v, settings.resolve);
    };
    // Implicit equality constraints are removed (notes Alg. F): before the operator runs, or once it has spent a
    // budget without finishing, from the velocity it started with. A witness velocity skips the program for
    // components that cannot have any.
    impact::AntiLockingReport anti;
    const impact::ElasticResolver anti_locked = [&](const impact::ImpactSystem& s, std::vector<double>& v) {
      const std::vector<double> witness = p.one_sided() ? std::vector<double>{} : p.centres();
      impact::LinealityOptions lo;
      lo.witness = witness;
      return impact::resolve_anti_locked(s, v, plain, lo, &anti);
    };
    const impact::ElasticResolver elastic = [&](const impact::ImpactSystem& s, std::vector<double>& v) {
      if (!settings.anti_locking) return plain(s, v);
      if (settings.lineality_first) return anti_locked(s, v);
      impact::ResolveOptions budget = settings.resolve;
      const std::int64_t m = s.constraints();
      budget.max_reflections = std::min(budget.max_reflections, 1000 * m + 10000);
      budget.max_iterations = std::min(budget.max_iterations, 10 * m + 1000);
      const std::vector<double> arriving = v;
      impact::Resolution r = plain_with(s, v, budget);
      if (r.terminated) return r;
      v = arriving;
      impact::Resolution again = anti_locked(s, v);
      again.iterations += r.iterations;
      again.reflections += r.reflections;
      return again;
    };

    impact::Resolution r;
    std::vector<double> normal;
    if (settings.restitution < 1.0 && settings.restitution_model == "energetic") {
      impact::RestitutionOptions o;
      o.restitution = settings.restitution;
      o.tolerance = settings.resolve.tolerance;
      const impact::RestitutionResult rr = impact::energetic_restitution(p.system, p.v, elastic, o);
      r = rr.elastic;
      r.terminated = rr.terminated;
      r.reason = rr.reason;
      normal = rr.impulses;
    } else {
      r = elastic(p.system, p.v);
      normal = r.impulses;
    }

    out.iterations += r.iterations;
    out.reflections += r.reflections;
    out.renormalisations += r.renormalisations;
    for (int c : anti.implicit) out.implicit_equality[p.contact(c)] = 1;
    out.lineality_dimension += anti.dimension;
    out.projection_energy_loss += anti.energy_removed;
    if (!r.terminated && out.terminated) {
      // The loop met its diagnostic cap: say which component, and how close its contacts are to jamming (δ).
      const impact::LinealityDistance delta = impact::lineality_distance(p.system);
      out.terminated = false;
      out.reason = "component of body " + std::to_string(p.smallest_body()) + " (" +
                   std::to_string(p.end_body() - p.first_body()) + " bodies, " +
                   std::to_string(p.system.constraints()) + " contacts, delta in [" +
                   std::to_string(delta.lower_bound) + ", " + std::to_string(delta.delta) + "]): " + r.reason;
    }
    if (settings.friction > 0.0 && r.terminated) {
      const std::vector<impact::FrictionContact> f = p.friction(settings.friction);
      const impact::FrictionResult fr = impact::friction_post_pass(p.system, f, normal, p.v);
      if (!fr.converged && out.terminated) {
        out.terminated = false;
        out.reason = "component of body " + std::to_string(p.smallest_body()) + ": friction: " + fr.reason;
      }
      for (int c = 0; c < p.system.constraints(); ++c) out.tangential[p.contact(c)] = fr.tangential[c];
    }
    for (int c = 0; c < p.system.constraints(); ++c) {
      out.impulses[p.contact(c)] = normal[c] / std::sqrt(p.system.raw_metric(c));
    }
    p.write_back(balls);
  }
  return out;
}

bool project_onto_contacts(BallState& balls, int dimension, std::span<const Contact> contacts,
                           const Components& components, double tolerance, std::string& why) {
  std::vector<int> local(balls.size(), -1);
  for (std::int64_t comp = 0; comp < components.count(); ++comp) {
    ComponentProblem p(balls, dimension, contacts, components, comp, local);
    const double threshold = -tolerance * std::sqrt(p.system.energy_norm_squared(p.v.data()));
    bool violated = false;
    for (int c = 0; c < p.system.constraints() && !violated; ++c) violated = p.system.slope(c, p.v.data()) < threshold;
    if (!violated) continue;
    std::vector<int> all(p.system.constraints());
    for (int c = 0; c < p.system.constraints(); ++c) all[c] = c;
    const impact::ImpactQp qp(p.system, all, p.v.data());
    const impact::QpResult q = qp.solve_nonnegative();
    // The QP aims far below the feasibility tolerance; a settled pile's nearly dependent contacts can leave its
    // last digits out of reach, and a residual a tenth of the tolerance still leaves every contact feasible.
    if (!q.converged && !(q.residual <= 0.1 * tolerance)) {
      why = "component of body " + std::to_string(p.smallest_body()) + ": the resting-contact projection: " + q.reason;
      return false;
    }
    for (int c = 0; c < p.system.constraints(); ++c) p.system.apply(c, q.x[c], p.v.data());
    p.write_back(balls);
  }
  return true;
}

}  // namespace percussion::rigid
