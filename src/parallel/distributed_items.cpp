#include "percussion/parallel/distributed_items.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "percussion/parallel/ghost_search.hpp"

namespace percussion::parallel {

DistributedItems::DistributedItems(MPI_Comm comm) : comm_(comm), messages_(comm) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  forward_.assign(std::vector<std::vector<std::int32_t>>(size_), std::vector<std::size_t>(size_, 0), rank_);
  reverse_ = forward_;
}

std::vector<std::string> DistributedItems::field_names() const {
  std::vector<std::string> names;
  for (const auto& f : fields_) names.push_back(f->name);
  return names;
}

void DistributedItems::set_owned(std::vector<std::int64_t> gids) {
  for (std::size_t i = 1; i < gids.size(); ++i)
    if (gids[i] <= gids[i - 1]) throw std::logic_error("items: owned ids must be strictly ascending");
  gid_ = std::move(gids);
  owned_ = gid_.size();
  ghost_owner_.clear();
  for (auto& f : fields_) f->resize(owned_);
  forward_.assign(std::vector<std::vector<std::int32_t>>(size_), std::vector<std::size_t>(size_, 0), rank_);
  reverse_ = forward_;
  rebuild_slots();
}

void DistributedItems::rebuild_slots() {
  slot_of_.clear();
  slot_of_.reserve(2 * gid_.size());
  for (std::size_t i = 0; i < gid_.size(); ++i) slot_of_.emplace(gid_[i], static_cast<std::int32_t>(i));
}

void DistributedItems::build_ghosts(std::span<const Eigen::Vector3d> positions, std::span<const double> reach,
                                    std::span<const Request> requests) {
  if (positions.size() != owned_ || (reach.size() != 1 && reach.size() != owned_))
    throw std::logic_error("items: build_ghosts needs one position and one reach (or one for all) per owned item");
  gid_.resize(owned_);
  rebuild_slots();  // the owned items only: requests resolve against them
  std::vector<std::vector<std::int32_t>> send = ghosts_by_reach(comm_, positions, reach);

  // Explicit requests, routed to their owners.
  std::vector<std::vector<std::int64_t>> asked_of(static_cast<std::size_t>(size_));
  for (const auto& q : requests)
    if (q.owner != rank_) asked_of[static_cast<std::size_t>(q.owner)].push_back(q.gid);
  std::vector<int> counts;
  const std::vector<std::int64_t> asked = all_to_all(comm_, asked_of, counts);
  std::size_t at = 0;
  for (int r = 0; r < size_; ++r)
    for (int k = 0; k < counts[r]; ++k, ++at) {
      const std::int32_t s = slot(asked[at]);
      if (s < 0)
        throw std::logic_error("items: rank " + std::to_string(r) + " requested item " + std::to_string(asked[at]) +
                               " from rank " + std::to_string(rank_) + ", which does not own it");
      send[r].push_back(s);
    }

  // Ascending and unique: owned slots are in id order, so each source's ghosts arrive in id order.
  std::vector<std::vector<std::int64_t>> send_gid(static_cast<std::size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    auto& s = send[r];
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    for (auto i : s) send_gid[r].push_back(gid_[static_cast<std::size_t>(i)]);
  }
  const std::vector<std::int64_t> ghost_gid = all_to_all(comm_, send_gid, counts);
  gid_.insert(gid_.end(), ghost_gid.begin(), ghost_gid.end());
  ghost_owner_.clear();
  std::vector<std::size_t> receive(static_cast<std::size_t>(size_)), send_back(static_cast<std::size_t>(size_));
  std::vector<std::vector<std::int32_t>> ghost_slots(static_cast<std::size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    receive[r] = static_cast<std::size_t>(counts[r]);
    send_back[r] = send[r].size();
    for (int k = 0; k < counts[r]; ++k) {
      ghost_slots[r].push_back(static_cast<std::int32_t>(owned_ + ghost_owner_.size()));
      ghost_owner_.push_back(r);
    }
  }
  forward_.assign(std::move(send), std::move(receive), rank_);
  reverse_.assign(std::move(ghost_slots), std::move(send_back), rank_);
  rebuild_slots();
  forward_all();
}

