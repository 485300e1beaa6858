// resolution.json: what one impact resolution did, for people who study impact laws. Gathered on rank 0 (a
// resolution scene is small: the file lists every body and contact).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "percussion/core/error.hpp"
#include "percussion/methods/rigid/rigid_method.hpp"
#include "percussion/parallel/messages.hpp"

namespace percussion::rigid {

namespace {

struct BodyRow {
  std::int64_t id;
  double v[3], w[3];
};
struct ContactRow {
  std::int64_t a, b, sub;
  double point[3];
  double impulse;
  std::int64_t implicit;
};

}  // namespace

void RigidMethod::write_results(const std::string& out_dir) {
  if (!resolve_mode() || !resolved_) return;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm_, &rank);
  MPI_Comm_size(comm_, &size);
  std::vector<std::vector<BodyRow>> bodies_out(size);
  std::vector<std::vector<ContactRow>> contacts_out(size);
  for (std::size_t k = 0; k < items_.owned(); ++k)
    bodies_out[0].push_back({items_.gids()[k], {velocity_[k][0], velocity_[k][1], velocity_[k][2]},
                             {angular_velocity_[k][0], angular_velocity_[k][1], angular_velocity_[k][2]}});
  for (std::size_t i = 0; i < gathered_.contacts.size(); ++i) {
    const Contact& c = gathered_.contacts[i];
    contacts_out[0].push_back({c.a, c.b, c.sub, {c.point[0], c.point[1], c.point[2]}, gathered_.impulses[i],
                               gathered_.implicit_equality[i] ? 1 : 0});
  }
  std::vector<int> counts;
  std::vector<BodyRow> rows = parallel::all_to_all(comm_, bodies_out, counts);
  std::vector<ContactRow> contact_rows = parallel::all_to_all(comm_, contacts_out, counts);
  const double energy_after = kinetic_energy();
  const Eigen::Vector3d momentum_after = momentum();
  const Eigen::Vector3d angular_momentum_after = angular_momentum();
  if (rank != 0) return;
  std::sort(rows.begin(), rows.end(), [](const BodyRow& x, const BodyRow& y) { return x.id < y.id; });
  std::sort(contact_rows.begin(), contact_rows.end(),
            [](const ContactRow& x, const ContactRow& y) {
              return x.a != y.a ? x.a < y.a : x.b != y.b ? x.b < y.b : x.sub < y.sub;
            });
  const int dim = scene_.dimension;
  const auto vec = [&](const double* v) {
    nlohmann::json a = nlohmann::json::array();
    for (int d = 0; d < dim; ++d) a.push_back(v[d]);
    return a;
  };
  nlohmann::json out;
  out["terminated"] = last_.terminated;
  out["reason"] = last_.reason;
  out["operator"] = scene_.impact.op == Operator::gauss_seidel ? "gauss_seidel" : "generalized_reflections";
  out["iterations"] = last_.iterations;
  out["reflections"] = last_.reflections;
  out["renormalisations"] = last_.renormalisations;
  out["components"] = last_.components;
  nlohmann::json velocities = nlohmann::json::array();
  for (const BodyRow& r : rows) velocities.push_back(vec(r.v));
  out["velocities"] = velocities;
  // With boxes, one per body (a ball's is 0: balls carry no spin); without, none.
  nlohmann::json angular = nlohmann::json::array();
  for (const BodyRow& r : rows)
    if (has_boxes_) angular.push_back(vec(r.w));
  out["angular_velocities"] = angular;
  out["energy_before"] = energy_before_;
  out["energy_after"] = energy_after;
  out["momentum_before"] = vec(momentum_before_.data());
  out["momentum_after"] = vec(momentum_after.data());
  if (dim == 3) {  // about the origin, spins included
    out["angular_momentum_before"] = vec(angular_momentum_before_.data());
    out["angular_momentum_after"] = vec(angular_momentum_after.data());
  }
  nlohmann::json impulses = nlohmann::json::array(), implicit = nlohmann::json::array();
  for (const ContactRow& c : contact_rows) {
    if (c.implicit) implicit.push_back(impulses.size());
    nlohmann::json e = {{"a", c.a}, {"impulse", c.impulse}};
    if (has_boxes_) e["point"] = vec(c.point);
    if (c.b < bodies_) e["b"] = c.b;
    else e["wall"] = c.b - bodies_;
    impulses.push_back(e);
  }
  out["impulses"] = impulses;
  out["lineality"] = {{"constraints", implicit},
                      {"dimension", last_.lineality_dimension},
                      {"energy_removed", last_.projection_energy_loss}};
  const std::filesystem::path path = std::filesystem::path(out_dir) / "resolution.json";
  std::ofstream file(path);
  file << out.dump(2) << "\n";
  if (!file) throw OutputError(path.string() + ": cannot write");
}

}  // namespace percussion::rigid
