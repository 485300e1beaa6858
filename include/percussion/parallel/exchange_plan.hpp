#pragma once
// One pattern of neighbour traffic, written once for every direction: which local entries go to which rank, in
// which order, and how many arrive from each. Ghost values forward (owned slots to the ranks holding them as
// ghosts), per-pair results back to owners, and ghost values added back to owners are all instances of it.
// Arrivals are stored by source rank ascending and, within a source, in the sender's order, so what lands where
// does not depend on message timing.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "percussion/parallel/messages.hpp"

namespace percussion::parallel {

class ExchangePlan {
 public:
  ExchangePlan() = default;
  // send[r]: local entries for rank r in send order; receive_count[r]: how many rank r sends us. Not collective.
  void assign(std::vector<std::vector<std::int32_t>> send, std::vector<std::size_t> receive_count, int self);

  int ranks() const { return static_cast<int>(send_.size()); }
  const std::vector<std::int32_t>& sent_to(int r) const { return send_[static_cast<std::size_t>(r)]; }
  std::size_t received_from(int r) const {
    return offset_[static_cast<std::size_t>(r) + 1] - offset_[static_cast<std::size_t>(r)];
  }
  std::size_t receive_offset(int r) const { return offset_[static_cast<std::size_t>(r)]; }
  std::size_t received() const { return offset_.empty() ? 0 : offset_.back(); }
  std::size_t sent() const { return sent_; }
  const std::vector<int>& neighbours() const { return neighbours_; }

  // Collective over the neighbours. pack(list, out) writes list.size() * entry_bytes bytes for the entries of one
  // destination; arrivals fill recv (received() * entry_bytes bytes), laid out as the packer wrote them.
  template <class Pack>
  void run(Messages& messages, int tag, std::size_t entry_bytes, Pack&& pack, std::byte* recv,
           std::vector<std::byte>& sendbuf) const;

 private:
  std::vector<std::vector<std::int32_t>> send_;
  std::vector<std::size_t> offset_;  // per source rank, where its entries start; size ranks() + 1
  std::vector<int> neighbours_;      // ranks we send to or receive from, ascending
  std::size_t sent_ = 0;
};

template <class Pack>
void ExchangePlan::run(Messages& messages, int tag, std::size_t entry_bytes, Pack&& pack, std::byte* recv,
                       std::vector<std::byte>& sendbuf) const {
  sendbuf.resize(sent_ * entry_bytes);
  for (int r : neighbours_)
    if (const std::size_t n = received_from(r); n > 0)
      messages.receive(r, recv + receive_offset(r) * entry_bytes, n * entry_bytes, tag);
  std::byte* out = sendbuf.data();
  for (int r : neighbours_) {
    const auto& list = send_[static_cast<std::size_t>(r)];
    if (list.empty()) continue;
    pack(list, out);
    messages.send(r, out, list.size() * entry_bytes, tag);
    out += list.size() * entry_bytes;
  }
  messages.wait();
}

// Field-major packing of typed arrays: for each array in turn, the listed entries' values.
namespace pack {
template <class T>
std::byte* put(const std::vector<std::int32_t>& list, const T* data, std::byte* out) {
  for (std::int32_t i : list) {
    std::memcpy(out, &data[i], sizeof(T));
    out += sizeof(T);
  }
  return out;
}
template <class T>
const std::byte* take(std::size_t n, T* data, const std::byte* in) {
  std::memcpy(static_cast<void*>(data), in, n * sizeof(T));
  return in + n * sizeof(T);
}
}  // namespace pack

}  // namespace percussion::parallel
