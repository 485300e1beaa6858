#include "percussion/core/timer.hpp"

namespace percussion {

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::Pairs: return "pair forces";
    case Phase::Halo: return "halo exchange";
    case Phase::Rebuild: return "neighbour rebuild";
    case Phase::Integrate: return "integrate";
    case Phase::Solve: return "linear solve";
    case Phase::LineSearch: return "line search";
    case Phase::Output: return "output";
    case Phase::Checkpoint: return "checkpoint";
    case Phase::Setup: return "setup";
    case Phase::Count: break;
  }
  return "?";
}

PhaseTimers::PhaseTimers() {
  for (int i = 0; i < static_cast<int>(Phase::Count); ++i) names_.emplace_back(phase_name(static_cast<Phase>(i)));
  seconds_.assign(names_.size(), 0.0);
}

int PhaseTimers::phase(const std::string& name) {
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return static_cast<int>(i);
  names_.push_back(name);
  seconds_.push_back(0.0);
  return static_cast<int>(names_.size() - 1);
}

std::vector<PhaseTimers::Stat> PhaseTimers::reduce(MPI_Comm comm, double total_wall) const {
  const int n = static_cast<int>(seconds_.size());
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<double> mn(seconds_.size()), mx(seconds_.size()), sum(seconds_.size());
  MPI_Allreduce(seconds_.data(), mn.data(), n, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(seconds_.data(), mx.data(), n, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(seconds_.data(), sum.data(), n, MPI_DOUBLE, MPI_SUM, comm);
  std::vector<Stat> out;
  double accounted = 0;
  for (int i = 0; i < n; ++i) {
    double avg = sum[i] / size;
    accounted += avg;
    out.push_back({names_[static_cast<std::size_t>(i)], mn[i], avg, mx[i],
                   total_wall > 0 ? 100.0 * avg / total_wall : 0.0});
  }
  double other = total_wall > accounted ? total_wall - accounted : 0.0;
  out.push_back({"other", other, other, other, total_wall > 0 ? 100.0 * other / total_wall : 0.0});
  return out;
}

}  // namespace percussion
