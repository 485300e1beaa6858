// Placing a model's rows on their owners: the partition (the checkpoint's on the same rank count, else the parallel
// partitioner's) and the moves, without any rank holding the whole model.
#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "percussion/methods/bdem/model.hpp"
#include "percussion/methods/bdem/model_neighbours.hpp"
#include "percussion/parallel/messages.hpp"
#include "percussion/parallel/owner_directory.hpp"
#include "percussion/parallel/partition.hpp"

namespace percussion::bdem {
namespace {

// Which optional per-particle columns the model carries, agreed over ranks (a rank may hold no row).
struct Columns {
  bool force = false, x_ref = false, owner = false, bdf2 = false, work = false;
  int newton = 0;
  int width() const {
    return 1 + 3 + 3 + 3 + 4 + 1 + 1 + 1 + 1 + (force ? 6 : 0) + (x_ref ? 3 : 0) + (owner ? 1 : 0) +
           (bdf2 ? Model::kBdf2HistoryWidth : 0) + newton + (work ? 1 : 0);
  }
};

Columns columns_of(const Model& m, MPI_Comm comm) {
  int local[6] = {!m.force.empty(), !m.x_ref.empty(), !m.owner.empty(), !m.bdf2_history.empty(), !m.work.empty(),
                  m.newton_width};
  int global[6];
  MPI_Allreduce(local, global, 6, MPI_INT, MPI_MAX, comm);
  return {global[0] != 0, global[1] != 0, global[2] != 0, global[3] != 0, global[4] != 0, global[5]};
}

template <class V>
void put(std::vector<double>& out, const V& v) {
  for (int k = 0; k < V::SizeAtCompileTime; ++k) out.push_back(v[k]);
}
template <class V>
V take(const double*& in) {
  V v;
  for (int k = 0; k < V::SizeAtCompileTime; ++k) v[k] = *in++;
  return v;
}

void pack_particle(const Model& m, const Columns& c, std::size_t i, std::vector<double>& out) {
  out.push_back(static_cast<double>(m.id[i]));  // ids stay below 2^53
  put(out, m.x[i]);
  put(out, m.v[i]);
  put(out, m.w[i]);
  put(out, m.q[i]);
  out.insert(out.end(), {m.radius[i], m.mass[i], static_cast<double>(m.material[i]),
                         static_cast<double>(m.constraint[i])});
  if (c.force) {
    put(out, m.force[i]);
    put(out, m.torque[i]);
  }
  if (c.x_ref) put(out, m.x_ref[i]);
  if (c.owner) out.push_back(m.owner[i]);
  if (c.bdf2) {
    const auto* h = &m.bdf2_history[Model::kBdf2HistoryWidth * i];
    out.insert(out.end(), h, h + Model::kBdf2HistoryWidth);
  }
  if (c.newton) {
    const auto* s = &m.newton_state[static_cast<std::size_t>(c.newton) * i];
    out.insert(out.end(), s, s + c.newton);
  }
  if (c.work) out.push_back(static_cast<double>(m.work[i]));
}

void clear_particles(Model& m) {
  m.id.clear(), m.x.clear(), m.v.clear(), m.w.clear(), m.q.clear(), m.radius.clear(), m.mass.clear();
  m.material.clear(), m.constraint.clear(), m.force.clear(), m.torque.clear(), m.x_ref.clear(), m.owner.clear();
  m.bdf2_history.clear(), m.newton_state.clear(), m.work.clear();
}

void unpack_particle(Model& m, const Columns& c, const double* in) {
  m.id.push_back(static_cast<std::int64_t>(*in++));
  m.x.push_back(take<Eigen::Vector3d>(in));
  m.v.push_back(take<Eigen::Vector3d>(in));
  m.w.push_back(take<Eigen::Vector3d>(in));
  m.q.push_back(take<Eigen::Vector4d>(in));
  m.radius.push_back(*in++);
  m.mass.push_back(*in++);
  m.material.push_back(static_cast<int>(*in++));
  m.constraint.push_back(static_cast<int>(*in++));
  if (c.force) {
    m.force.push_back(take<Eigen::Vector3d>(in));
    m.torque.push_back(take<Eigen::Vector3d>(in));
  }
  if (c.x_ref) m.x_ref.push_back(take<Eigen::Vector3d>(in));
  if (c.owner) m.owner.push_back(static_cast<int>(*in++));
  if (c.bdf2) {
    m.bdf2_history.insert(m.bdf2_history.end(), in, in + Model::kBdf2HistoryWidth);
    in += Model::kBdf2HistoryWidth;
  }
  if (c.newton) {
    m.newton_state.insert(m.newton_state.end(), in, in + c.newton);
    in += c.newton;
  }
  if (c.work) m.work.push_back(static_cast<std::int64_t>(*in));
}

constexpr int kBondWidth = 3 + physics::kBondRestColumns + 2 + 1;  // id a b, rest, strength, intact

void pack_bond(const Model& m, std::size_t k, std::vector<double>& out) {
  out.insert(out.end(), {static_cast<double>(m.bond_id[k]), static_cast<double>(m.pair[k][0]),
                         static_cast<double>(m.pair[k][1])});
  out.resize(out.size() + physics::kBondRestColumns);
  physics::pack_bond_rest(m.rest[k], &out[out.size() - physics::kBondRestColumns]);
  out.insert(out.end(), {m.strength[k][0], m.strength[k][1], static_cast<double>(m.intact[k])});
}

void clear_bonds(Model& m) {
  m.bond_id.clear(), m.pair.clear(), m.rest.clear(), m.strength.clear(), m.intact.clear(), m.partner_owner.clear();
}

void unpack_bond(Model& m, const double* in) {
  m.bond_id.push_back(static_cast<std::int64_t>(in[0]));
  m.pair.push_back({static_cast<std::int64_t>(in[1]), static_cast<std::int64_t>(in[2])});
  m.rest.push_back(physics::unpack_bond_rest(in + 3));
  m.strength.push_back({in[3 + physics::kBondRestColumns], in[4 + physics::kBondRestColumns]});
  m.intact.push_back(static_cast<char>(in[5 + physics::kBondRestColumns] != 0));
}

// Sends particle row i to rank dest[i] and bond row k to bond_dest[k]; rows arrive sorted by id.
void move_rows(Model& m, MPI_Comm comm, std::span<const int> dest, std::span<const int> bond_dest) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const Columns c = columns_of(m, comm);
  const int width = c.width();
  {
    std::vector<std::vector<double>> out(size);
    for (std::size_t i = 0; i < m.rows(); ++i) pack_particle(m, c, i, out[dest[i]]);
    clear_particles(m);
    std::vector<int> counts;
    const std::vector<double> in = parallel::all_to_all(comm, out, counts);
    out.clear();
    const std::size_t n = in.size() / width;
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t l, std::size_t r) { return in[l * width] < in[r * width]; });
    for (std::size_t k : order) unpack_particle(m, c, &in[k * width]);
  }
  {
    std::vector<std::vector<double>> out(size);
    for (std::size_t k = 0; k < m.bond_rows(); ++k) pack_bond(m, k, out[bond_dest[k]]);
    clear_bonds(m);
    std::vector<int> counts;
    const std::vector<double> in = parallel::all_to_all(comm, out, counts);
    const std::size_t n = in.size() / kBondWidth;
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](std::size_t l, std::size_t r) { return in[l * kBondWidth] < in[r * kBondWidth]; });
    for (std::size_t k : order) unpack_bond(m, &in[k * kBondWidth]);
  }
}

