#pragma once
// One instant's impacts across ranks (notes 003 §6): contacts found by the ranks that own their bodies, components
// of the contact graph labelled by their smallest body id (labels spread through ghosts until no rank lowers one),
// each component gathered on the rank owning that body and resolved there in contact order, exactly as on one rank,
// and the new velocities sent back to their owners; components with more moving bodies than the gather limit are
// resolved by independent-set batches instead (impact_batches.hpp). Never a merge of ghost updates (a Jacobi step).
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "percussion/methods/rigid/contacts.hpp"
#include "percussion/methods/rigid/impact_batches.hpp"
#include "percussion/methods/rigid/resolve.hpp"

namespace percussion::rigid {

// What a root rank runs on the components it gathered: `balls` holds their bodies (dynamic and the fixed ones they
// touch) in ascending id, `contacts` their contacts in contact order (ends as indices into `balls`, a wall as
// balls.size() + its index).
using ComponentSolver =
    std::function<InstantResult(BallState& balls, std::span<const Contact> contacts, const Components& components)>;

struct GatheredContacts {
  // On each root: the contacts it resolved, as global ids (a wall as bodies + its index), and their impulses.
  std::vector<Contact> contacts;
  std::vector<double> impulses;
  std::vector<char> implicit_equality;
};

// Collective. `local` is this rank's owned bodies (the first `owned`, ascending id) and ghosts, with `id` set, and
// `ghost_owner` the rank owning each ghost (the item container's);
// `contacts` those found among them, ends as global ids. Velocities of owned bodies are updated. Returns the totals
// over ranks (terminated only if every component terminated; otherwise the reason the lowest rank with a failed
// component gives); `gathered`, if given, receives what this rank resolved as a root (and, for components resolved
// by batches, the contacts it speaks for). `batches`: how large components are resolved (null: all gathered).
InstantResult solve_components(MPI_Comm comm, BallState& local, std::size_t owned, std::span<const int> ghost_owner,
                               std::int64_t bodies, std::span<const Contact> contacts, const ComponentSolver& solve,
                               GatheredContacts* gathered = nullptr, const BatchSettings* batches = nullptr);

}  // namespace percussion::rigid
