#pragma once
// Bonded particles distributed over ranks: the state both BDEM integrators (explicit, implicit) advance.
//
// Particles keep the rank the partitioner gave them; each rank holds ghosts for its bonds' partners and for everything
// within the contact cut-off (Verlet lists with a skin). Every bond and contact pair is evaluated by the owner
// of its smaller global id; results for ghosts travel back entry by entry and each particle adds its
// contributions sorted by partner id. The sum therefore has the same terms in the same order on any rank
// count: given the same pair results, every partition produces the same per-particle totals bit for bit.
#include <mpi.h>

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "percussion/core/observable_set.hpp"
#include "percussion/methods/bdem/totals.hpp"
#include "percussion/methods/bdem/scene.hpp"
#include "percussion/core/timer.hpp"
#include "percussion/geometry/cell_list.hpp"
#include "percussion/methods/bdem/model.hpp"
#include "percussion/parallel/distributed_items.hpp"
#include "percussion/parallel/ordered_sum.hpp"
#include "percussion/physics/bond_rest.hpp"
#include "percussion/physics/contact.hpp"

namespace percussion::io {
class TrajectoryWriter;
}

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
  std::int32_t bond;    // index into bonds of an intact bond, or -1 (contact only; a break sets it)
};

class Domain {
 public:
  // Takes the model's rows, placed on their owners (model.hpp's place(), on a copy if they are not yet).
  Domain(const BdemScene& scene, MPI_Comm comm, const Model& model, PhaseTimers& timers);

  // Collective. True when some particle moved more than half the skin since the last rebuild, beyond a
  // displacement common to all (then the pair lists may miss a contact); also checks that the state is finite
  // (throws NumericalError).
  bool needs_rebuild(long step);
  // The displacement since the last rebuild that needs_rebuild tests, and its test: no pair can be missed while
  // every owned particle on every rank lies within `bound` of one common displacement.
  Eigen::Vector3d displacement(std::size_t i) const { return x[i] - x_ref_[i]; }
  bool within_skin(double bound) const { return 2 * bound <= skin; }
  void rebuild();           // collective: ghosts, pairs, routing
  // After bonds broke: their pairs become contact-only, so the pair loops tell a bonded pair from the pair alone,
  // without reading its bond (a cache miss per pair where they only skip the bonds).
  void unlink_broken_bonds();
  void refresh_ghosts();    // collective: ghost x, q, v, w from their owners
  // The owned slots other ranks hold as ghosts (refresh_ghosts sends them), ascending; fixed between rebuilds.
  std::vector<std::int32_t> sent_slots() const { return items_.sent_slots(); }

  // Collective. contrib holds 12 values per pair (force, torque on a; force, torque on b); sums them per owned
  // particle in partner-id order into f and t.
  // `only`, if given: the owned particles to sum for (the others' f and t are left as they were).
  void sum_pairs(std::vector<Eigen::Vector3d>& f, std::vector<Eigen::Vector3d>& t,
                 const std::vector<std::int32_t>* only = nullptr);
  std::vector<double>& pair_contributions() { return contrib_; }

  // Collective: the pairs whose second particle is a ghost are this rank's outgoing entries, numbered in pair
  // order (outgoing_entries() of them); `width` values per entry, per_entry[e*width ...], go to that particle's
  // owner in a fixed order. received holds them per incoming entry e, whose owned target particle is
  // incoming_slot(e). (Used for Hessian rows of ghosts: PETSc's own off-process assembly adds in message-arrival
  // order, which would make results differ between identical runs.)
  void send_to_owners(std::span<const double> per_entry, int width, std::vector<double>& received);
  std::size_t outgoing_entries() const { return sum_.outgoing(); }
  std::int32_t incoming_slot(std::size_t e) const { return sum_.incoming()[e].owned; }

