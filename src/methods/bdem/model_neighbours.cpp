#include "percussion/methods/bdem/model_neighbours.hpp"

#include <algorithm>

#include "percussion/geometry/cell_list.hpp"

namespace percussion::bdem {

ModelNeighbours::ModelNeighbours(MPI_Comm comm, const Model& model, std::span<const std::int64_t> tags,
                                 double tolerance, std::span<const parallel::DistributedItems::Request> requests)
    : items_(comm),
      x_(items_.add_field<Eigen::Vector3d>("position", false)),
      radius_(items_.add_field<double>("radius", false)),
      tag_(items_.add_field<std::int64_t>("tag", false)),
      scale_(1.0 + tolerance) {
  items_.set_owned(model.id);
  const std::size_t n = model.rows();
  std::copy(model.x.begin(), model.x.end(), x_.begin());
  std::copy(model.radius.begin(), model.radius.end(), radius_.begin());
  std::copy(tags.begin(), tags.end(), tag_.begin());
  // The ghost search's reach is inclusive; a hair more keeps pairs exactly at touching distance.
  std::vector<double> reach(n);
  for (std::size_t i = 0; i < n; ++i) reach[i] = radius_[i] * scale_ * (1.0 + 1e-9);
  items_.build_ghosts(std::span<const Eigen::Vector3d>(x_.data(), n), reach, requests);
}

void ModelNeighbours::for_each_touching(const std::function<void(std::size_t, std::size_t)>& f) const {
  if (x_.empty()) return;
  double r_max = 0;
  for (double r : radius_) r_max = std::max(r_max, r);
  // As geometry::touching_pairs: the grid's cut-off is strict, widened a hair; the exact test decides.
  const double cutoff = 2.0 * r_max * scale_ * (1.0 + 1e-9);
  geometry::CellList cells;
  cells.build(std::span<const Eigen::Vector3d>(x_.data(), x_.size()), cutoff);
  const std::size_t owned = items_.owned();
  cells.for_each_pair(cutoff, [&](std::size_t i, std::size_t j, double d2) {
    const double reach = (radius_[i] + radius_[j]) * scale_;
    if (d2 > reach * reach) return;
    if (i > j) std::swap(i, j);
    if (i < owned) f(i, j);
  });
}

}  // namespace percussion::bdem
