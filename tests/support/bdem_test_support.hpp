#pragma once
// Helpers shared by the BDEM method tests: deterministic initial shaking, test-only gathers by global id,
// relative differences and a scratch directory every rank agrees on.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "percussion/methods/bdem/bdem_method.hpp"

namespace percussion::test {

// Pseudo-random velocities and spins by global id: the same on every rank count.
inline void shake(bdem::Model& g, double amplitude) {
  for (std::size_t i = 0; i < g.v.size(); ++i)
    for (int d = 0; d < 3; ++d) {
      const double u = std::sin(12.9898 * static_cast<double>(i) + 78.233 * d) * 43758.5453;
      g.v[i][d] = amplitude * (2 * (u - std::floor(u)) - 1);
      g.w[i][d] = 10 * amplitude * std::cos(3.1 * static_cast<double>(i) + d);
    }
}

// A per-particle field gathered into a global array indexed by id, on every rank (tests only).
template <int N, class V>
std::vector<double> gather(MPI_Comm comm, std::span<const std::int64_t> ids, std::span<const V> values, std::int64_t n) {
  std::vector<double> local(static_cast<std::size_t>(n) * N, 0.0), global(local.size());
  for (std::size_t i = 0; i < ids.size(); ++i)
    for (int d = 0; d < N; ++d) local[ids[i] * N + d] = values[i][d];
  MPI_Allreduce(local.data(), global.data(), static_cast<int>(local.size()), MPI_DOUBLE, MPI_SUM, comm);
  return global;
}

inline std::vector<double> positions(MPI_Comm comm, const bdem::BdemMethod& m) {
  return gather<3>(comm, m.owned_ids(), m.owned_positions(), m.global_particles());
}

inline std::vector<double> velocities(MPI_Comm comm, const bdem::BdemMethod& m) {
  return gather<3>(comm, m.owned_ids(), m.owned_velocities(), m.global_particles());
}

// Ids of broken bonds, ascending, on every rank.
inline std::vector<std::int64_t> broken_bonds(MPI_Comm comm, const bdem::BdemMethod& m) {
  std::vector<char> local(m.global_bonds(), 0), global(local.size());
  for (const auto& b : m.bonds())
    if (!b.intact) local[b.id] = 1;
  MPI_Allreduce(local.data(), global.data(), static_cast<int>(local.size()), MPI_CHAR, MPI_MAX, comm);
  std::vector<std::int64_t> ids;
  for (std::size_t k = 0; k < global.size(); ++k)
    if (global[k]) ids.push_back(static_cast<std::int64_t>(k));
  return ids;
}

inline double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(a[i]));
  }
  return diff / scale;
}

inline double max_unit_error(MPI_Comm comm, const bdem::BdemMethod& m) {
  double local = 0, global = 0;
  for (const auto& q : m.owned_quaternions()) local = std::max(local, std::abs(q.norm() - 1.0));
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, comm);
  return global;
}

// Created by rank 0, the same path on every rank; empty on failure.
inline std::string shared_temp_dir() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char buf[256] = {};
  if (rank == 0) {
    const std::string tmpl = (std::filesystem::temp_directory_path() / "percussion-test-XXXXXX").string();
    std::snprintf(buf, sizeof buf, "%s", tmpl.c_str());
    if (!mkdtemp(buf)) buf[0] = '\0';
  }
  MPI_Bcast(buf, sizeof buf, MPI_CHAR, 0, MPI_COMM_WORLD);
  return buf;
}

}  // namespace percussion::test
