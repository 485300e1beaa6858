#include "percussion/physics/fem/bdf.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace percussion::fem {

Bdf bdf(int order) {
  switch (order) {
    case 1: return {1, {-1.0, 0.0, 0.0, 0.0}, 1.0};
    case 2: return {2, {-4.0 / 3.0, 1.0 / 3.0, 0.0, 0.0}, 2.0 / 3.0};
    case 3: return {3, {-18.0 / 11.0, 9.0 / 11.0, -2.0 / 11.0, 0.0}, 6.0 / 11.0};
    case 4: return {4, {-48.0 / 25.0, 36.0 / 25.0, -16.0 / 25.0, 3.0 / 25.0}, 12.0 / 25.0};
    default: throw std::invalid_argument("BDF order must be 1 to 4, got " + std::to_string(order));
  }
}

Bdf bdf_at_step(int order, int step) {
  if (step < 1) throw std::invalid_argument("BDF step must be >= 1, got " + std::to_string(step));
  return bdf(std::min(order, step));
}

namespace {

void check_history(const Bdf& s, std::size_t n, const char* what) {
  if (n < static_cast<std::size_t>(s.order))
    throw std::invalid_argument(std::string("BDF") + std::to_string(s.order) + " needs " + std::to_string(s.order) +
                                " past " + what + ", got " + std::to_string(n));
}

}  // namespace

Eigen::VectorXd bdf_predictor(const Bdf& s, double dt, std::span<const Eigen::VectorXd> u_history,
                              std::span<const Eigen::VectorXd> v_history) {
  check_history(s, u_history.size(), "displacements");
  check_history(s, v_history.size(), "velocities");
  Eigen::VectorXd u_tilde = Eigen::VectorXd::Zero(u_history[0].size());
  for (int j = 0; j < s.order; ++j) u_tilde -= s.alpha[j] * (u_history[j] + s.beta * dt * v_history[j]);
  return u_tilde;
}

Eigen::VectorXd bdf_velocity(const Bdf& s, double dt, const Eigen::VectorXd& u,
                             std::span<const Eigen::VectorXd> u_history) {
  check_history(s, u_history.size(), "displacements");
  Eigen::VectorXd v = u;
  for (int j = 0; j < s.order; ++j) v += s.alpha[j] * u_history[j];
  return v / (s.beta * dt);
}

double inertia_scale(const Bdf& s, double dt) {
  const double b = s.beta * dt;
  return 1.0 / (b * b);
}

double inertia_energy(const Bdf& s, double dt, const Eigen::Ref<const Eigen::VectorXd>& delta,
                      const Eigen::Ref<const Eigen::VectorXd>& m_delta) {
  return 0.5 * inertia_scale(s, dt) * delta.dot(m_delta);
}

Eigen::VectorXd inertia_gradient(const Bdf& s, double dt, const Eigen::Ref<const Eigen::VectorXd>& m_delta) {
  return inertia_scale(s, dt) * m_delta;
}

}  // namespace percussion::fem
