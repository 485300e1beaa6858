// Checkpoints of the bonded-DEM state: everything needed to continue, in tables whose rows are global ids,
// so any rank count can read them back.
#include <algorithm>
#include <array>
#include <numeric>
#include <cmath>
#include <type_traits>
#include <utility>

#include "percussion/core/error.hpp"
#include "percussion/io/h5file.hpp"
#include "percussion/methods/bdem/domain.hpp"
#include "percussion/methods/bdem/checkpoint.hpp"

namespace percussion::bdem {
namespace {

// The step schedule's fields by their attribute names, with the largest value a run writes (of a const schedule or
// not).
template <class Schedule>
auto schedule_attributes(Schedule& s) {
  using Int = std::conditional_t<std::is_const_v<Schedule>, const int, int>;
  struct Field {
    const char* name;
    Int* value;
    int largest;
  };
  return std::array<Field, 4>{{{"fracture_depth", &s.fracture_depth, 20},
                               {"block_jacobi_backoff", &s.block_jacobi_backoff, 20},
                               {"block_jacobi_steps", &s.block_jacobi_steps, 20},
                               {"explicit_intervals", &s.explicit_intervals, 1000000}}};
}

template <int N, class V>
std::vector<V> unflat(const std::vector<double>& d) {
  std::vector<V> out(d.size() / N);
  for (std::size_t i = 0; i < out.size(); ++i)
    for (int k = 0; k < N; ++k) out[i][k] = d[N * i + k];
  return out;
}

}  // namespace

Model Domain::snapshot(long step, const StepClock& clock, std::span<const Eigen::Vector3d> force,
                       std::span<const Eigen::Vector3d> torque, const std::string& integrator,
                       const std::string& form, std::span<const double> newton_state, int newton_width,
                       std::span<const double> bdf2_history, double bdf2_history_step, double gradient_step,
                       const StepSchedule& schedule) const {
  const std::size_t n = n_owned;
  Model m;
  m.id.assign(gid.begin(), gid.begin() + static_cast<std::ptrdiff_t>(n));
  auto owned = [n](const auto& field) { return std::vector(field.begin(), field.begin() + static_cast<std::ptrdiff_t>(n)); };
  m.x = owned(x), m.v = owned(v), m.w = owned(w), m.q = owned(q);
  m.radius = owned(radius), m.mass = owned(mass), m.material = owned(material), m.constraint = owned(constraint);
  m.force.assign(force.begin(), force.end());
  m.torque.assign(torque.begin(), torque.end());
  m.x_ref = x_ref_;
  m.owner.assign(n, rank);
  m.owner_ranks = size;
  m.newton_width = newton_width;
  m.newton_state.assign(newton_state.begin(), newton_state.end());
  m.bdf2_history.assign(bdf2_history.begin(), bdf2_history.end());
  m.bdf2_history_step = bdf2_history_step;
  for (const auto& b : bonds) {
    m.bond_id.push_back(b.id);
    m.pair.push_back({b.a, b.b});
    m.rest.push_back(b.rest);
    m.strength.push_back({b.sigma_c, b.tau_c});
    m.intact.push_back(b.intact ? 1 : 0);
    m.partner_owner.push_back(b.b_owner);
  }
  m.particles_total = n_global;
  m.bonds_total = bonds_global;
  m.placed = true;
  m.step = step;
  m.time_step = clock.time_step;
  m.origin_time = clock.origin_time;
  m.origin_step = clock.origin_step;
  m.from_checkpoint = true;
  m.written_by_integrator = integrator;
  m.written_by_form = form;
  m.gradient_step = gradient_step;
  m.schedule = schedule;
  return m;
}

void Domain::write_checkpoint(const std::string& path, const Model& m) const {
  ScopedPhase timer(timers_, Phase::Checkpoint);
  io::H5File file = io::H5File::create(comm, path, io::Checksums::on);
  const hid_t root = file.id();
  std::int64_t intact_local = std::count(m.intact.begin(), m.intact.end(), 1), intact = 0;
  MPI_Allreduce(&intact_local, &intact, 1, MPI_INT64_T, MPI_SUM, comm);
  io::write_attribute(root, "kind", std::string("checkpoint"));
  io::write_attribute(root, "method", scene.method);
  // The writer, not the scene: a test or tool may run either class on any scene.
  io::write_attribute(root, "integrator", m.written_by_integrator);
  io::write_attribute(root, "form", m.written_by_form);
  io::write_attribute(root, "format_version", std::int64_t{1});
  const StepClock clock = m.clock();
  io::write_attribute(root, "step", std::int64_t{m.step});
  io::write_attribute(root, "time", clock.time(m.step));
  io::write_attribute(root, "time_step", clock.time_step);
  if (clock.origin_step != 0 || clock.origin_time != 0) {
    io::write_attribute(root, "origin_time", clock.origin_time);
    io::write_attribute(root, "origin_step", std::int64_t{clock.origin_step});
  }
  for (const auto& [name, value, largest] : schedule_attributes(m.schedule))
    if (*value > 0) io::write_attribute(root, name, std::int64_t{*value});
  io::write_attribute(root, "ranks_written", std::int64_t{size});
  io::write_attribute(root, "particles", m.particles_total);
  io::write_attribute(root, "bonds", m.bonds_total);
  io::write_attribute(root, "bonds_intact", intact);
  io::write_attribute(root, "scene_path", scene.path);
  io::write_attribute(root, "scene_fingerprint", scene_fingerprint(scene));
  io::write_string(root, "scene", scene.source);

  const std::span<const std::int64_t> rows(m.id);
  const std::int64_t n = m.particles_total;
  {
    io::H5Group g = io::H5Group::create(root, "particles");
    // position, quaternion, velocity, angular_velocity, radius, mass, material, constraint: as the container holds
    // them (the model's rows are the owned items).
    items_.write_fields(g.id(), n);
    io::write_rows(g.id(), "force", rows, n, flat(std::span<const Eigen::Vector3d>(m.force)), 3);
    io::write_rows(g.id(), "torque", rows, n, flat(std::span<const Eigen::Vector3d>(m.torque)), 3);
    if (m.gradient_step > 0) {
      io::H5Handle dset(H5Dopen2(g.id(), "force", H5P_DEFAULT), H5Dclose);
      io::write_attribute(dset.id(), "step", m.gradient_step);
    }
    const std::vector<std::int64_t> owner(m.owner.begin(), m.owner.end());
    io::write_rows(g.id(), "owner", rows, n, std::span<const std::int64_t>(owner), 1);
    io::write_rows(g.id(), "rebuild_position", rows, n, flat(std::span<const Eigen::Vector3d>(m.x_ref)), 3);
    if (m.newton_width > 0) io::write_rows(g.id(), "newton_matrix_state", rows, n, m.newton_state, m.newton_width);
    if (m.bdf2_history_step > 0) {
      io::write_rows(g.id(), "bdf2_history", rows, n, m.bdf2_history, Model::kBdf2HistoryWidth);
      io::H5Handle dset(H5Dopen2(g.id(), "bdf2_history", H5P_DEFAULT), H5Dclose);
      io::write_attribute(dset.id(), "step", m.bdf2_history_step);
    }
  }
  {
    io::H5Group g = io::H5Group::create(root, "bonds");
    std::vector<std::int64_t> pair, flags;
    std::vector<double> rest, strength;
    for (std::size_t k = 0; k < m.bond_rows(); ++k) {
      pair.insert(pair.end(), {m.pair[k][0], m.pair[k][1]});
      flags.push_back(m.intact[k]);
      rest.resize(rest.size() + physics::kBondRestColumns);
      physics::pack_bond_rest(m.rest[k], &rest[rest.size() - physics::kBondRestColumns]);
      strength.insert(strength.end(), {m.strength[k][0], m.strength[k][1]});
    }
    const std::int64_t nb = m.bonds_total;
    io::write_rows(g.id(), "pair", m.bond_id, nb, std::span<const std::int64_t>(pair), 2);
    io::write_rows(g.id(), "intact", m.bond_id, nb, std::span<const std::int64_t>(flags), 1);
    io::write_rows(g.id(), "rest", m.bond_id, nb, std::span<const double>(rest), physics::kBondRestColumns);
    io::write_attribute(g.id(), "rest_columns", std::string(physics::kBondRestLayout));
    io::write_rows(g.id(), "strength", m.bond_id, nb, std::span<const double>(strength), 2);
  }
  file.close();
}

namespace {

// Consistency checks of what a rank read, decided together: every rank throws the same message (the first failed
// check over all ranks), none hangs in a collective.
class Checks {
 public:
  Checks(MPI_Comm comm, std::string path) : comm_(comm), path_(std::move(path)) {}
  void require(bool ok, const std::string& what) {
    if (!ok && failed_ < 0) failed_ = static_cast<int>(messages_.size());
    messages_.push_back(what);
  }
  void settle() {
    int first = failed_ < 0 ? static_cast<int>(messages_.size()) : failed_;
    MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm_);
    if (first < static_cast<int>(messages_.size())) throw InputError(path_ + ": " + messages_[first]);
    messages_.clear();
    failed_ = -1;
  }

