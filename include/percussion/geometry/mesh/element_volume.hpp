#pragma once
// Signed volumes of simplices: positive for the orientation PlexMesh gives every cell at rest, so a value <= 0
// after a deformation means the element inverted.
#include <Eigen/Core>
#include <Eigen/Geometry>

namespace percussion::geometry {

inline double triangle_signed_area(const Eigen::Vector2d& a, const Eigen::Vector2d& b, const Eigen::Vector2d& c) {
  const Eigen::Vector2d u = b - a, v = c - a;
  return 0.5 * (u.x() * v.y() - u.y() * v.x());
}

inline double tetrahedron_signed_volume(const Eigen::Vector3d& a, const Eigen::Vector3d& b, const Eigen::Vector3d& c,
                                        const Eigen::Vector3d& d) {
  return (b - a).dot((c - a).cross(d - a)) / 6.0;
}

// The signed volume of the simplex whose dim + 1 vertices' coordinates start at x[v[i] * dim].
template <class Index>
double simplex_signed_volume(int dim, const double* x, const Index* v) {
  if (dim == 2) {
    return triangle_signed_area(Eigen::Vector2d(x + 2 * v[0]), Eigen::Vector2d(x + 2 * v[1]),
                                Eigen::Vector2d(x + 2 * v[2]));
  }
  return tetrahedron_signed_volume(Eigen::Vector3d(x + 3 * v[0]), Eigen::Vector3d(x + 3 * v[1]),
                                   Eigen::Vector3d(x + 3 * v[2]), Eigen::Vector3d(x + 3 * v[3]));
}

}  // namespace percussion::geometry