// Keeps the rows of this rank's slice of a model that every rank holds whole.
void cut_to_slice(Model& m, int rank, int size) {
  auto slice = [&](std::int64_t n) {
    return std::array<std::int64_t, 2>{share_begin(n, rank, size), share_begin(n, rank + 1, size)};
  };
  const auto [p0, p1] = slice(static_cast<std::int64_t>(m.rows()));
  const auto [b0, b1] = slice(static_cast<std::int64_t>(m.bond_rows()));
  auto keep = [](auto& v, std::int64_t first, std::int64_t last, std::size_t per) {
    if (v.empty()) return;
    v.erase(v.begin() + static_cast<std::ptrdiff_t>(last * per), v.end());
    v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(first * per));
  };
  for (auto* v : {&m.x, &m.v, &m.w, &m.force, &m.torque, &m.x_ref}) keep(*v, p0, p1, 1);
  keep(m.id, p0, p1, 1), keep(m.q, p0, p1, 1), keep(m.radius, p0, p1, 1), keep(m.mass, p0, p1, 1);
  keep(m.material, p0, p1, 1), keep(m.constraint, p0, p1, 1), keep(m.owner, p0, p1, 1), keep(m.work, p0, p1, 1);
  keep(m.bdf2_history, p0, p1, Model::kBdf2HistoryWidth);
  keep(m.newton_state, p0, p1, static_cast<std::size_t>(m.newton_width));
  keep(m.bond_id, b0, b1, 1), keep(m.pair, b0, b1, 1), keep(m.rest, b0, b1, 1), keep(m.strength, b0, b1, 1);
  keep(m.intact, b0, b1, 1);
  m.whole = false;
}

std::size_t row_of(const Model& m, std::int64_t gid) {
  return static_cast<std::size_t>(std::lower_bound(m.id.begin(), m.id.end(), gid) - m.id.begin());
}