  // Collective: ghost slots of a per-particle field (owned values filled in) receive their owners' values.
  void forward(std::vector<double>& field);
  void forward(std::vector<Eigen::Vector3d>& p);
  void forward(std::vector<Eigen::Vector3d>& p, std::vector<Eigen::Vector4d>& q);
  // Per owned particle: how many partners it has among this rank's owned particles and elsewhere
  // (the block pattern of a pair-coupled matrix, fixed between rebuilds).
  const std::vector<int>& partners_owned() const { return partners_owned_; }
  const std::vector<int>& partners_other() const { return partners_other_; }
  // Counts rebuilds, so users of the pair pattern know when it changed.
  long rebuilds() const { return rebuilds_; }

  const physics::ContactLaw& pair_law(int ma, int mb) const { return pair_law_[ma * n_materials_ + mb]; }
  const physics::ContactLaw& obstacle_law(std::size_t o, int m) const { return obstacle_law_[o * n_materials_ + m]; }

  // Kinetic energy, gravity potential, momenta and broken bonds over all ranks, plus the caller's share of
  // interaction energy and contacts.
  Totals totals(double interaction_energy, long contacts) const;
  void write_frame(io::TrajectoryWriter& writer, long step, double time, const ObservableSet& o) const;
  // The state as a checkpoint holds it (the owned particles' rows and their bonds, placed): what a restart or a
  // re-partition continues. integrator/form name the writer: they say what force/torque hold. newton_width > 0
  // (the same on every rank): newton_state holds that many numbers per owned particle. bdf2_history: 13 numbers per
  // owned particle (or empty on every rank) and the length of the step it spans. gradient_step > 0: the length of
  // the step whose midpoint force/torque are at. schedule: how an implicit run's next step starts.
  Model snapshot(long step, const StepClock& clock, std::span<const Eigen::Vector3d> force,
                 std::span<const Eigen::Vector3d> torque, const std::string& integrator, const std::string& form,
                 std::span<const double> newton_state = {}, int newton_width = 0,
                 std::span<const double> bdf2_history = {}, double bdf2_history_step = 0, double gradient_step = 0,
                 const StepSchedule& schedule = {}) const;
  // Collective: writes a snapshot of this domain as a checkpoint file (tables whose rows are global ids).
  void write_checkpoint(const std::string& path, const Model& snapshot) const;

  const BdemScene& scene;
  MPI_Comm comm;
  int rank = 0, size = 1;
  std::int64_t n_global = 0, bonds_global = 0;
  std::size_t n_owned = 0;

 private:
  parallel::DistributedItems items_;  // holds the fields below (declared before them: initialised first)

 public:
  // Fields of the items container (checkpoint names in quotes): owned particles, then ghosts.
  const std::vector<std::int64_t>& gid;
  std::vector<Eigen::Vector3d>& x;  // "position"
  std::vector<Eigen::Vector3d>& v;  // "velocity"
  std::vector<Eigen::Vector3d>& w;  // "angular_velocity"
  std::vector<Eigen::Vector4d>& q;  // "quaternion"
  std::vector<double>& radius;      // "radius"
  std::vector<double>& mass;        // "mass"
  std::vector<int>& material;       // "material"
  std::vector<int>& constraint;     // "constraint": boundary condition index or -1

  std::vector<Bond> bonds;
  std::vector<Pair> pairs;
  double r_max = 0, skin = 0, cutoff = 0;

 private:
  void take_my_part(const Model& g);
  void build_pairs();
  void build_routing();

  PhaseTimers& timers_;
  parallel::OrderedSum sum_;  // of the pairs' contributions: 2 per pair, to a and to b
  geometry::CellList cells_;
  std::vector<Eigen::Vector3d> x_ref_;              // owned positions at the last rebuild
  std::vector<double> contrib_;
  std::vector<int> partners_owned_, partners_other_;
  long rebuilds_ = 0;
  int n_materials_ = 0;
  std::vector<physics::ContactLaw> pair_law_, obstacle_law_;
};

// Eigen's fixed-size vectors are plain arrays: a vector of them is one contiguous block of doubles.
template <class V>
double* flat(std::vector<V>& a) {
  return reinterpret_cast<double*>(a.data());
}
template <class V>
std::span<const double> flat(std::span<const V> a) {
  return {reinterpret_cast<const double*>(a.data()), a.size() * static_cast<std::size_t>(V::SizeAtCompileTime)};
}

}  // namespace percussion::bdem
