#pragma once
// IPC's initial barrier stiffness for a distributed pair set (barrier_stiffness.hpp): ∇B, the unit-stiffness
// barrier gradient, is assembled on the layout of the given gradient of the other energies ∇E, then
// κ = clamp(−∇B·∇E / ‖∇B‖², κ_min, 100 κ_min) from the two global reductions.
#include <petscvec.h>

#include "percussion/methods/ipc/contact_set.hpp"
#include "percussion/physics/ipc/barrier_stiffness.hpp"

namespace percussion::ipc {

// Collective. elastic_gradient: a PETSc vector on the dof numbering the set was built with.
BarrierStiffness initial_contact_stiffness(const ContactSet& set, ::Vec elastic_gradient, double kappa_min);

}  // namespace percussion::ipc