// The parallel partitioner's owner for each row, on the graph of touching neighbours and intact bonds.
std::vector<int> partition(const Model& m, const BdemScene& scene, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::int64_t n = static_cast<std::int64_t>(m.rows()), first = 0;
  MPI_Exscan(&n, &first, 1, MPI_INT64_T, MPI_SUM, comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) first = 0;
  // Graph rows are numbered in rank order; bond partners held elsewhere come as ghosts, asked of their holders.
  std::vector<std::int64_t> row(m.rows()), partners;
  std::iota(row.begin(), row.end(), first);
  for (std::size_t k = 0; k < m.bond_rows(); ++k)
    if (m.intact[k]) partners.push_back(m.pair[k][1]);
  const std::vector<int> holder = parallel::find_owners(comm, m.id, m.particles_total, partners);
  std::vector<parallel::DistributedItems::Request> requests;
  for (std::size_t k = 0; k < partners.size(); ++k)
    if (holder[k] != rank) requests.push_back({partners[k], holder[k]});
  const ModelNeighbours near(comm, m, row, scene.bonds.tolerance, requests);
  std::vector<std::vector<std::int64_t>> adjacent(m.rows());
  near.for_each_touching([&](std::size_t i, std::size_t j) {
    adjacent[i].push_back(near.tag()[j]);
    if (j < m.rows()) adjacent[j].push_back(near.tag()[i]);
  });
  // Bonds: the first particle's row here gets the partner; the partner's row, wherever it is, gets the first.
  std::vector<std::vector<std::int64_t>> back(size);  // (partner id, first's graph row) to the partner's holder
  std::size_t e = 0;  // index into partners and holder
  for (std::size_t k = 0; k < m.bond_rows(); ++k) {
    if (!m.intact[k]) continue;
    const std::size_t a = row_of(m, m.pair[k][0]);
    adjacent[a].push_back(near.tag()[near.slot(m.pair[k][1])]);
    auto& to = back[holder[e++]];
    to.insert(to.end(), {m.pair[k][1], row[a]});
  }
  std::vector<int> counts;
  const std::vector<std::int64_t> in = parallel::all_to_all(comm, back, counts);
  for (std::size_t k = 0; k + 1 < in.size(); k += 2) adjacent[row_of(m, in[k])].push_back(in[k + 1]);
  std::vector<std::int64_t> xadj(1, 0), adjncy;
  for (auto& list : adjacent) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    adjncy.insert(adjncy.end(), list.begin(), list.end());
    xadj.push_back(static_cast<std::int64_t>(adjncy.size()));
  }
  return parallel::partition_distributed(comm, xadj, adjncy, m.work);
}

}  // namespace

void place(Model& m, const BdemScene& scene, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (m.whole && size > 1) cut_to_slice(m, rank, size);
  if (size == 1) {  // everything is here already
    m.partner_owner.assign(m.bond_rows(), 0);
    m.work.clear();
    m.placed = true;
    return;
  }
  // Bond rows first go to the holder of their first particle (a checkpoint's slices of particles and bonds are
  // independent), so that both decide together.
  int scattered = 0;
  for (std::size_t k = 0; k < m.bond_rows() && !scattered; ++k)
    scattered = !std::binary_search(m.id.begin(), m.id.end(), m.pair[k][0]);
  MPI_Allreduce(MPI_IN_PLACE, &scattered, 1, MPI_INT, MPI_MAX, comm);
  std::vector<int> bond_dest;
  if (scattered) {
    std::vector<std::int64_t> firsts(m.bond_rows());
    for (std::size_t k = 0; k < m.bond_rows(); ++k) firsts[k] = m.pair[k][0];
    bond_dest = parallel::find_owners(comm, m.id, m.particles_total, firsts);
    if (std::find(bond_dest.begin(), bond_dest.end(), -1) != bond_dest.end())
      throw std::logic_error("place: a bond's first particle is held by no rank");
    const std::vector<int> here(m.rows(), rank);
    move_rows(m, comm, here, bond_dest);
  }
  std::vector<int> dest;
  if (m.owner_ranks == size && m.owner.size() == m.rows())
    dest = m.owner;
  else
    dest = partition(m, scene, comm);
  bond_dest.resize(m.bond_rows());
  for (std::size_t k = 0; k < m.bond_rows(); ++k) bond_dest[k] = dest[row_of(m, m.pair[k][0])];
  move_rows(m, comm, dest, bond_dest);
  std::vector<std::int64_t> partners(m.bond_rows());
  for (std::size_t k = 0; k < m.bond_rows(); ++k) partners[k] = m.pair[k][1];
  m.partner_owner = parallel::find_owners(comm, m.id, m.particles_total, partners);
  m.work.clear();
  m.placed = true;
}

}  // namespace percussion::bdem
