#include "percussion/methods/ipc/contact_blocks.hpp"

#include <limits>

#include "percussion/methods/ipc/contact_assembly.hpp"
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
  MPI_Comm comm = MPI_COMM_NULL;
  PetscCall(PetscObjectGetComm(reinterpret_cast<PetscObject>(vector), &comm));
  ContactAssembly(comm, vector, dim).add(for_each, vector);
  return 0;
}

PetscErrorCode add_blocks(const std::function<void(const ContactBlock&)>& for_each, int dim, ::Mat matrix) {
  MPI_Comm comm = MPI_COMM_NULL;
  PetscCall(PetscObjectGetComm(reinterpret_cast<PetscObject>(matrix), &comm));
  ::Vec rows = nullptr;
  PetscCall(MatCreateVecs(matrix, nullptr, &rows));
  ContactAssembly(comm, rows, dim).add(for_each, matrix);
  PetscCall(VecDestroy(&rows));
  return 0;
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
