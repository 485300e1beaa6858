#pragma once
// Point-to-point messages between neighbour ranks: posted receives and sends, then waits. Every exchange in the
// program (ghost values forward, per-pair results back to owners, migration, the solvers' sweeps across ranks)
// goes through this one class, so the MPI calls live in one place.
#include <mpi.h>

#include <cstddef>
#include <vector>

namespace percussion::parallel {

class Messages {
 public:
  explicit Messages(MPI_Comm comm) : comm_(comm) {}
  // Post a non-blocking receive or send of `bytes` bytes; the buffer must stay valid until the matching wait.
  void receive(int rank, void* data, std::size_t bytes, int tag);
  void send(int rank, const void* data, std::size_t bytes, int tag);
  template <class T>
  void receive(int rank, T* data, std::size_t count, int tag) {
    receive(rank, static_cast<void*>(data), count * sizeof(T), tag);
  }
  template <class T>
  void send(int rank, const T* data, std::size_t count, int tag) {
    send(rank, static_cast<const void*>(data), count * sizeof(T), tag);
  }
  void wait_receives();
  void wait_sends();
  void wait() { wait_receives(); wait_sends(); }
  MPI_Comm comm() const { return comm_; }

 private:
  MPI_Comm comm_;
  std::vector<MPI_Request> receives_, sends_;
};

// Alltoallv of lists of T (trivially copyable): returns what every rank sent us, concatenated by source rank, and
// the per-source counts. Collective; for setup work, where the partners are not yet known.
template <class T>
std::vector<T> all_to_all(MPI_Comm comm, const std::vector<std::vector<T>>& out, std::vector<int>& counts);

}  // namespace percussion::parallel

#include "percussion/parallel/messages_impl.hpp"
