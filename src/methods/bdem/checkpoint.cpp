// Checkpoints of the bonded-DEM state: everything needed to continue, in tables whose rows are global ids,
// so any rank count can read them back.
#include <array>
#include <cmath>
#include <type_traits>
#include <utility>

#include "percussion/core/error.hpp"
#include "percussion/io/h5file.hpp"
#include "percussion/methods/bdem/domain.hpp"
#include "percussion/methods/bdem/checkpoint.hpp"

namespace percussion::bdem {
namespace {

constexpr int kRestColumns = 22;  // l0 r0 d0[3] R0[9 row-major] kn kt k_twist k_bend area I J bend_scale
constexpr const char* kRestLayout = "l0 r0 d0x d0y d0z R0(row-major 9) kn kt k_twist k_bend area I J bend_scale";

void pack_rest(const physics::BondRest& r, double* c) {
  c[0] = r.l0;
  c[1] = r.r0;
  for (int k = 0; k < 3; ++k) c[2 + k] = r.d0[k];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) c[5 + 3 * i + j] = r.R0(i, j);
  c[14] = r.kn;
  c[15] = r.kt;
  c[16] = r.k_twist;
  c[17] = r.k_bend;
  c[18] = r.area;
  c[19] = r.I;
  c[20] = r.J;
  c[21] = r.bend_scale;
}

physics::BondRest unpack_rest(const double* c) {
  physics::BondRest r{};
  r.l0 = c[0];
  r.r0 = c[1];
  for (int k = 0; k < 3; ++k) r.d0[k] = c[2 + k];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.R0(i, j) = c[5 + 3 * i + j];
  r.kn = c[14];
  r.kt = c[15];
  r.k_twist = c[16];
  r.k_bend = c[17];
  r.area = c[18];
  r.I = c[19];
  r.J = c[20];
  r.bend_scale = c[21];
  return r;
}

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

void Domain::write_checkpoint(const std::string& path, long step, const StepClock& clock,
                              std::span<const Eigen::Vector3d> force, std::span<const Eigen::Vector3d> torque,
                              const std::string& integrator, const std::string& form,
                              std::span<const double> newton_state,
                              int newton_width, std::span<const double> bdf2_history,
                              double bdf2_history_step, double gradient_step,
                              const StepSchedule& schedule) const {
  ScopedPhase timer(timers_, Phase::Checkpoint);
  io::H5File file = io::H5File::create(comm, path);
  const hid_t root = file.id();
  std::int64_t intact_local = 0, intact = 0;
  for (const auto& b : bonds) intact_local += b.intact ? 1 : 0;
  MPI_Allreduce(&intact_local, &intact, 1, MPI_INT64_T, MPI_SUM, comm);
  io::write_attribute(root, "kind", std::string("checkpoint"));
  io::write_attribute(root, "method", scene.method);
  // The writer, not the scene: a test or tool may run either class on any scene.
  io::write_attribute(root, "integrator", integrator);
  io::write_attribute(root, "form", form);
  io::write_attribute(root, "format_version", std::int64_t{1});
  io::write_attribute(root, "step", std::int64_t{step});
  io::write_attribute(root, "time", clock.time(step));
  io::write_attribute(root, "time_step", clock.time_step);
  if (clock.origin_step != 0 || clock.origin_time != 0) {
    io::write_attribute(root, "origin_time", clock.origin_time);
    io::write_attribute(root, "origin_step", std::int64_t{clock.origin_step});
  }
  for (const auto& [name, value, largest] : schedule_attributes(schedule))
    if (*value > 0) io::write_attribute(root, name, std::int64_t{*value});
  io::write_attribute(root, "ranks_written", std::int64_t{size});
  io::write_attribute(root, "particles", n_global);
  io::write_attribute(root, "bonds", bonds_global);
  io::write_attribute(root, "bonds_intact", intact);
  io::write_attribute(root, "scene_path", scene.path);
  io::write_string(root, "scene", scene.source);

  const std::size_t n = n_owned;
  const std::span<const std::int64_t> rows(gid.data(), n);
  {
    io::H5Group g = io::H5Group::create(root, "particles");
    // position, quaternion, velocity, angular_velocity, radius, mass, material, constraint
    items_.write_fields(g.id(), n_global);
    io::write_rows(g.id(), "force", rows, n_global, flat(force), 3);
    io::write_rows(g.id(), "torque", rows, n_global, flat(torque), 3);
    if (gradient_step > 0) {
      io::H5Handle dset(H5Dopen2(g.id(), "force", H5P_DEFAULT), H5Dclose);
      io::write_attribute(dset.id(), "step", gradient_step);
    }
    const std::vector<std::int64_t> owner(n, rank);
    io::write_rows(g.id(), "owner", rows, n_global, std::span<const std::int64_t>(owner), 1);
    io::write_rows(g.id(), "rebuild_position", rows, n_global, flat(std::span<const Eigen::Vector3d>(x_ref_)), 3);
    if (newton_width > 0)
      io::write_rows(g.id(), "newton_matrix_state", rows, n_global, newton_state, newton_width);
    if (bdf2_history_step > 0) {
      io::write_rows(g.id(), "bdf2_history", rows, n_global, bdf2_history, GlobalModel::kBdf2HistoryWidth);
      io::H5Handle dset(H5Dopen2(g.id(), "bdf2_history", H5P_DEFAULT), H5Dclose);
      io::write_attribute(dset.id(), "step", bdf2_history_step);
    }
  }
  {
    io::H5Group g = io::H5Group::create(root, "bonds");
    std::vector<std::int64_t> ids, pair, flags;
    std::vector<double> rest, strength;
    for (const auto& b : bonds) {
      ids.push_back(b.id);
      pair.insert(pair.end(), {b.a, b.b});
      flags.push_back(b.intact ? 1 : 0);
      rest.resize(rest.size() + kRestColumns);
      pack_rest(b.rest, &rest[rest.size() - kRestColumns]);
      strength.insert(strength.end(), {b.sigma_c, b.tau_c});
    }
    io::write_rows(g.id(), "pair", ids, bonds_global, std::span<const std::int64_t>(pair), 2);
    io::write_rows(g.id(), "intact", ids, bonds_global, std::span<const std::int64_t>(flags), 1);
    io::write_rows(g.id(), "rest", ids, bonds_global, std::span<const double>(rest), kRestColumns);
    io::write_attribute(g.id(), "rest_columns", std::string(kRestLayout));
    io::write_rows(g.id(), "strength", ids, bonds_global, std::span<const double>(strength), 2);
  }
  file.close();
}

GlobalModel model_from_checkpoint(const std::string& path, MPI_Comm comm) {
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

  GlobalModel g;
  g.from_checkpoint = true;
  g.step = static_cast<long>(io::read_attribute_int(root, "step"));
  g.time_step = io::read_attribute_double(root, "time_step");
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
  {
    io::H5Group p = io::H5Group::open(root, "particles");
    g.x = unflat<3, Eigen::Vector3d>(io::read_all_double(p.id(), "position"));
    g.q = unflat<4, Eigen::Vector4d>(io::read_all_double(p.id(), "quaternion"));
    g.v = unflat<3, Eigen::Vector3d>(io::read_all_double(p.id(), "velocity"));
    g.w = unflat<3, Eigen::Vector3d>(io::read_all_double(p.id(), "angular_velocity"));
    g.force = unflat<3, Eigen::Vector3d>(io::read_all_double(p.id(), "force"));
    g.torque = unflat<3, Eigen::Vector3d>(io::read_all_double(p.id(), "torque"));
    {
      io::H5Handle dset(H5Dopen2(p.id(), "force", H5P_DEFAULT), H5Dclose);
      if (io::has_attribute(dset.id(), "step")) {
        g.gradient_step = io::read_attribute_double(dset.id(), "step");
        if (!(g.gradient_step > 0))
          throw InputError(path + ": particles/force: attribute \"step\" must be > 0, got " +
                           std::to_string(g.gradient_step));
      }
    }
    g.radius = io::read_all_double(p.id(), "radius");
    g.mass = io::read_all_double(p.id(), "mass");
    for (auto m : io::read_all_int(p.id(), "material")) g.material.push_back(static_cast<int>(m));
    for (auto c : io::read_all_int(p.id(), "constraint")) g.constraint.push_back(static_cast<int>(c));
    for (auto o : io::read_all_int(p.id(), "owner")) g.owner.push_back(static_cast<int>(o));
    g.owner_ranks = static_cast<int>(io::read_attribute_int(root, "ranks_written"));
    g.x_ref = unflat<3, Eigen::Vector3d>(io::read_all_double(p.id(), "rebuild_position"));
    if (io::exists(p.id(), "newton_matrix_state")) g.newton_state = io::read_all_double(p.id(), "newton_matrix_state");
    if (io::exists(p.id(), "bdf2_history")) {
      int width = 0;
      g.bdf2_history = io::read_all_double(p.id(), "bdf2_history", &width);
      io::H5Handle dset(H5Dopen2(p.id(), "bdf2_history", H5P_DEFAULT), H5Dclose);
      g.bdf2_history_step = io::read_attribute_double(dset.id(), "step");
      if (width != GlobalModel::kBdf2HistoryWidth || g.bdf2_history.size() != g.x.size() * GlobalModel::kBdf2HistoryWidth ||
          !(g.bdf2_history_step > 0))
        throw InputError(path + ": particles/bdf2_history is not " + std::to_string(GlobalModel::kBdf2HistoryWidth) +
                         " numbers per particle with a positive attribute \"step\"");
    }
  }
  {
    io::H5Group b = io::H5Group::open(root, "bonds");
    const auto pair = io::read_all_int(b.id(), "pair");
    const auto intact = io::read_all_int(b.id(), "intact");
    const auto rest = io::read_all_double(b.id(), "rest");
    const auto strength = io::read_all_double(b.id(), "strength");
    const std::size_t m = intact.size();
    for (std::size_t k = 0; k < m; ++k) {
      g.pair.push_back({pair[2 * k], pair[2 * k + 1]});
      g.intact.push_back(intact[k] != 0);
      g.rest.push_back(unpack_rest(&rest[kRestColumns * k]));
      g.strength.push_back({strength[2 * k], strength[2 * k + 1]});
    }
  }
  return g;
}

}  // namespace percussion::bdem