std::vector<std::int32_t> DistributedItems::sent_slots() const {
  std::vector<std::int32_t> all;
  for (int r = 0; r < forward_.ranks(); ++r)
    all.insert(all.end(), forward_.sent_to(r).begin(), forward_.sent_to(r).end());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

void DistributedItems::forward_all() {
  std::size_t bytes = 0;
  for (auto& f : fields_) {
    f->resize(size());
    bytes += f->bytes();
  }
  recvbuf_.resize(forward_.received() * bytes);
  forward_.run(
      messages_, kForwardTag, bytes,
      [&](const std::vector<std::int32_t>& list, std::byte* out) {
        for (const auto& f : fields_) out = f->pack(list, out);
      },
      recvbuf_.data(), sendbuf_);
  const std::byte* in = recvbuf_.data();
  for (int r : forward_.neighbours()) {
    const std::size_t n = forward_.received_from(r), first = owned_ + forward_.receive_offset(r);
    if (n > 0)
      for (auto& f : fields_) in = f->unpack(first, n, in);
  }
}

void DistributedItems::migrate(std::span<const int> new_owner) {
  if (new_owner.size() != owned_) throw std::logic_error("items: migrate needs one new owner per owned item");
  // Who leaves for where, and who stays (in slot order, so in id order).
  std::vector<std::vector<std::int32_t>> leave(static_cast<std::size_t>(size_));
  std::vector<std::int32_t> stay;
  for (std::size_t i = 0; i < owned_; ++i) {
    const int r = new_owner[i];
    if (r < 0 || r >= size_) throw std::logic_error("items: migrate to rank " + std::to_string(r));
    (r == rank_ ? stay : leave[static_cast<std::size_t>(r)]).push_back(static_cast<std::int32_t>(i));
  }
  std::vector<int> out_count(static_cast<std::size_t>(size_)), in_count(static_cast<std::size_t>(size_));
  for (int r = 0; r < size_; ++r) out_count[r] = static_cast<int>(leave[r].size());
  MPI_Alltoall(out_count.data(), 1, MPI_INT, in_count.data(), 1, MPI_INT, comm_);
  ExchangePlan plan;
  plan.assign(std::move(leave), std::vector<std::size_t>(in_count.begin(), in_count.end()), rank_);

  // Each item travels as its id, then every field's bytes (field-major per message).
  std::size_t bytes = sizeof(std::int64_t);
  for (const auto& f : fields_) bytes += f->bytes();
  std::vector<std::byte> recv(plan.received() * bytes);
  plan.run(
      messages_, kMigrateTag, bytes,
      [&](const std::vector<std::int32_t>& list, std::byte* out) {
        out = pack::put(list, gid_.data(), out);
        for (const auto& f : fields_) out = f->pack(list, out);
      },
      recv.data(), sendbuf_);

  // The staying items first, then the arrivals by source; then everything in id order.
  const std::size_t kept = stay.size(), total = kept + plan.received();
  std::vector<std::int64_t> gid(total);
  for (std::size_t k = 0; k < kept; ++k) gid[k] = gid_[static_cast<std::size_t>(stay[k])];
  gid_.resize(owned_);
  for (auto& f : fields_) {
    f->select(stay);
    f->resize(total);
  }
  const std::byte* in = recv.data();
  for (int r : plan.neighbours()) {
    const std::size_t n = plan.received_from(r), first = kept + plan.receive_offset(r);
    if (n == 0) continue;
    in = pack::take(n, gid.data() + first, in);
    for (auto& f : fields_) in = f->unpack(first, n, in);
  }
  std::vector<std::int32_t> order(total);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) { return gid[a] < gid[b]; });
  std::vector<std::int64_t> sorted(total);
  for (std::size_t k = 0; k < total; ++k) sorted[k] = gid[static_cast<std::size_t>(order[k])];
  for (auto& f : fields_) f->select(order);
  set_owned(std::move(sorted));  // also checks that no id arrived twice
}

}  // namespace percussion::parallel
