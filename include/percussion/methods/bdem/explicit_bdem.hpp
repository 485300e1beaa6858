#pragma once
// Explicit bonded DEM: velocity Verlet for positions and quaternions, bond and contact forces, fracture.
//
// Distribution: particles keep the rank METIS gave them; each rank holds ghosts for its bonds' partners and
// for everything within the contact cut-off (Verlet lists with a skin). Every bond and contact pair is
// evaluated by the owner of its smaller global id; results for ghosts travel back entry by entry and each
// particle adds its contributions sorted by partner id. The sum therefore has the same terms in the same
// order on any rank count: trajectories do not depend on the partition.
#include <mpi.h>

#include <Eigen/Core>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "percussion/geometry/cell_list.hpp"
#include "percussion/methods/bdem/model.hpp"
#include "percussion/methods/method.hpp"
#include "percussion/parallel/halo.hpp"
#include "percussion/physics/bond_rest.hpp"
#include "percussion/physics/contact.hpp"

namespace percussion::bdem {

struct Bond {
  std::int64_t id;      // global bond id (row in checkpoints)
  std::int64_t a, b;    // particle global ids, a < b; this rank owns a
  int b_owner;          // rank that owns b
  physics::BondRest rest;
  double sigma_c, tau_c;
  bool intact;
  std::int32_t la, lb;  // local slots, refreshed at each rebuild (lb = -1 when b is not held)
};

struct Pair {
  std::int32_t a, b;    // local slots; a is owned and has the smaller global id
  std::int32_t bond;    // index into bonds_, or -1 for a contact-only pair
};

class ExplicitBdem final : public Method {
 public:
  ExplicitBdem(const Scene& scene, MPI_Comm comm, GlobalModel model);

  long step() const override { return step_; }
  double time() const override { return static_cast<double>(step_) * dt_; }
  double time_step() const override { return dt_; }
  std::int64_t global_particles() const override { return n_global_; }
  std::int64_t global_bonds() const override { return bonds_global_; }
  std::int64_t local_particles() const override { return static_cast<std::int64_t>(n_owned_); }
  void advance() override;
  Observables observables() override;
  void write_frame(io::TrajectoryWriter& writer) override;
  void write_checkpoint(const std::string& path) override;
  PhaseTimers& timers() override { return timers_; }

  // This rank's owned particles (ascending global id) and the bonds it evaluates: for tests and tools.
  std::span<const std::int64_t> owned_ids() const { return {gid_.data(), n_owned_}; }
  std::span<const Eigen::Vector3d> owned_positions() const { return {x_.data(), n_owned_}; }
  std::span<const Eigen::Vector3d> owned_velocities() const { return {v_.data(), n_owned_}; }
  std::span<const Eigen::Vector4d> owned_quaternions() const { return {q_.data(), n_owned_}; }
  const std::vector<Bond>& bonds() const { return bonds_; }

 private:
  void take_my_part(const GlobalModel& g);
  void rebuild();
  void build_pairs();
  void build_routing();
  void compute_forces();
  const physics::ContactLaw& pair_law(int ma, int mb) const { return pair_law_[ma * n_materials_ + mb]; }

  Scene scene_;
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  double dt_ = 0;
  long step_ = 0;
  std::int64_t n_global_ = 0, bonds_global_ = 0;
  std::size_t n_owned_ = 0;

  // Structure of arrays over owned particles, then ghosts.
  std::vector<std::int64_t> gid_;
  std::vector<Eigen::Vector3d> x_, v_, w_;
  std::vector<Eigen::Vector4d> q_;
  std::vector<double> radius_, mass_;
  std::vector<int> material_;
  // Owned particles only.
  std::vector<Eigen::Vector3d> f_, t_, x_ref_;
  std::vector<int> constraint_;

  std::vector<Bond> bonds_;
  std::vector<Pair> pairs_;
  parallel::Halo halo_;
  std::unordered_map<std::int64_t, std::int32_t> slot_of_;
  geometry::CellList cells_;

  // Contributions: 6 values (force, torque) per pair side; slot 2k is side a of pair k, 2k+1 side b.
  std::vector<double> contrib_, received_, reverse_send_;
  std::vector<std::int32_t> reverse_slot_;         // slot sent for each reverse entry
  std::vector<std::int32_t> sum_start_, sum_slot_;  // per owned particle, slots in partner-id order

  int n_materials_ = 0;
  std::vector<physics::ContactLaw> pair_law_, obstacle_law_;  // [ma*n+mb], [obstacle*n+m]
  double r_max_ = 0, skin_ = 0, cutoff_ = 0;

  double pair_energy_ = 0, obstacle_energy_ = 0;
  long contacts_ = 0;
  PhaseTimers timers_;
};

}  // namespace percussion::bdem
