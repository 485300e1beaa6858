#pragma once
// Contact-graph components too large to gather on one rank, resolved where their bodies live (notes 003 §6.3b).
// Their contacts are coloured by Jones–Plassmann on hashed global ids (two contacts sharing a moving body never
// share a colour), and each sweep reflects the violated contacts of one colour after another, on the ranks owning
// their bodies, with one exchange of ghost velocities per colour. Contacts of one colour touch disjoint bodies, so
// a colour is exactly a run of pairwise Gauss–Seidel reflections, and the order (colour, then any) depends on global
// ids only: the result is the same bit for bit on any number of ranks. Ghost updates are never merged.
#include <mpi.h>

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "percussion/methods/rigid/contacts.hpp"
#include "percussion/methods/rigid/resolve.hpp"
#include "percussion/physics/impact/resolution.hpp"

namespace percussion::rigid {

struct GatheredContacts;

struct BatchSettings {
  // Components with more moving bodies than this are resolved by batches; negative: every component is gathered.
  std::int64_t gather_limit = -1;
  impact::ResolveOptions resolve;
  double restitution = 1.0;  // inside the reflection (notes Alg. J1); below 1 there is no renormalisation
  // The anti-locking program needs a whole component: one that touches walls or fixed bodies and has not finished
  // within 1000 reflections per contact is handed back for gathering, from the velocities it arrived with.
  bool hand_back = false;
};

// A component resolved by batches, as each rank owning one of its moving bodies knows it.
struct BatchComponent {
  int root = 0;  // the rank owning its smallest body: it decides for the component
  std::int64_t bodies = 0, contacts = 0;
  bool one_sided = false;  // touches a wall or a fixed body
};

struct BatchOutcome {
  InstantResult result;                   // this rank's share of the totals
  std::vector<std::int64_t> handed_back;  // labels of the components to gather after all
};

// Collective. `label[k]`: the component label (smallest body id) of local body k, owned and ghosts; `components`:
// the components of this rank's owned bodies to resolve by batches, by label. Velocities of owned bodies (and of
// ghosts, as their owners have them) are updated; contacts whose designated end (a, or b when a is fixed) this rank
// owns are counted here and, with `gathered`, listed there with their impulses.
BatchOutcome resolve_by_batches(MPI_Comm comm, BallState& local, std::size_t owned, std::span<const int> ghost_owner,
                                std::int64_t bodies, std::span<const Contact> contacts,
                                std::span<const std::int64_t> label,
                                const std::map<std::int64_t, BatchComponent>& components,
                                const BatchSettings& settings, GatheredContacts* gathered);

}  // namespace percussion::rigid
