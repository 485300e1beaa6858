#include "percussion/solvers/single_precision_product.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <utility>

#include "percussion/core/error.hpp"
#include "percussion/solvers/sbaij_block.hpp"

namespace percussion::solvers {
namespace {
constexpr int B = SbaijBlock::kBlock;
constexpr int BB = B * B;
using BlockF = Eigen::Matrix<float, B, B, Eigen::ColMajor>;  // PETSc stores a block column by column
using Vec6 = Eigen::Matrix<double, B, 1>;
constexpr const char* kKey = "percussion_single_precision_product";

PetscErrorCode multiply_callback(Mat block, Vec x, Vec y) {
  PetscContainer container = nullptr;
  PetscCall(PetscObjectQuery(reinterpret_cast<PetscObject>(block), kKey, reinterpret_cast<PetscObject*>(&container)));
  void* product = nullptr;
  PetscCall(PetscContainerGetPointer(container, &product));
  const PetscScalar* in = nullptr;
  PetscScalar* out = nullptr;
  PetscCall(VecGetArrayRead(x, &in));
  PetscCall(VecGetArray(y, &out));
  static_cast<const SinglePrecisionProduct*>(product)->multiply(in, out);
  PetscCall(VecRestoreArray(y, &out));
  PetscCall(VecRestoreArrayRead(x, &in));
  return 0;
}
}  // namespace

void SinglePrecisionProduct::attach(Mat A) {
  uncopied_.emplace(A, "single-precision product");  // (checks A now, not at the first product)
  Mat local = uncopied_->local;

  PetscContainer container = nullptr;
  petsc_check(PetscObjectQuery(reinterpret_cast<PetscObject>(local), kKey, reinterpret_cast<PetscObject*>(&container)),
              "PetscObjectQuery");
  if (!container) {
    petsc_check(PetscContainerCreate(PETSC_COMM_SELF, &container), "PetscContainerCreate");
    petsc_check(PetscObjectCompose(reinterpret_cast<PetscObject>(local), kKey, reinterpret_cast<PetscObject>(container)),
                "PetscObjectCompose");
    petsc_check(PetscContainerDestroy(&container), "PetscContainerDestroy");  // the matrix holds it now
    petsc_check(PetscObjectQuery(reinterpret_cast<PetscObject>(local), kKey, reinterpret_cast<PetscObject*>(&container)),
                "PetscObjectQuery");
  }
  petsc_check(PetscContainerSetPointer(container, this), "PetscContainerSetPointer");
  petsc_check(MatSetOperation(local, MATOP_MULT, reinterpret_cast<void (*)(void)>(multiply_callback)),
              "MatSetOperation");
}

void SinglePrecisionProduct::copy_if_stale() const {
  if (!uncopied_) return;
  const SbaijBlock block = std::move(*uncopied_);
  uncopied_.reset();
  n_ = block.rows;
  // The copy leaves out the off-diagonal blocks that are zero: the pattern holds every contact candidate of the
  // Verlet lists, and once a body has broken many of them sit just apart, while a product's cost is reading its
  // blocks. A zero block adds
  // nothing to any sum, so the product is the same to the bit. (The arrays keep their full size: a later
  // pattern with fewer zeros fills them without reallocating.)
  first_.resize(block.first.size());
  column_.resize(block.column.size());
  values_.resize(block.column.size() * BB);
  block.with_values([&](const PetscScalar* values) {
    std::size_t kept = 0;
    for (std::size_t k = 0; k < static_cast<std::size_t>(n_); ++k) {
      const auto diagonal = static_cast<std::size_t>(block.first[k]), end = static_cast<std::size_t>(block.first[k + 1]);
      first_[k] = static_cast<PetscInt>(kept);
      for (std::size_t p = diagonal; p < end; ++p) {
        const PetscScalar* a = values + p * BB;
        if (p != diagonal && SbaijBlock::zero(a)) continue;
        column_[kept] = block.column[p];
        std::transform(a, a + BB, &values_[kept * BB], [](double v) { return static_cast<float>(v); });
        ++kept;
      }
    }
    first_[static_cast<std::size_t>(n_)] = static_cast<PetscInt>(kept);
  });
}

void SinglePrecisionProduct::multiply(const double* x, double* y) const {
  copy_if_stale();
#if PERCUSSION_AVX2_KERNELS
  if (avx2_) return avx2::sbaij_multiply(n_, first_.data(), column_.data(), values_.data(), x, y);
#endif
  const std::size_t n = static_cast<std::size_t>(n_);
  std::fill(y, y + n * B, 0.0);
  // Upper triangle: the diagonal block (stored whole) once, each off-diagonal block for both of its rows.
  for (std::size_t k = 0; k < n; ++k) {
    const Eigen::Map<const Vec6> xk(x + k * B);
    Vec6 yk = Vec6::Zero();
    for (PetscInt p = first_[k]; p < first_[k + 1]; ++p) {
      const std::size_t j = static_cast<std::size_t>(column_[static_cast<std::size_t>(p)]);
      const Eigen::Matrix<double, B, B> a =
          Eigen::Map<const BlockF>(&values_[static_cast<std::size_t>(p) * BB]).cast<double>();
      yk.noalias() += a * Eigen::Map<const Vec6>(x + j * B);
      if (j != k) Eigen::Map<Vec6>(y + j * B).noalias() += a.transpose() * xk;
    }
    Eigen::Map<Vec6>(y + k * B) += yk;
  }
}

}  // namespace percussion::solvers