 private:
  MPI_Comm comm_;
  std::string path_;
  std::vector<std::string> messages_;
  int failed_ = -1;
};

template <class V>
bool all_finite(const std::vector<V>& a) {
  for (const auto& v : a)
    if (!v.allFinite()) return false;
  return true;
}

bool all_finite(const std::vector<double>& a) {
  return std::all_of(a.begin(), a.end(), [](double d) { return std::isfinite(d); });
}

// Rows [n r / P, n (r + 1) / P): this rank's slice of a table of n rows.
std::vector<std::int64_t> slice(std::int64_t n, int rank, int size) {
  const std::int64_t first = share_begin(n, rank, size), last = share_begin(n, rank + 1, size);
  std::vector<std::int64_t> rows(static_cast<std::size_t>(last - first));
  std::iota(rows.begin(), rows.end(), first);
  return rows;
}

// The table's shape must be [rows] (width 1) or [rows, width].
void check_shape(hid_t loc, const std::string& name, std::int64_t rows, int width) {
  const std::vector<std::int64_t> dims = io::shape(loc, name);
  const bool ok = !dims.empty() && dims[0] == rows &&
                  (width == 1 ? dims.size() == 1 || (dims.size() == 2 && dims[1] == 1)
                              : dims.size() == 2 && dims[1] == width);
  if (!ok)
    throw InputError(io::describe(loc, name) + ": expected " + std::to_string(rows) + " rows of " +
                     std::to_string(width) + " numbers");
}

std::vector<double> read_slice(hid_t loc, const std::string& name, std::span<const std::int64_t> rows,
                               std::int64_t n, int width) {
  check_shape(loc, name, n, width);
  return io::read_rows_double(loc, name, rows, width);
}

std::vector<std::int64_t> read_slice_int(hid_t loc, const std::string& name, std::span<const std::int64_t> rows,
                                         std::int64_t n, int width) {
  check_shape(loc, name, n, width);
  return io::read_rows_int(loc, name, rows, width);
}

}  // namespace

