#include "percussion/methods/ipc/contact_vertices.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "percussion/parallel/messages.hpp"

namespace percussion::ipc {

void ContactVertices::assign(MPI_Comm comm, int dim, std::vector<Entry> entries, std::vector<double> positions) {
  comm_ = comm;
  dim_ = dim;
  int ranks = 1;
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &ranks);
  entries_ = std::move(entries);
  positions_ = std::move(positions);
  own_.clear();
  // Requests to each source rank, in entry order; arrivals come back by source rank, then in that order.
  std::vector<std::vector<std::int32_t>> request(static_cast<std::size_t>(ranks));
  std::vector<std::vector<std::int32_t>> wanted(static_cast<std::size_t>(ranks));
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    if (e.rank == rank_) {
      own_.push_back(static_cast<std::int32_t>(i));
    } else {
      request[static_cast<std::size_t>(e.rank)].push_back(e.mesh_index);
      wanted[static_cast<std::size_t>(e.rank)].push_back(static_cast<std::int32_t>(i));
    }
  }
  arrival_.clear();
  std::vector<std::size_t> receive_count(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    arrival_.insert(arrival_.end(), wanted[std::size_t(r)].begin(), wanted[std::size_t(r)].end());
    receive_count[std::size_t(r)] = wanted[std::size_t(r)].size();
  }
  std::vector<int> counts;
  served_ = parallel::all_to_all(comm, request, counts);
  // Send lists index into served_, which holds the mesh-local vertices each requester reads.
  std::vector<std::vector<std::int32_t>> send(static_cast<std::size_t>(ranks));
  std::int32_t at = 0;
  for (int r = 0; r < ranks; ++r) {
    send[std::size_t(r)].resize(static_cast<std::size_t>(counts[std::size_t(r)]));
    std::iota(send[std::size_t(r)].begin(), send[std::size_t(r)].end(), at);
    at += counts[std::size_t(r)];
  }
  plan_.assign(std::move(send), std::move(receive_count), rank_);
}

void ContactVertices::read(std::span<const double> x, std::vector<double>& out) const {
  const auto d = static_cast<std::size_t>(dim_);
  out.resize(entries_.size() * d);
  for (std::int32_t i : own_)
    std::copy_n(&x[static_cast<std::size_t>(entries_[std::size_t(i)].mesh_index) * d], d, &out[std::size_t(i) * d]);
  received_.resize(plan_.received() * d);
  parallel::Messages messages(comm_);
  plan_.run(
      messages, kTag, d * sizeof(double),
      [&](const std::vector<std::int32_t>& list, std::byte* out) {
        for (std::int32_t k : list) {
          std::memcpy(out, &x[static_cast<std::size_t>(served_[std::size_t(k)]) * d], d * sizeof(double));
          out += d * sizeof(double);
        }
      },
      reinterpret_cast<std::byte*>(received_.data()), sendbuf_);
  for (std::size_t k = 0; k < arrival_.size(); ++k)
    std::copy_n(&received_[k * d], d, &out[static_cast<std::size_t>(arrival_[k]) * d]);
}

}  // namespace percussion::ipc
