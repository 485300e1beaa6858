#include "percussion/parallel/ordered_sum.hpp"

#include <stdexcept>

namespace percussion::parallel {

void OrderedSum::set_up(std::span<const std::int32_t> target, std::span<const std::int64_t> key) {
  const int size = items_.forward_plan().ranks(), rank = items_.rank();
  const std::size_t owned = items_.owned();
  contributions_ = target.size();
  struct Entry { std::int32_t owned; std::int64_t key; std::int32_t term; };
  std::vector<Entry> entries;
  entries.reserve(target.size());
  outgoing_.clear();
  std::vector<std::vector<std::int32_t>> send(static_cast<std::size_t>(size));
  std::vector<std::vector<std::int64_t>> out(static_cast<std::size_t>(size));
  for (std::size_t c = 0; c < target.size(); ++c) {
    const auto t = static_cast<std::size_t>(target[c]);
    if (t < owned) {
      entries.push_back({target[c], key[c], static_cast<std::int32_t>(c)});
      continue;
    }
    const int owner = items_.ghost_owner(t - owned);
    send[owner].push_back(static_cast<std::int32_t>(outgoing_.size()));
    outgoing_.push_back(static_cast<std::int32_t>(c));
    out[owner].insert(out[owner].end(), {items_.gids()[t], key[c]});
  }
  // The owners learn which of their items each incoming entry is for.
  std::vector<int> counts;
  const std::vector<std::int64_t> in = all_to_all(items_.comm(), out, counts);
  std::vector<std::size_t> receive(static_cast<std::size_t>(size));
  incoming_.clear();
  for (std::size_t at = 0; at < in.size(); at += 2) {
    const std::int32_t s = items_.slot(in[at]);
    if (s < 0 || static_cast<std::size_t>(s) >= owned)
      throw std::logic_error("ordered sum: entry for an item this rank does not own");
    entries.push_back({s, in[at + 1], static_cast<std::int32_t>(contributions_ + incoming_.size())});
    incoming_.push_back({s, in[at + 1]});
  }
  for (int r = 0; r < size; ++r) receive[r] = static_cast<std::size_t>(counts[r] / 2);
  plan_.assign(std::move(send), std::move(receive), rank);
  start_ = bucket_sort(entries, owned, [](const Entry& e) { return e.owned; },
                       [](const Entry& l, const Entry& r) { return l.key < r.key; });
  term_.resize(entries.size());
  for (std::size_t e = 0; e < entries.size(); ++e) term_[e] = entries[e].term;
}

void OrderedSum::send_to_owners(std::span<const double> per_entry, int width, std::vector<double>& received) {
  received.resize(incoming_.size() * static_cast<std::size_t>(width));
  const std::size_t bytes = static_cast<std::size_t>(width) * sizeof(double);
  plan_.run(
      items_.messages(), kTag, bytes,
      [&](const std::vector<std::int32_t>& list, std::byte* out) {
        for (std::int32_t e : list) {
          std::memcpy(out, &per_entry[static_cast<std::size_t>(e) * static_cast<std::size_t>(width)], bytes);
          out += bytes;
        }
      },
      reinterpret_cast<std::byte*>(received.data()), sendbuf_);
}

}  // namespace percussion::parallel
