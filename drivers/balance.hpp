#pragma once
// Dynamic load balance: every so many steps, compare the work of each rank (Method::local_work); above the scene's
// threshold, replace the method by its re-partitioned self (Method::rebalanced). Under a graph partition the owned
// items stay where they are between re-partitions; what drifts as fragments fly apart is the work they bring.
#include <mpi.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "percussion/core/scene.hpp"
#include "percussion/methods/method.hpp"

namespace percussion::cli {

class Balancer {
 public:
  Balancer(MPI_Comm comm, const BalanceControl& control) : comm_(comm), control_(control) {}
  // Collective, after each step: measures at every control.every_steps-th step and re-partitions when due.
  void after_step(std::unique_ptr<Method>& method);
  // {checks, rebalances, threshold, last (max/mean at the last check), worst (largest max/mean seen)}.
  nlohmann::json summary() const;

 private:
  MPI_Comm comm_;
  BalanceControl control_;
  long checks_ = 0, rebalances_ = 0;
  double last_ = 1, worst_ = 1;
};

// Collective: max/mean over ranks of the method's work (1 when there is none).
double work_imbalance(MPI_Comm comm, const Method& method);

}  // namespace percussion::cli
