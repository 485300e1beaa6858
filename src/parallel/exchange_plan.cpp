#include "percussion/parallel/exchange_plan.hpp"

namespace percussion::parallel {

void ExchangePlan::assign(std::vector<std::vector<std::int32_t>> send, std::vector<std::size_t> receive_count,
                          int self) {
  send_ = std::move(send);
  offset_.assign(send_.size() + 1, 0);
  neighbours_.clear();
  sent_ = 0;
  for (std::size_t r = 0; r < send_.size(); ++r) {
    offset_[r + 1] = offset_[r] + receive_count[r];
    sent_ += send_[r].size();
    if (static_cast<int>(r) != self && (!send_[r].empty() || receive_count[r] > 0))
      neighbours_.push_back(static_cast<int>(r));
  }
}

}  // namespace percussion::parallel
