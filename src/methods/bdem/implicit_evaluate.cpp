// The incremental potential's terms of the implicit bonded DEM at the current iterate: the energy, its reduced
// gradient and the Newton matrix's blocks, pair by pair (bonds, contacts) and particle by particle (inertia,
// gravity, planes), and where each pair's blocks sit in the preallocated matrix.
#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>

#include "percussion/geometry/obstacle.hpp"
#include "percussion/methods/bdem/implicit_bdem.hpp"
#include "percussion/physics/manifold_bond.hpp"
#include "percussion/physics/manifold_bond_gn.hpp"
#include "percussion/physics/manifold_contact.hpp"
#include "percussion/physics/manifold_inertia.hpp"
#include "percussion/physics/quaternion.hpp"

namespace percussion::bdem {
namespace {

using Vec6 = Eigen::Matrix<double, 6, 1>;
using Block6 = Eigen::Matrix<double, 6, 6, Eigen::RowMajor>;  // PETSc takes blocks row by row

// Block b-a, block b-b (row-major 6x6 each), PETSc column of a (−1: nothing), and what the blocks are (kGhost*).
constexpr int kGhostRowWidth = 74;
constexpr int kGhostContact = 1, kGhostChanged = 2, kGhostDiagonal = 4;  // a contact's; its b-a block changed; b-b given

}  // namespace

void ImplicitBdem::locate_pair_blocks() {
  // Known once the matrix pattern is set (its first assembly); until then every block takes add_block().
  const std::size_t n = d_.n_owned;
  pair_position_.assign(d_.pairs.size(), -1);
  bool set = false;
  for (std::size_t k = 0; k < d_.pairs.size(); ++k) {
    const Pair& p = d_.pairs[k];
    if (static_cast<std::size_t>(p.a) >= n || static_cast<std::size_t>(p.b) >= n) continue;
    const auto ra = static_cast<PetscInt>(petsc_row_[p.a]), rb = static_cast<PetscInt>(petsc_row_[p.b]);
    pair_position_[k] = system_.local_position(std::min(ra, rb), std::max(ra, rb));
    set = set || pair_position_[k] >= 0;
  }
  if (!set) pair_position_.clear();  // pattern not set yet (or no owned pair at all): try at the next assembly
}

double ImplicitBdem::evaluate(Want want) {
  const std::size_t np = d_.pairs.size(), n = d_.n_owned;
  const double h = h_;
  pair_energy_.resize(np);
  particle_energy_.resize(n);
  const bool psd = scene_.implicit.hessian == "projected";
  const bool gauss_newton = scene_.implicit.hessian == "gauss_newton";
  const bool midpoint = scene_.implicit.form == "midpoint";
  // V is evaluated at x_e: the iterate (backward Euler) or the midpoint (x + x_n)/2, quaternions averaged as
  // 4-vectors; s = dx_e/dx scales its gradient (s) and Hessian (s²) with respect to the iterate.
  const double s = midpoint ? 0.5 : 1.0;
  if (midpoint) {
    p_mid_.resize(d_.x.size());
    q_mid_.resize(d_.x.size());
    for (std::size_t i = 0; i < d_.x.size(); ++i) {
      p_mid_[i] = 0.5 * (d_.x[i] + p_n_[i]);
      q_mid_[i] = 0.5 * (d_.q[i] + q_n_[i]);
    }
  }
  const std::vector<Eigen::Vector3d>& xe = midpoint ? p_mid_ : d_.x;
  const std::vector<Eigen::Vector4d>& qe = midpoint ? q_mid_ : d_.q;
  // Contacts (pairs and planes) are seen at the iterate in every form, their terms backward Euler's: a penalty
  // evaluated at the midpoint pushes a pair apart by what it overlapped half a step ago, and fragments jostling
  // in contact would gain energy at every step.
  const std::vector<Eigen::Vector3d>& xc = d_.x;
  std::vector<double>& c = d_.pair_contributions();
  // Which contacts touch, recorded at an assembly and compared at a gradient evaluation: a lagged Hessian is
  // kept only while the set is the same (a contact that opens or closes changes the matrix outright).
  // A contact refresh (implicit.contact_refresh): the bonds and the inertia keep their blocks, the contacts' blocks
  // (the matrix's replaceable part, BlockSystem::begin_replacement) are given again at this state. The matrix is
  // then, to the bit, the one the kept part's state and this one assemble, whatever refreshes came between: a
  // restart can assemble it again, and a refreshed matrix may carry to the next step.
  const bool refresh = want == Want::Hessian && contacts_only_;
  // An assembly at a state whose gradient was just evaluated takes only the Hessian: every pair_energy_, c and
  // gradient_ is current (a refresh then touches only the contacts' blocks, a full assembly all blocks).
  const bool gradient_kept = want == Want::Hessian && gradient_at_state_;
  if (want == Want::Hessian) {
    contact_active_.assign(np, 0);
    planes_active_.assign(n, 0);
    compute_scale();
  }
  long contacts_changed = contact_active_.size() == np && planes_active_.size() == n ? 0 : 1;
  // Every pair's gradient terms are evaluated (c), and with them the scale of Φ's round-off: Σ over Φ's terms of
  // |x|·|∂Φ_k/∂x| (+ |∂Φ_k/∂θ|), what round-off in x does to Φ.
  const bool track_noise = want != Want::Energy && !gradient_kept;
  double noise = 0;
  {
    ScopedPhase timer(timers_, Phase::Pairs);
    if (want == Want::Hessian && !refresh) {
      system_.zero();
      // (Not zeroed: a full assembly writes every contact pair's entry, and only refreshes read them.)
      pair_contact_hessian_.resize(np);
      pair_contact_held_.resize(np);
    }
    if (refresh) system_.begin_replacement();
    if (want == Want::Hessian && pair_position_.size() != np) locate_pair_blocks();
    if (want == Want::Hessian) ghost_rows_.resize(d_.outgoing_entries() * kGhostRowWidth);
    // The pair at hand's ghost row, when its b is a ghost: the outgoing entries are those pairs, in pair order.
    std::size_t next_ghost_row = 0;
    double* ghost_row = nullptr;
    // A pair's scaled blocks (column-major; ab is block (a, b), block (b, a) its transpose). Owned rows go straight
    // into the matrix; a ghost's row (blocks b-a and b-b) travels to its owner with the column of a, and the owner
    // inserts it (after the loop), so no value takes PETSc's off-process path. Dirichlet rows and columns drop out.
    // A contact's blocks are the matrix's replaceable part: its diagonal ones given when non-zero (`diagonal`), its
    // off-diagonal one where it `changed` (always in a full assembly, which puts every candidate's block in).
    struct Kind {
      bool contact = false, changed = true, diagonal = true;
    };
    auto insert = [&](std::size_t k, const Pair& p, const physics::BondBlocks& blocks, Kind kind) {
      const bool free_a = d_.constraint[p.a] < 0, free_b = d_.constraint[p.b] < 0;
      const auto ra = static_cast<PetscInt>(petsc_row_[p.a]), rb = static_cast<PetscInt>(petsc_row_[p.b]);
      auto diagonal = [&](PetscInt r, const Block6& b) {  // symmetric: row- and column-major alike
        if (!kind.contact) system_.add_block(r, r, b.data());
        else if (kind.diagonal) system_.add_replaceable(r, r, b.data());
      };
      auto off_diagonal = [&](PetscInt r, PetscInt c, const double* b) {
        if (!kind.contact) system_.add_block(r, c, b);
        else system_.add_replaceable(r, c, b, kind.changed);
      };
      if (free_a) diagonal(ra, blocks.aa);
      if (static_cast<std::size_t>(p.b) >= n) {
        if (!free_b) return;
        if (free_a) std::copy_n(blocks.ab.data(), 36, ghost_row);  // block (b, a) row by row = ab column by column
        std::copy_n(blocks.bb.data(), 36, ghost_row + 36);
        ghost_row[72] = ra;
        ghost_row[73] = kind.contact ? kGhostContact | (kind.changed ? kGhostChanged : 0) |
                                           (kind.diagonal ? kGhostDiagonal : 0)
                                     : 0;
        if (free_a) {
          const Block6 ab = blocks.ab;  // row-major
          off_diagonal(ra, rb, ab.data());
        }
        return;
      }
      if (free_b) diagonal(rb, blocks.bb);
      if (!free_a || !free_b) return;
      if (!pair_position_.empty() && pair_position_[k] >= 0) {
        // Only the upper block goes in (the lower one is its transpose, which SBAIJ does not keep).
        const bool column_major = ra < rb;  // else block (b, a) row by row
        if (!kind.contact) system_.add_at(pair_position_[k], blocks.ab.data(), column_major);
        else system_.add_replaceable_at(pair_position_[k], blocks.ab.data(), column_major, kind.changed);
        return;
      }
      const Block6 ab = blocks.ab;  // row-major
      off_diagonal(ra, rb, ab.data());
      off_diagonal(rb, ra, blocks.ab.data());
    };
    auto scale_of = [&](std::int32_t slot) { return physics::BlockScale{scale_[slot][0], scale_[slot][3]}; };
    // S_a H S_b of the 12×12 blocks of a Hessian that is not a Gauss–Newton one (implicit.hessian).
    auto scaled_blocks = [&](const Pair& p, const physics::Hessian12& H, physics::BondBlocks& out) {
      out.aa = scale_[p.a].asDiagonal() * H.topLeftCorner<6, 6>() * scale_[p.a].asDiagonal();
      out.ab = scale_[p.a].asDiagonal() * H.topRightCorner<6, 6>() * scale_[p.b].asDiagonal();
      out.bb = scale_[p.b].asDiagonal() * H.bottomRightCorner<6, 6>() * scale_[p.b].asDiagonal();
    };
    // Σ over the pair terms of |x|·|∂Φ_k/∂x| (+ |∂Φ_k/∂θ|), each pair's taken at the next pair, while its terms are
    // still in cache (the bound on Φ's round-off, below).
    auto noise_of = [&](std::size_t k) {
      auto l1 = [&](int first) { return Eigen::Map<const Eigen::Vector3d>(&c[12 * k + first]).lpNorm<1>(); };
      return xe[d_.pairs[k].a].norm() * l1(0) + l1(3) + xe[d_.pairs[k].b].norm() * l1(6) + l1(9);
    };
    physics::BondBlocks blocks;
    for (std::size_t k = 0; k < np; ++k) {
      if (track_noise && k > 0) noise += noise_of(k - 1);
      const Pair& p = d_.pairs[k];
      double* g = &c[12 * k];
      if (want == Want::Hessian && static_cast<std::size_t>(p.b) >= n) {  // nothing to insert unless set below
        ghost_row = &ghost_rows_[next_ghost_row++ * kGhostRowWidth];
        std::fill_n(ghost_row, 72, 0.0);
        ghost_row[72] = -1;
        ghost_row[73] = 0;
      }
      if (p.bond >= 0) {
        if (refresh && gradient_kept) continue;  // c and pair_energy_ already hold this state's bond terms
        const physics::BondRest& rest = d_.bonds[p.bond].rest;
        if (want == Want::Energy) {
          pair_energy_[k] = physics::bond_energy(xe[p.a], qe[p.a], xe[p.b], qe[p.b], rest);
          continue;
        }
        const physics::ReducedAt at{d_.q[p.a], d_.q[p.b], s};  // derivatives along the iterate
        if (want == Want::Gradient || refresh) {
          physics::Reduced12 gradient;
          physics::bond_reduced_gradient(xe[p.a], qe[p.a], xe[p.b], qe[p.b], rest, at, pair_energy_[k], gradient);
          std::copy_n(gradient.data(), 12, g);
          continue;
        }
        if (gauss_newton && gradient_kept) {
          physics::gauss_newton_blocks(physics::detail::bond_geometry(xe[p.a], qe[p.a], xe[p.b], qe[p.b]), qe[p.a],
                                       rest, at, scale_of(p.a), scale_of(p.b), blocks);
        } else if (gauss_newton) {
          physics::Reduced12 gradient;
          pair_energy_[k] = physics::bond_gauss_newton(xe[p.a], qe[p.a], xe[p.b], qe[p.b], rest, at, scale_of(p.a),
                                                       scale_of(p.b), gradient, blocks);
          std::copy_n(gradient.data(), 12, g);
        } else {
          const physics::BondReduced br = physics::bond_reduced(xe[p.a], qe[p.a], xe[p.b], qe[p.b], rest, psd, at);
          pair_energy_[k] = br.energy;
          std::copy_n(br.gradient.data(), 12, g);
          scaled_blocks(p, br.hessian, blocks);
        }
        insert(k, p, blocks, Kind{});
        continue;
      }
      physics::PairReduced6 cp =
          predicted_normals_ ? physics::contact_penalty_along(xc[p.a], d_.radius[p.a], xc[p.b], d_.radius[p.b],
                                                              contact_k_, pair_normal_[k])
                             : physics::contact_penalty(xc[p.a], d_.radius[p.a], xc[p.b], d_.radius[p.b], contact_k_);
      // An active-set round: the branch the Newton step reaches (only its Hessian is read below).
      if (refresh && gradient_kept && !contact_branch_.empty() && contact_branch_[k] != 0)
        cp = contact_branch_[k] == 1
                 ? physics::detail::pair_penalty(0.0, branch_normal(k, xc[p.a], xc[p.b]), contact_k_)
                 : physics::detail::pair_apart();
      if (want == Want::Hessian) contact_active_[k] = cp.active;
      else if (!contacts_changed && contact_active_[k] != static_cast<char>(cp.active)) contacts_changed = 1;
      if (!gradient_kept) {
        pair_energy_[k] = cp.energy;
        if (want == Want::Energy) continue;
        std::fill_n(g, 12, 0.0);
        for (int a = 0; a < 3; ++a) {
          g[a] = cp.gradient[a];
          g[6 + a] = cp.gradient[3 + a];
        }
      }
      // Inactive candidates insert zero blocks too: the first assembly drops slots never set, and the
      // pattern must hold every candidate until the next rebuild.
      if (want == Want::Hessian) {
        // The pair's Hessian is [H −H; −H H] (manifold_contact.hpp), given whole; a refresh sets the off-diagonal
        // block only where H changed, to the bit, since it was put in.
        // (Most candidates touch neither now nor before: their stored Hessian is not read.)
        const Eigen::Matrix3d h_now = cp.hessian.topLeftCorner<3, 3>();
        const bool held = refresh && pair_contact_held_[k];
        Kind kind{true, !refresh, !h_now.isZero(0.0)};
        if (kind.diagonal || held) {
          kind.changed = kind.changed || !held || h_now != pair_contact_hessian_[k];
          pair_contact_hessian_[k] = h_now;
        }
        pair_contact_held_[k] = kind.diagonal;
        if (!kind.changed && !kind.diagonal) continue;
        const physics::BlockScale sa = scale_of(p.a), sb = scale_of(p.b);
        blocks.aa.setZero();
        blocks.ab.setZero();
        blocks.bb.setZero();
        blocks.aa.topLeftCorner<3, 3>() = (sa.p * sa.p) * h_now;
        blocks.ab.topLeftCorner<3, 3>() = (-sa.p * sb.p) * h_now;
        blocks.bb.topLeftCorner<3, 3>() = (sb.p * sb.p) * h_now;
        insert(k, p, blocks, kind);
      }
    }
    if (track_noise && np > 0) noise += noise_of(np - 1);
  }
  if (track_noise) {
    d_.sum_pairs(gp_, gy_);
    if (midpoint) {  // the bonds' part alone, for the next predictor (contacts have no moment: gy_ is the bonds')
      for (std::size_t k = 0; k < np; ++k)
        if (d_.pairs[k].bond < 0) std::fill_n(&c[12 * k], 12, 0.0);
      d_.sum_pairs(bond_gp_, bond_gy_);
    }
  }
  if (want == Want::Hessian) {
    d_.send_to_owners(ghost_rows_, kGhostRowWidth, ghost_rows_received_);
    ScopedPhase timer(timers_, Phase::Pairs);
    for (std::size_t e = 0; e * kGhostRowWidth < ghost_rows_received_.size(); ++e) {
      const double* in = &ghost_rows_received_[e * kGhostRowWidth];
      const std::int32_t row = d_.incoming_slot(e);
      if (in[72] < 0 || d_.constraint[row] >= 0) continue;  // partner's column dropped (Dirichlet)
      const auto r = static_cast<PetscInt>(petsc_row_[row]), column = static_cast<PetscInt>(in[72]);
      const int kind = static_cast<int>(in[73]);
      if (!(kind & kGhostContact)) {
        system_.add_block(r, column, in);
        system_.add_block(r, r, in + 36);
        continue;
      }
      system_.add_replaceable(r, column, in, (kind & kGhostChanged) != 0);
      if (kind & kGhostDiagonal) system_.add_replaceable(r, r, in + 36);
    }
  }
  ScopedPhase timer(timers_, Phase::Pairs);
  gradient_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (d_.constraint[i] >= 0) {  // prescribed: fixed during the solve, zero gradient, identity block
      particle_energy_[i] = 0;
      gradient_[i].setZero();
      if (want == Want::Hessian && !refresh) {
        const Block6 one = Block6::Identity();
        system_.add_block(static_cast<PetscInt>(petsc_row_[i]), static_cast<PetscInt>(petsc_row_[i]), one.data());
      }
      continue;
    }
    const Eigen::Vector3d& p = d_.x[i];
    const double m = d_.mass[i], r = d_.radius[i];
    double e = -m * scene_.gravity.dot(xe[i]);
    Vec6 g = Vec6::Zero();
    Eigen::Matrix3d plane_hessian = Eigen::Matrix3d::Zero();
    int planes = 0;
    for (std::size_t o = 0; o < scene_.obstacles.size(); ++o)
      geometry::for_each_plane(scene_.obstacles[o], [&](const Eigen::Vector3d& point, const Eigen::Vector3d& normal) {
        const physics::PlaneReduced3 pl = physics::plane_penalty(xc[i], r, point, normal, contact_k_);
        if (!pl.active) return;
        ++planes;
        e += pl.energy;
        g.head<3>() += pl.gradient;
        plane_hessian += pl.hessian;
      });
    if (want == Want::Hessian) planes_active_[i] = planes;
    else if (!contacts_changed && planes_active_[i] != planes) contacts_changed = 1;
    // The diagonal block in the scaled system's units: the inertia's kept, the planes' replaceable (as the pairs').
    auto add_diagonal = [&](const Vec6& inertia_diagonal) {
      const auto row = static_cast<PetscInt>(petsc_row_[i]);
      if (!refresh) {
        const Block6 block = scale_[i].cwiseProduct(scale_[i]).cwiseProduct(inertia_diagonal).asDiagonal();
        system_.add_block(row, row, block.data());
      }
      if (plane_hessian.isZero(0.0)) return;
      Block6 block = Block6::Zero();
      block.topLeftCorner<3, 3>() = scale_[i].head<3>().asDiagonal() * plane_hessian * scale_[i].head<3>().asDiagonal();
      system_.add_replaceable(row, row, block.data());
    };
    if (gradient_kept) {  // only the Hessian
      add_diagonal(refresh ? Vec6::Zero().eval()
                           : Vec6(physics::inertia(p, d_.q[i], p_hat_[i], q_hat_[i], m, r, h).hessian_diag));
      continue;
    }
    if (want == Want::Energy) {
      particle_energy_[i] = e + physics::inertia_energy(p, d_.q[i], p_hat_[i], q_hat_[i], m, r, h);
      continue;
    }
    const physics::InertiaReduced in = physics::inertia(p, d_.q[i], p_hat_[i], q_hat_[i], m, r, h);
    particle_energy_[i] = e + in.energy;
    noise += xe[i].norm() * (g.head<3>().lpNorm<1>() + in.gradient.head<3>().lpNorm<1>() +
                             s * m * scene_.gravity.lpNorm<1>()) + in.gradient.tail<3>().lpNorm<1>();
    if (midpoint) {  // the bonds' and gravity's ∇V at the midpoint (s undone), for the next step's predictor
      vgrad_p_[i] = 2.0 * (bond_gp_[i] - s * m * scene_.gravity);
      vgrad_y_[i] = 2.0 * gy_[i];
    }
    g += in.gradient;
    g.head<3>() += gp_[i] - s * m * scene_.gravity;
    g.tail<3>() += gy_[i];
    gradient_[i] = g;
    if (want == Want::Hessian) add_diagonal(in.hessian_diag);
  }
  if (want == Want::Hessian) {
    system_.assemble();
    if (!refresh) ++hessian_assemblies_;
    else if (contact_branch_.empty()) ++contact_refreshes_;  // (a round counts as active_set_rounds)
    matrix_mixed_ = refresh;
    // What a checkpoint needs to assemble this matrix again (restore_matrix): the state of its full assembly, which a
    // refresh keeps (the refresh at the carried step's start gives the contacts again).
    matrix_state_.resize(kMatrixState * n);
    if (!refresh) {
      bond_lengths_.resize(np);
      for (std::size_t k = 0; k < np; ++k)  // (bonds_moved reads the bonds' entries only)
        if (d_.pairs[k].bond >= 0) bond_lengths_[k] = (d_.x[d_.pairs[k].b] - d_.x[d_.pairs[k].a]).norm();
    }
    for (std::size_t i = 0; i < n && !refresh; ++i) {
      double* m = &matrix_state_[kMatrixState * i];
      Eigen::Map<Eigen::Vector3d>(m + 0) = d_.x[i];
      Eigen::Map<Eigen::Vector4d>(m + 3) = d_.q[i];
      Eigen::Map<Eigen::Vector4d>(m + 7) = q_hat_[i];
      Eigen::Map<Eigen::Vector3d>(m + 11) = midpoint ? p_n_[i] : Eigen::Vector3d::Zero();
      Eigen::Map<Eigen::Vector4d>(m + 14) = midpoint ? q_n_[i] : Eigen::Vector4d::Zero();
      Eigen::Map<Eigen::Vector3d>(m + 18) = predicted_normals_ ? normal_positions_[i] : Eigen::Vector3d::Zero();
    }
  }
  contacts_changed_ = contacts_changed;
  if (contacts_changed) ++contact_set_changes_;
  if (track_noise) energy_noise_ = noise;
  double local = 0, total = 0;
  for (double e : pair_energy_) local += e;
  for (double e : particle_energy_) local += e;
  MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, d_.comm);
  return total;
}

}  // namespace percussion::bdem
