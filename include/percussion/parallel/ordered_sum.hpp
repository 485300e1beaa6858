#pragma once
// Per-item sums that do not depend on the partition: each owned item adds its contributions sorted by a key
// (the partner's global id), whichever rank computed them. A contribution to a ghost travels to the ghost's owner
// as it is, never pre-summed. Given the same contributions, every rank count then produces the same totals bit
// for bit — what keeps a simulation's trajectory independent of how many ranks run it.
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "percussion/parallel/distributed_items.hpp"

namespace percussion::parallel {

// Orders entries by bucket(e) in [0, buckets), and by `less` within a bucket; returns where each bucket starts.
// A counting sort on the bucket and an insertion sort inside each (an item has a dozen partners), in place of
// one comparison sort of every entry.
template <class Entry, class Bucket, class Less>
std::vector<std::int32_t> bucket_sort(std::vector<Entry>& entries, std::size_t buckets, Bucket bucket, Less less) {
  std::vector<std::int32_t> start(buckets + 1, 0);
  for (const Entry& e : entries) ++start[static_cast<std::size_t>(bucket(e)) + 1];
  for (std::size_t b = 0; b < buckets; ++b) start[b + 1] += start[b];
  std::vector<std::int32_t> fill(start.begin(), start.end() - 1);
  std::vector<Entry> sorted(entries.size());
  for (const Entry& e : entries) sorted[static_cast<std::size_t>(fill[static_cast<std::size_t>(bucket(e))]++)] = e;
  for (std::size_t b = 0; b < buckets; ++b)
    for (std::int32_t k = start[b] + 1; k < start[b + 1]; ++k)
      for (std::int32_t j = k; j > start[b] && less(sorted[j], sorted[j - 1]); --j) std::swap(sorted[j], sorted[j - 1]);
  entries.swap(sorted);
  return start;
}

class OrderedSum {
 public:
  struct Incoming { std::int32_t owned; std::int64_t key; };

  explicit OrderedSum(DistributedItems& items) : items_(items) {}

  // Collective. Contribution c goes to the item in slot target[c] (owned or ghost) with key[c]; contributions to
  // ghosts become this rank's outgoing entries, numbered in contribution order. Valid until the ghosts change.
  void set_up(std::span<const std::int32_t> target, std::span<const std::int64_t> key);

  std::size_t outgoing() const { return outgoing_.size(); }
  // Per incoming entry, in arrival order (source rank, then the sender's order): its owned item and key.
  const std::vector<Incoming>& incoming() const { return incoming_; }

  // values holds W numbers per contribution. exchange (collective over neighbours) sends those of the outgoing
  // entries to the owners; then total calls store(i, sum) for each owned item i (or each of `only`) with the
  // component-wise sum of its contributions in key order.
  template <int W>
  void exchange(std::span<const double> values);
  template <int W, class Store>
  void total(std::span<const double> values, const std::vector<std::int32_t>* only, Store&& store) const;

  // Collective over neighbours: width numbers per outgoing entry (per_entry[e * width ...]) to the owners;
  // received holds width numbers per incoming entry.
  void send_to_owners(std::span<const double> per_entry, int width, std::vector<double>& received);

 private:
  static constexpr int kTag = 7104;
  DistributedItems& items_;
  std::size_t contributions_ = 0;
  std::vector<std::int32_t> outgoing_;  // the contribution of each outgoing entry
  ExchangePlan plan_;                   // outgoing entries → owners
  std::vector<Incoming> incoming_;
  std::vector<std::int32_t> start_, term_;  // per owned item, its terms: contributions, then incoming entries
  std::vector<double> received_;
  std::vector<std::byte> sendbuf_;
};

template <int W>
void OrderedSum::exchange(std::span<const double> values) {
  received_.resize(incoming_.size() * W);
  plan_.run(
      items_.messages(), kTag, W * sizeof(double),
      [&](const std::vector<std::int32_t>& list, std::byte* out) {
        for (std::int32_t e : list) {
          std::memcpy(out, &values[static_cast<std::size_t>(outgoing_[e]) * W], W * sizeof(double));
          out += W * sizeof(double);
        }
      },
      reinterpret_cast<std::byte*>(received_.data()), sendbuf_);
}

template <int W, class Store>
void OrderedSum::total(std::span<const double> values, const std::vector<std::int32_t>* only, Store&& store) const {
  const std::size_t n = only ? only->size() : items_.owned();
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = only ? static_cast<std::size_t>((*only)[k]) : k;
    double total[W] = {};
    for (std::int32_t e = start_[i]; e < start_[i + 1]; ++e) {
      const auto s = static_cast<std::size_t>(term_[e]);
      const double* c = s < contributions_ ? &values[W * s] : &received_[W * (s - contributions_)];
      for (int d = 0; d < W; ++d) total[d] += c[d];
    }
    store(i, static_cast<const double*>(total));
  }
}

}  // namespace percussion::parallel
