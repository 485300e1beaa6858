#pragma once
// all_to_all's template body (messages.hpp).
#include <climits>
#include <stdexcept>

namespace percussion::parallel {

template <class T>
std::vector<T> all_to_all(MPI_Comm comm, const std::vector<std::vector<T>>& out, std::vector<int>& counts) {
  const int size = static_cast<int>(out.size());
  std::vector<int> send_counts(size), sdispl(size + 1, 0), rdispl(size + 1, 0);
  std::vector<T> sendbuf;
  for (int r = 0; r < size; ++r) {
    if (out[r].size() * sizeof(T) > static_cast<std::size_t>(INT_MAX))
      throw std::length_error("all_to_all: message too large");
    send_counts[r] = static_cast<int>(out[r].size() * sizeof(T));
    sdispl[r + 1] = sdispl[r] + send_counts[r];
    sendbuf.insert(sendbuf.end(), out[r].begin(), out[r].end());
  }
  std::vector<int> recv_bytes(size, 0);
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_bytes.data(), 1, MPI_INT, comm);
  counts.assign(size, 0);
  for (int r = 0; r < size; ++r) {
    rdispl[r + 1] = rdispl[r] + recv_bytes[r];
    counts[r] = recv_bytes[r] / static_cast<int>(sizeof(T));
  }
  std::vector<T> recvbuf(static_cast<std::size_t>(rdispl[size]) / sizeof(T));
  MPI_Alltoallv(sendbuf.data(), send_counts.data(), sdispl.data(), MPI_BYTE, recvbuf.data(), recv_bytes.data(),
                rdispl.data(), MPI_BYTE, comm);
  return recvbuf;
}

}  // namespace percussion::parallel
