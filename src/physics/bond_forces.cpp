// Bodies of bond_forces.hpp's per-bond kernel (forces, torques, energy, stresses), compiled once here instead of
// in every translation unit that includes the header.
#include "percussion/physics/bond_forces.hpp"

#include <Eigen/Core>
#include <Eigen/Geometry>  // cross()
#include <algorithm>
#include <cmath>

#include "percussion/physics/bond_bendtwist.hpp"
#include "percussion/physics/bond_rest.hpp"
#include "percussion/physics/bond_shear.hpp"
#include "percussion/physics/quaternion.hpp"

namespace percussion::physics {

namespace detail {
// Eqs. 12–13 from the normal force k_n (L − l0), the shear part of ∇_{p_j}V and the bend/twist rotation vector t.
// [ERRATUM?] eq. 12 uses |F_n|, so compression counts too (the paper's reading, default); classical BDEM counts
// tension only (BondModel::tensile_only), notes §7 item 5.
BondStresses stresses(double fn, const Eigen::Vector3d& shear_gradient, const Eigen::Vector3d& t,
                      const BondRest& rest, bool tensile_only) {
  const double normal_force = tensile_only ? std::max(0.0, fn) : std::abs(fn);
  const double shear_force = shear_gradient.norm();
  const double bend_moment = rest.k_bend * std::sqrt(t[1] * t[1] + t[2] * t[2]);
  const double twist_moment = rest.k_twist * std::abs(t[0]);
  return {normal_force / rest.area + bend_moment * rest.r0 / rest.I,
          shear_force / rest.area + twist_moment * rest.r0 / rest.J};
}

// What both the forces and the stresses read: q_j in q_i's hemisphere, the direction d, the stretch and the normal
// force k_n (L − l0), the shear terms (their n-gradient only with `Rotation`) and the bend/twist rotation vector t as
// in the energy (with bend_scale).
struct BondState {
  Eigen::Vector4d qjs;
  Eigen::Vector3d d;
  double stretch, fn;
  shear::Terms<double> sh;
  Eigen::Vector3d t;
};

template <bool Rotation>
BondState bond_state(const Eigen::Vector3d& pi, const quat::Quat& qi, const Eigen::Vector3d& pj,
                     const quat::Quat& qj, const BondRest& rest) {
  BondState s;
  const double sign = qi.dot(qj) < 0.0 ? -1.0 : 1.0;
  s.qjs = sign * qj;
  const Eigen::Vector3d delta = pj - pi;
  const double L = delta.norm();
  const double inv_L = 1.0 / L;
  s.d = delta * inv_L;
  s.stretch = L - rest.l0;  // ∇_{p_j} V_stretch = k_n (L − l0) d
  s.fn = rest.kn * s.stretch;
  s.sh = shear::terms_core<double, Rotation>(s.d, inv_L, qi + s.qjs, rest);
  s.t = rest.bend_scale * (rest.R0 * bendtwist::relative_vec(s.qjs, qi));
  return s;
}

// −½ G_r(q) g = −½ (s g_v + t × g_v − g_w t), quat::torque_world without forming G_r.
Eigen::Vector3d world_torque(const Eigen::Vector4d& q, const Eigen::Vector4d& g) {
  const Eigen::Vector3d t = q.head<3>(), gv = g.head<3>();
  return -0.5 * (q[3] * gv + t.cross(gv) - g[3] * t);
}
}  // namespace detail

BondForces bond_forces(const Eigen::Vector3d& pi, const quat::Quat& qi, const Eigen::Vector3d& pj,
                       const quat::Quat& qj, const BondRest& rest, bool tensile_only) {
  const detail::BondState s = detail::bond_state<true>(pi, qi, pj, qj, rest);
  const Eigen::Vector3d Kt = bendtwist::stiffness_times(s.t, rest);
  const Eigen::Vector3d c = rest.bend_scale * (rest.R0.transpose() * Kt);

  // ∇_{q_i} V and ∇_{q_j'} V (q_j' = sign q_j); the sign of the q_j gradient cancels inside the torque
  // because G_r(−q) = −G_r(q).
  const Eigen::Vector4d gqi = s.sh.g_n + bendtwist::gl_transpose_times(s.qjs, c);
  const Eigen::Vector4d gqjs = s.sh.g_n - bendtwist::gl_transpose_times(qi, c);

  BondForces out;
  const Eigen::Vector3d gpj = s.fn * s.d + s.sh.g_pj;
  out.fi = gpj;
  out.fj = -gpj;
  out.ti = detail::world_torque(qi, gqi);
  out.tj = detail::world_torque(s.qjs, gqjs);
  out.energy = 0.5 * s.fn * s.stretch + s.sh.energy + 0.5 * s.t.dot(Kt);
  const BondStresses st = detail::stresses(s.fn, s.sh.g_pj, s.t, rest, tensile_only);
  out.sigma = st.sigma;
  out.tau = st.tau;
  return out;
}

BondStresses bond_stresses(const Eigen::Vector3d& pi, const quat::Quat& qi, const Eigen::Vector3d& pj,
                           const quat::Quat& qj, const BondRest& rest, bool tensile_only) {
  const detail::BondState s = detail::bond_state<false>(pi, qi, pj, qj, rest);
  return detail::stresses(s.fn, s.sh.g_pj, s.t, rest, tensile_only);
}

}  // namespace percussion::physics
