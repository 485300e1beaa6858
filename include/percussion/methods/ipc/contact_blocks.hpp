#pragma once
// Pair results as blocks on global indices, shared by the barrier and friction sets: a pair's stencil ids, its
// Hessian block (PSD-projected on demand) and the additions into PETSc vectors and matrices.
#include <petscmat.h>

#include <cstdint>
#include <functional>

#include "percussion/methods/ipc/contact_vertices.hpp"
#include "percussion/parallel/exact_sum.hpp"
#include "percussion/physics/ipc/contact_pair.hpp"

namespace percussion::ipc {

// A pair's contribution on its stencil: vertex global ids and first dof indices (count entries) and
// count·dim gradient entries or (count·dim)² Hessian entries, row-major.
using ContactBlock = std::function<void(int count, const std::int64_t* global_id, const PetscInt* dof,
                                        const double* values)>;

// The stencil's global ids and first dofs; returns its vertex count.
int stencil_ids(const ContactVertices& vertices, const ContactPair& pair, std::int64_t* global_id, PetscInt* dof);

// The pair's size×size Hessian block (size = stencil vertices × dim), row-major, projected to PSD if asked.
void hessian_block(const Mat<12>& hessian, int size, bool project, double* out);

// Collective: adds every block that for_each emits into a PETSc vector or matrix on the rows' owners, in a fixed
// order (contact_assembly.hpp); the matrix comes back assembled.
PetscErrorCode add_blocks(const std::function<void(const ContactBlock&)>& for_each, int dim, ::Vec vector);
PetscErrorCode add_blocks(const std::function<void(const ContactBlock&)>& for_each, int dim, ::Mat matrix);

// The exact sum of every rank's terms (the same bits on any rank count); +∞ if any rank saw an infinite term.
// Collective.
double global_energy(MPI_Comm comm, parallel::ExactSum& local, bool infinite);

}  // namespace percussion::ipc
