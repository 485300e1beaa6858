// resolution.json: what one impact resolution did, for people who study impact laws.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "percussion/core/error.hpp"
#include "percussion/methods/rigid/rigid_method.hpp"

namespace percussion::rigid {

void RigidMethod::write_results(const std::string& out_dir) {
  if (!resolve_mode() || !resolved_) return;
  const int dim = scene_.dimension;
  const auto vec = [&](const Eigen::Vector3d& v) {
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
  for (const Eigen::Vector3d& v : balls_.velocity) velocities.push_back(vec(v));
  out["velocities"] = velocities;
  out["angular_velocities"] = nlohmann::json::array();  // balls only: boxes carry them
  out["energy_before"] = energy_before_;
  out["energy_after"] = kinetic_energy();
  out["momentum_before"] = vec(momentum_before_);
  out["momentum_after"] = vec(momentum());
  const std::int64_t n = static_cast<std::int64_t>(balls_.size());
  nlohmann::json impulses = nlohmann::json::array();
  for (std::size_t i = 0; i < contacts_.size(); ++i) {
    const Contact& c = contacts_[i];
    nlohmann::json e = {{"a", c.a}, {"impulse", last_.impulses[i]}};
    if (c.b < n) e["b"] = c.b;
    else e["wall"] = c.b - n;
    impulses.push_back(e);
  }
  out["impulses"] = impulses;
  out["lineality"] = {{"constraints", last_.lineality_contacts},
                      {"dimension", last_.lineality_dimension},
                      {"energy_removed", last_.projection_energy_loss}};
  const std::filesystem::path path = std::filesystem::path(out_dir) / "resolution.json";
  std::ofstream file(path);
  file << out.dump(2) << "\n";
  if (!file) throw OutputError(path.string() + ": cannot write");
}

}  // namespace percussion::rigid
