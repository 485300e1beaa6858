#include "percussion/parallel/messages.hpp"

#include <climits>
#include <stdexcept>

namespace percussion::parallel {
namespace {
int checked(std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(INT_MAX)) throw std::length_error("message of more than 2 GB");
  return static_cast<int>(bytes);
}
}  // namespace

void Messages::receive(int rank, void* data, std::size_t bytes, int tag) {
  receives_.emplace_back();
  MPI_Irecv(data, checked(bytes), MPI_BYTE, rank, tag, comm_, &receives_.back());
}

void Messages::send(int rank, const void* data, std::size_t bytes, int tag) {
  sends_.emplace_back();
  MPI_Isend(data, checked(bytes), MPI_BYTE, rank, tag, comm_, &sends_.back());
}

void Messages::wait_receives() {
  MPI_Waitall(static_cast<int>(receives_.size()), receives_.data(), MPI_STATUSES_IGNORE);
  receives_.clear();
}

void Messages::wait_sends() {
  MPI_Waitall(static_cast<int>(sends_.size()), sends_.data(), MPI_STATUSES_IGNORE);
  sends_.clear();
}

}  // namespace percussion::parallel
