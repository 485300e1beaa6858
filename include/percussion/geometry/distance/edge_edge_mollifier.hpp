#pragma once
// Edge–edge mollifier (notes 002 §2.7): the edge–edge barrier is multiplied by m(c), c = ‖(ea1 − ea0) ×
// (eb1 − eb0)‖², m(c) = −c²/ε×² + 2c/ε× for c < ε×, else 1, with ε× = 1e-3 ‖ea_rest‖²‖eb_rest‖². It makes the
// potential smooth where nearly parallel edges switch between line–line and endpoint distances.
#include "percussion/geometry/distance/distance_type.hpp"

namespace percussion::geometry {

double edge_edge_mollifier_threshold(const Vec<3>& ea0_rest, const Vec<3>& ea1_rest, const Vec<3>& eb0_rest,
                                     const Vec<3>& eb1_rest);

// c and its derivatives on the stencil [ea0, ea1, eb0, eb1].
double edge_edge_cross_squarednorm(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1);
Vec<12> edge_edge_cross_squarednorm_gradient(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0,
                                             const Vec<3>& eb1);
Mat<12> edge_edge_cross_squarednorm_hessian(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0,
                                            const Vec<3>& eb1);

// m(c) and its first two derivatives in c.
inline double mollifier(double c, double eps_x) { return c < eps_x ? (2.0 - c / eps_x) * c / eps_x : 1.0; }
inline double mollifier_derivative(double c, double eps_x) {
  return c < eps_x ? 2.0 * (1.0 - c / eps_x) / eps_x : 0.0;
}
inline double mollifier_second_derivative(double c, double eps_x) {
  return c < eps_x ? -2.0 / (eps_x * eps_x) : 0.0;
}

// m(c(x)) and its derivatives on the stencil.
double edge_edge_mollifier(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1, double eps_x);
Vec<12> edge_edge_mollifier_gradient(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1,
                                     double eps_x);
Mat<12> edge_edge_mollifier_hessian(const Vec<3>& ea0, const Vec<3>& ea1, const Vec<3>& eb0, const Vec<3>& eb1,
                                    double eps_x);

}  // namespace percussion::geometry
