#pragma once
// Rigid boxes: the narrow phase against boxes, balls and planes, and a uniform box's inertia. Every contact point
// comes with a unit normal pointing from the first body towards the second and a signed gap (negative: overlap),
// so an impact constraint row is (−ν, −r_a×ν) on the first body and (ν, r_b×ν) on the second (notes 003 §2.2).
// The output order is a function of the inputs only, so every rank that evaluates a pair gets the same rows.
#include <Eigen/Core>
#include <optional>
#include <vector>

namespace percussion::geometry {

struct OrientedBox {
  Eigen::Vector3d centre = Eigen::Vector3d::Zero();
  Eigen::Matrix3d axes = Eigen::Matrix3d::Identity();  // columns: the body axes in world coordinates
  Eigen::Vector3d half = Eigen::Vector3d::Ones();      // half extents along the body axes
  // The box of a body at `centre` turned by the unit quaternion q (x, y, z, w: body to world).
  static OrientedBox from_quaternion(const Eigen::Vector3d& centre, const Eigen::Vector4d& q,
                                     const Eigen::Vector3d& half);
  Eigen::Vector3d vertex(int k) const;  // corner k: bit i of k set takes +half[i] along axis i
};

struct ContactPoint {
  Eigen::Vector3d point = Eigen::Vector3d::Zero();   // midway between the two surfaces
  Eigen::Vector3d normal = Eigen::Vector3d::Zero();  // unit, from the first body towards the second
  double gap = 0;                                    // separation along the normal; negative when overlapping
};

// How a box–box contact was found: the separating-axis test's axis of least overlap.
enum class BoxFeature { face_of_a, face_of_b, edges };

// Box a against box b: nothing when they are farther apart than `margin` along some of the 15 separating axes;
// otherwise the axis of least overlap decides: a face axis (face-parallel ones preferred within round-off) gives
// the incident face clipped against the reference face's sides, the clipped corners within the margin the points
// (4 for two boxes resting face on face; of more, the 4 that span them); an edge–edge axis the closest points of
// the two edges (one point).
std::vector<ContactPoint> box_box_contacts(const OrientedBox& a, const OrientedBox& b, double margin,
                                           BoxFeature* feature = nullptr);

// Box against a ball (centre, radius): one point when the ball's surface is within `margin` of the box's. A centre
// inside the box is pushed out through the nearest face.
std::optional<ContactPoint> box_ball_contact(const OrientedBox& box, const Eigen::Vector3d& centre, double radius,
                                             double margin);

// Box against the plane through `point` with unit `normal` into free space: every corner within `margin` of it,
// normal −`normal` (from the box into the plane), in corner order.
std::vector<ContactPoint> box_plane_contacts(const OrientedBox& box, const Eigen::Vector3d& point,
                                             const Eigen::Vector3d& normal, double margin);

// Principal moments of inertia of a uniform box of this mass: I_x = m (h_y² + h_z²) / 3, and so on.
inline Eigen::Vector3d box_inertia(double mass, const Eigen::Vector3d& half) {
  const Eigen::Vector3d h2 = half.cwiseProduct(half);
  return (mass / 3.0) * Eigen::Vector3d(h2[1] + h2[2], h2[0] + h2[2], h2[0] + h2[1]);
}

}  // namespace percussion::geometry
