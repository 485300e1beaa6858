#include "balance.hpp"

#include <sstream>

#include "percussion/core/log.hpp"

namespace percussion::cli {

double work_imbalance(MPI_Comm comm, const Method& method) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const double mine = method.local_work();
  double most = 0, total = 0;
  MPI_Allreduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
  return total > 0 ? most * size / total : 1.0;
}

void Balancer::after_step(std::unique_ptr<Method>& method) {
  if (control_.every_steps <= 0 || method->steps() % control_.every_steps != 0) return;
  ++checks_;
  last_ = work_imbalance(comm_, *method);
  worst_ = std::max(worst_, last_);
  if (last_ <= control_.threshold) return;
  std::unique_ptr<Method> next = method->rebalanced();
  if (!next) return;
  const double before = last_;
  method = std::move(next);
  ++rebalances_;
  last_ = work_imbalance(comm_, *method);
  std::ostringstream o;
  o << "step " << method->steps() << ": work per rank max/mean " << before << " > " << control_.threshold
    << ", re-partitioned: now " << last_;
  log::info(o.str());
}

nlohmann::json Balancer::summary() const {
  return {{"every_steps", control_.every_steps}, {"threshold", control_.threshold}, {"checks", checks_},
          {"rebalances", rebalances_}, {"last", last_}, {"worst", worst_}};
}

}  // namespace percussion::cli
