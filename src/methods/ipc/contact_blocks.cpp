#include "percussion/methods/ipc/contact_blocks.hpp"

#include <limits>

#include "percussion/physics/psd_projection.hpp"

namespace percussion::ipc {
namespace {

template <int N>
void emit(const Mat<12>& hessian, bool project, double* out) {
  Eigen::Matrix<double, N, N> h = hessian.topLeftCorner<N, N>();
  if (project) h = physics::project_to_psd<N>(h);
  Eigen::Map<Eigen::Matrix<double, N, N, Eigen::RowMajor>> target(out);
  target = h;
}

// dim consecutive dofs per stencil vertex; a negative first dof (not an unknown) gives negative indices, which
// PETSc skips.
int block_indices(int count, const PetscInt* dof, int dim, PetscInt* index) {
  for (int k = 0; k < count; ++k)
    for (int c = 0; c < dim; ++c) index[k * dim + c] = dof[k] < 0 ? -1 : dof[k] + c;
  return count * dim;
}

}  // namespace

int stencil_ids(const ContactVertices& vertices, const ContactPair& pair, std::int64_t* global_id, PetscInt* dof) {
  const int n = stencil_size(pair.type);
  for (int k = 0; k < n; ++k) {
    const auto& entry = vertices.entry(static_cast<std::size_t>(pair.vertex[std::size_t(k)]));
    global_id[k] = entry.global_id;
    dof[k] = static_cast<PetscInt>(entry.dof);
  }
  return n;
}

void hessian_block(const Mat<12>& hessian, int size, bool project, double* out) {
  switch (size) {
    case 2: emit<2>(hessian, project, out); break;
    case 3: emit<3>(hessian, project, out); break;
    case 6: emit<6>(hessian, project, out); break;
    default: emit<12>(hessian, project, out); break;
  }
}

PetscErrorCode add_blocks(const std::function<void(const ContactBlock&)>& for_each, int dim, ::Vec vector) {
  PetscErrorCode status = 0;
  for_each([&](int count, const std::int64_t*, const PetscInt* dof, const double* values) {
    PetscInt index[12];
    const int n = block_indices(count, dof, dim, index);
    if (status == 0) status = VecSetValues(vector, n, index, values, ADD_VALUES);
  });
  return status;
}

PetscErrorCode add_blocks(const std::function<void(const ContactBlock&)>& for_each, int dim, ::Mat matrix) {
  PetscErrorCode status = 0;
  for_each([&](int count, const std::int64_t*, const PetscInt* dof, const double* values) {
    PetscInt index[12];
    const int n = block_indices(count, dof, dim, index);
    if (status == 0) status = MatSetValues(matrix, n, index, n, index, values, ADD_VALUES);
  });
  return status;
}

double global_energy(MPI_Comm comm, parallel::ExactSum& local, bool infinite) {
  // An infinite term is not representable in the accumulator: flagged apart.
  int any = infinite ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, comm);
  if (any) return std::numeric_limits<double>::infinity();
  local.normalise();
  auto& digits = local.digits();
  MPI_Allreduce(MPI_IN_PLACE, digits.data(), static_cast<int>(digits.size()), MPI_INT64_T, MPI_SUM, comm);
  return local.value();
}

}  // namespace percussion::ipc
