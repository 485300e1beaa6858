#include "percussion/methods/ipc/contact_stiffness.hpp"

#include <stdexcept>

namespace percussion::ipc {
namespace {

void check(PetscErrorCode status) {
  if (status != 0) throw std::runtime_error("initial_contact_stiffness: PETSc error " + std::to_string(status));
}

}  // namespace

BarrierStiffness initial_contact_stiffness(const ContactSet& set, ::Vec elastic_gradient, double kappa_min) {
  ::Vec barrier = nullptr;
  check(VecDuplicate(elastic_gradient, &barrier));
  check(VecSet(barrier, 0.0));
  check(set.add_gradient(1.0, barrier));
  check(VecAssemblyBegin(barrier));
  check(VecAssemblyEnd(barrier));
  PetscScalar dot = 0.0;
  PetscReal norm = 0.0;
  check(VecDot(barrier, elastic_gradient, &dot));
  check(VecNorm(barrier, NORM_2, &norm));
  check(VecDestroy(&barrier));
  return initial_barrier_stiffness(dot, norm * norm, kappa_min);
}

}  // namespace percussion::ipc
