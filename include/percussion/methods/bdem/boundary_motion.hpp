#pragma once
// Prescribed rigid motion of boundary-condition particles: exact per step (a rotation about the moving
// centre, not a linearised one), so a twisted end stays on its circle however long the run.
#include <Eigen/Geometry>

#include "percussion/core/scene_parts.hpp"
#include "percussion/physics/quaternion.hpp"

namespace percussion::bdem {

// Advance one particle of `bc` from time t to t + h; sets its velocity and angular velocity for t + h.
inline void prescribed_step(const BoundaryCondition& bc, double t, double h, Eigen::Vector3d& x, Eigen::Vector4d& q,
                            Eigen::Vector3d& v, Eigen::Vector3d& w) {
  const Eigen::Vector3d c0 = bc.center + t * bc.velocity, c1 = c0 + h * bc.velocity;
  const Eigen::Vector4d turn = quat::from_rotation_vector(h * bc.angular_velocity);
  x = c1 + quat::rotate(turn, x - c0);
  q = quat::mul(turn, q).normalized();
  v = bc.velocity + bc.angular_velocity.cross(x - c1);
  w = bc.angular_velocity;
}

}  // namespace percussion::bdem