Model model_from_checkpoint(const std::string& path, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  io::H5File file = io::H5File::open_read(comm, path);
  const hid_t root = file.id();
  std::string kind;
  try {
    kind = io::read_attribute_string(root, "kind");
  } catch (const std::exception&) {
  }
  if (kind != "checkpoint") throw InputError(path + ": not a Percussion checkpoint (no kind=\"checkpoint\" attribute)");
  const std::string method = io::read_attribute_string(root, "method");
  if (method != "bdem") throw InputError(path + ": checkpoint of method '" + method + "', expected 'bdem'");

  Model g;
  g.from_checkpoint = true;
  g.whole = size == 1;
  g.step = static_cast<long>(io::read_attribute_int(root, "step"));
  g.time_step = io::read_attribute_double(root, "time_step");
  if (g.step < 0 || !(g.time_step > 0) || !std::isfinite(g.time_step))
    throw InputError(path + ": attributes \"step\" and \"time_step\" must be >= 0 and > 0");
  if (io::has_attribute(root, "origin_step")) {
    g.origin_time = io::read_attribute_double(root, "origin_time");
    g.origin_step = static_cast<long>(io::read_attribute_int(root, "origin_step"));
  }
  for (const auto& [name, value, largest] : schedule_attributes(g.schedule)) {
    if (!io::has_attribute(root, name)) continue;
    const auto read = io::read_attribute_int(root, name);
    if (read < 0 || read > largest)
      throw InputError(path + ": attribute \"" + name + "\" must be in [0, " + std::to_string(largest) + "], got " +
                       std::to_string(read));
    *value = static_cast<int>(read);
  }
  // Files written before "form" existed leave it empty: unknown (their "integrator" was the scene's).
  if (io::has_attribute(root, "integrator")) g.written_by_integrator = io::read_attribute_string(root, "integrator");
  if (io::has_attribute(root, "form")) g.written_by_form = io::read_attribute_string(root, "form");
  if (io::has_attribute(root, "scene_path")) g.scene_path = io::read_attribute_string(root, "scene_path");
  if (io::has_attribute(root, "scene_fingerprint"))
    g.scene_fingerprint = io::read_attribute_string(root, "scene_fingerprint");
  g.owner_ranks = static_cast<int>(io::read_attribute_int(root, "ranks_written"));
  Checks checks(comm, path);
  {
    io::H5Group p = io::H5Group::open(root, "particles");
    const std::vector<std::int64_t> dims = io::shape(p.id(), "position");
    const std::int64_t n = dims.empty() ? -1 : dims[0];
    if (n < 1) throw InputError(io::describe(p.id(), "position") + ": no particle");
    g.particles_total = n;
    g.id = slice(n, rank, size);
    const std::span<const std::int64_t> rows(g.id);
    g.x = unflat<3, Eigen::Vector3d>(read_slice(p.id(), "position", rows, n, 3));
    g.q = unflat<4, Eigen::Vector4d>(read_slice(p.id(), "quaternion", rows, n, 4));
    g.v = unflat<3, Eigen::Vector3d>(read_slice(p.id(), "velocity", rows, n, 3));
    g.w = unflat<3, Eigen::Vector3d>(read_slice(p.id(), "angular_velocity", rows, n, 3));
    g.force = unflat<3, Eigen::Vector3d>(read_slice(p.id(), "force", rows, n, 3));
    g.torque = unflat<3, Eigen::Vector3d>(read_slice(p.id(), "torque", rows, n, 3));
    {
      io::H5Handle dset(H5Dopen2(p.id(), "force", H5P_DEFAULT), H5Dclose);
      if (io::has_attribute(dset.id(), "step")) {
        g.gradient_step = io::read_attribute_double(dset.id(), "step");
        if (!(g.gradient_step > 0))
          throw InputError(path + ": particles/force: attribute \"step\" must be > 0, got " +
                           std::to_string(g.gradient_step));
      }
    }
    g.radius = read_slice(p.id(), "radius", rows, n, 1);
    g.mass = read_slice(p.id(), "mass", rows, n, 1);
    for (auto m : read_slice_int(p.id(), "material", rows, n, 1)) g.material.push_back(static_cast<int>(m));
    for (auto c : read_slice_int(p.id(), "constraint", rows, n, 1)) g.constraint.push_back(static_cast<int>(c));
    const std::vector<std::int64_t> owner = read_slice_int(p.id(), "owner", rows, n, 1);
    g.x_ref = unflat<3, Eigen::Vector3d>(read_slice(p.id(), "rebuild_position", rows, n, 3));
    if (io::exists(p.id(), "newton_matrix_state")) {
      const std::vector<std::int64_t> shape = io::shape(p.id(), "newton_matrix_state");
      g.newton_width = shape.size() == 2 ? static_cast<int>(shape[1]) : 1;
      g.newton_state = read_slice(p.id(), "newton_matrix_state", rows, n, g.newton_width);
    }
    if (io::exists(p.id(), "bdf2_history")) {
      g.bdf2_history = read_slice(p.id(), "bdf2_history", rows, n, Model::kBdf2HistoryWidth);
      io::H5Handle dset(H5Dopen2(p.id(), "bdf2_history", H5P_DEFAULT), H5Dclose);
      g.bdf2_history_step = io::read_attribute_double(dset.id(), "step");
      if (!(g.bdf2_history_step > 0))
        throw InputError(path + ": particles/bdf2_history: attribute \"step\" must be > 0");
    }
    checks.require(all_finite(g.x) && all_finite(g.q) && all_finite(g.v) && all_finite(g.w),
                   "particles/position, quaternion, velocity or angular_velocity: a value is not finite");
    checks.require(all_finite(g.force) && all_finite(g.torque) && all_finite(g.x_ref),
                   "particles/force, torque or rebuild_position: a value is not finite");
    checks.require(std::all_of(g.radius.begin(), g.radius.end(), [](double r) { return r > 0 && std::isfinite(r); }),
                   "particles/radius: a radius is not a positive finite number");
    checks.require(std::all_of(g.mass.begin(), g.mass.end(), [](double m) { return m > 0 && std::isfinite(m); }),
                   "particles/mass: a mass is not a positive finite number");
    checks.require(std::all_of(g.material.begin(), g.material.end(), [](int m) { return m >= 0; }),
                   "particles/material: a material index is negative");
    checks.require(std::all_of(g.constraint.begin(), g.constraint.end(), [](int c) { return c >= -1; }),
                   "particles/constraint: an index is below -1");
    checks.require(g.owner_ranks >= 1 && std::all_of(owner.begin(), owner.end(), [&](std::int64_t o) {
                     return o >= 0 && o < g.owner_ranks;
                   }),
                   "particles/owner: an owner is outside [0, ranks_written)");
    checks.require(all_finite(g.newton_state) && all_finite(g.bdf2_history),
                   "particles/newton_matrix_state or bdf2_history: a value is not finite");
    checks.settle();
    g.owner.assign(owner.begin(), owner.end());
  }
  {
    io::H5Group b = io::H5Group::open(root, "bonds");
    const std::vector<std::int64_t> dims = io::shape(b.id(), "intact");
    const std::int64_t m = dims.empty() ? -1 : dims[0];
    if (m < 0) throw InputError(io::describe(b.id(), "intact") + ": not a table");
    g.bonds_total = m;
    g.bond_id = slice(m, rank, size);
    const std::span<const std::int64_t> rows(g.bond_id);
    const auto pair = read_slice_int(b.id(), "pair", rows, m, 2);
    const auto intact = read_slice_int(b.id(), "intact", rows, m, 1);
    const auto rest = read_slice(b.id(), "rest", rows, m, physics::kBondRestColumns);
    const auto strength = read_slice(b.id(), "strength", rows, m, 2);
    const std::size_t k_end = g.bond_id.size();
    bool partners = true;
    for (std::size_t k = 0; k < k_end; ++k) {
      g.pair.push_back({pair[2 * k], pair[2 * k + 1]});
      partners = partners && pair[2 * k] >= 0 && pair[2 * k] < pair[2 * k + 1] && pair[2 * k + 1] < g.particles_total;
      g.intact.push_back(intact[k] != 0);
      g.rest.push_back(physics::unpack_bond_rest(&rest[physics::kBondRestColumns * k]));
      g.strength.push_back({strength[2 * k], strength[2 * k + 1]});
    }
    checks.require(partners, "bonds/pair: a pair is not two particle ids a < b below the particle count");
    checks.require(all_finite(rest) && all_finite(strength), "bonds/rest or strength: a value is not finite");
    checks.settle();
  }
  return g;
}

}  // namespace percussion::bdem
