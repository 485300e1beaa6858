// The box narrow phase: separating axes, face clipping, edge–edge closest points, box–ball and box–plane.
#include <algorithm>
#include <cmath>

#include <Eigen/Geometry>  // cross()

#include "percussion/geometry/box.hpp"
#include "percussion/physics/quaternion.hpp"

namespace percussion::geometry {

namespace {

using Vec3 = Eigen::Vector3d;

double sign_of(double x) { return x < 0 ? -1.0 : 1.0; }

// At most four points of a clipped face (up to 8 corners): the deepest, the farthest from it, and the two farthest
// on either side of the line between them, in the clipped order. Four span the face as well as eight do, and fewer
// nearly dependent constraint rows keep the contact QPs well conditioned.
std::vector<ContactPoint> four_of(std::vector<ContactPoint> points, const Vec3& normal) {
  if (points.size() <= 4) return points;
  const std::size_t n = points.size();
  std::size_t p0 = 0;
  for (std::size_t k = 1; k < n; ++k)
    if (points[k].gap < points[p0].gap) p0 = k;
  std::size_t p1 = p0 == 0 ? 1 : 0;
  for (std::size_t k = 0; k < n; ++k)
    if ((points[k].point - points[p0].point).squaredNorm() > (points[p1].point - points[p0].point).squaredNorm())
      p1 = k;
  const Vec3 side = normal.cross(points[p1].point - points[p0].point);
  std::size_t p2 = n, p3 = n;
  double most = 0, least = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const double s = side.dot(points[k].point - points[p0].point);
    if (s > most) most = s, p2 = k;
    if (s < least) least = s, p3 = k;
  }
  std::vector<ContactPoint> kept;
  for (std::size_t k = 0; k < n; ++k)
    if (k == p0 || k == p1 || k == p2 || k == p3) kept.push_back(points[k]);
  return kept;
}

// The face of `inc` most opposed to `out` (the reference face's outward normal), clipped against the sides of the
// reference face of `ref` (axis `axis`, centre `fc`), as contact points whose gaps are measured along `out`.
std::vector<ContactPoint> clip_faces(const OrientedBox& ref, int axis, const Vec3& out, const Vec3& fc,
                                     const OrientedBox& inc, double margin) {
  int j = 0;
  for (int k = 1; k < 3; ++k)
    if (std::abs(inc.axes.col(k).dot(out)) > std::abs(inc.axes.col(j).dot(out))) j = k;
  const Vec3 m = -sign_of(inc.axes.col(j).dot(out)) * inc.axes.col(j);  // the incident face's outward normal
  const Vec3 ic = inc.centre + inc.half[j] * m;
  const int u = (j + 1) % 3, v = (j + 2) % 3;
  const Vec3 du = inc.half[u] * inc.axes.col(u), dv = inc.half[v] * inc.axes.col(v);
  std::vector<Vec3> poly{ic - du - dv, ic + du - dv, ic + du + dv, ic - du + dv};
  // Sutherland–Hodgman against the four side planes s·(x − fc) ≤ h.
  const int p = (axis + 1) % 3, q = (axis + 2) % 3;
  const Vec3 sides[4] = {ref.axes.col(p), -ref.axes.col(p), ref.axes.col(q), -ref.axes.col(q)};
  const double limits[4] = {ref.half[p], ref.half[p], ref.half[q], ref.half[q]};
  for (int s = 0; s < 4 && !poly.empty(); ++s) {
    std::vector<Vec3> next;
    const auto dist = [&](const Vec3& x) { return sides[s].dot(x - fc) - limits[s]; };
    for (std::size_t k = 0; k < poly.size(); ++k) {
      const Vec3& from = poly[k];
      const Vec3& to = poly[(k + 1) % poly.size()];
      const double df = dist(from), dt = dist(to);
      if (df <= 0) next.push_back(from);
      if ((df <= 0) != (dt <= 0)) next.push_back(from + (df / (df - dt)) * (to - from));
    }
    poly = std::move(next);
  }
  const double scale = std::min(ref.half.minCoeff(), inc.half.minCoeff());
  std::vector<ContactPoint> outp;
  for (const Vec3& x : poly) {
    const double gap = out.dot(x - fc);
    if (gap > margin) continue;
    bool duplicate = false;  // corners on a clipping plane come back as intersections too
    for (const ContactPoint& c : outp)
      duplicate = duplicate || (c.point + 0.5 * c.gap * out - x).norm() <= 1e-9 * scale;
    if (!duplicate) outp.push_back({x - 0.5 * gap * out, Vec3::Zero(), gap});
  }
  return four_of(std::move(outp), out);
}

}  // namespace

OrientedBox OrientedBox::from_quaternion(const Vec3& centre, const Eigen::Vector4d& q, const Vec3& half) {
  OrientedBox b;
  b.centre = centre;
  b.axes = quat::rotation_matrix(q / q.norm());
  b.half = half;
  return b;
}

Vec3 OrientedBox::vertex(int k) const {
  Vec3 x = centre;
  for (int i = 0; i < 3; ++i) x += ((k >> i) & 1 ? half[i] : -half[i]) * axes.col(i);
  return x;
}

std::vector<ContactPoint> box_box_contacts(const OrientedBox& a, const OrientedBox& b, double margin,
                                           BoxFeature* feature) {
  const Vec3 d = b.centre - a.centre;
  const Eigen::Matrix3d c = a.axes.transpose() * b.axes;  // c(i, j) = a_i · b_j
  const Eigen::Matrix3d abs_c = c.cwiseAbs();
  // Face axes first: a's, then b's; the least overlap wins, an earlier axis on ties.
  double best = -INFINITY;
  int best_axis = -1;  // 0..2: a's faces, 3..5: b's faces, 6..14: edge a_i × b_j
  for (int i = 0; i < 3; ++i) {
    const double sep = std::abs(a.axes.col(i).dot(d)) - a.half[i] - abs_c.row(i).dot(b.half);
    if (sep > margin) return {};
    if (sep > best) best = sep, best_axis = i;
  }
  for (int j = 0; j < 3; ++j) {
    const double sep = std::abs(b.axes.col(j).dot(d)) - b.half[j] - abs_c.col(j).dot(a.half);
    if (sep > margin) return {};
    if (sep > best) best = sep, best_axis = 3 + j;
  }
  // An edge axis must beat the faces by more than round-off: resting faces keep their several points.
  const double prefer_faces = 1e-6 * std::min(a.half.minCoeff(), b.half.minCoeff());
  Vec3 edge_normal = Vec3::Zero();
  double best_edge = best + prefer_faces;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      Vec3 axis = a.axes.col(i).cross(b.axes.col(j));
      const double length = axis.norm();
      if (length < 1e-9) continue;  // parallel edges: the face axes cover them
      axis /= length;
      const double ra = (a.axes.transpose() * axis).cwiseAbs().dot(a.half);
      const double rb = (b.axes.transpose() * axis).cwiseAbs().dot(b.half);
      const double sep = std::abs(axis.dot(d)) - ra - rb;
      if (sep > margin) return {};
      if (sep > best_edge) best_edge = sep, best_axis = 6 + 3 * i + j, edge_normal = axis;
    }

  if (best_axis < 6) {
    const bool on_a = best_axis < 3;
    const int axis = on_a ? best_axis : best_axis - 3;
    const OrientedBox& ref = on_a ? a : b;
    const OrientedBox& inc = on_a ? b : a;
    // The reference face's outward normal points at the other box.
    const Vec3 toward = on_a ? d : Vec3(-d);
    const Vec3 out = sign_of(ref.axes.col(axis).dot(toward)) * ref.axes.col(axis);
    const Vec3 fc = ref.centre + ref.half[axis] * out;
    std::vector<ContactPoint> points = clip_faces(ref, axis, out, fc, inc, margin);
    const Vec3 n = on_a ? out : Vec3(-out);
    for (ContactPoint& p : points) p.normal = n;
    if (feature) *feature = on_a ? BoxFeature::face_of_a : BoxFeature::face_of_b;
    return points;
  }

  const int i = (best_axis - 6) / 3, j = (best_axis - 6) % 3;
  const Vec3 n = sign_of(edge_normal.dot(d)) * edge_normal;
  // a's edge along a_i farthest along n, b's edge along b_j farthest against n.
  Vec3 pa = a.centre, pb = b.centre;
  for (int k = 0; k < 3; ++k) {
    if (k != i) pa += sign_of(a.axes.col(k).dot(n)) * a.half[k] * a.axes.col(k);
    if (k != j) pb -= sign_of(b.axes.col(k).dot(n)) * b.half[k] * b.axes.col(k);
  }
  const Vec3 ua = a.axes.col(i), ub = b.axes.col(j);
  // Closest points of the two segments pa + s ua (|s| ≤ h_a,i) and pb + t ub (|t| ≤ h_b,j).
  const Vec3 r = pa - pb;
  const double cab = ua.dot(ub), ca = ua.dot(r), cb = ub.dot(r);
  const double denom = 1.0 - cab * cab;  // > 0: the edges are not parallel
  double s = std::clamp((cab * cb - ca) / denom, -a.half[i], a.half[i]);
  const double t = std::clamp(cab * s + cb, -b.half[j], b.half[j]);
  s = std::clamp(cab * t - ca, -a.half[i], a.half[i]);
  const Vec3 qa = pa + s * ua, qb = pb + t * ub;
  const double gap = n.dot(qb - qa);
  if (feature) *feature = BoxFeature::edges;
  if (gap > margin) return {};
  return {ContactPoint{0.5 * (qa + qb), n, gap}};
}

std::optional<ContactPoint> box_ball_contact(const OrientedBox& box, const Vec3& centre, double radius,
                                             double margin) {
  const Vec3 local = box.axes.transpose() * (centre - box.centre);
  const Vec3 clamped = local.cwiseMax(-box.half).cwiseMin(box.half);
  Vec3 n_local = local - clamped;
  double depth_out = n_local.norm();
  Vec3 surface = clamped;  // the box's surface point nearest the centre, box coordinates
  if (depth_out > 0) {
    n_local /= depth_out;
  } else {
    // The centre is inside: leave through the face it is nearest to (the lowest axis on ties).
    int k = 0;
    for (int i = 1; i < 3; ++i)
      if (box.half[i] - std::abs(local[i]) < box.half[k] - std::abs(local[k])) k = i;
    n_local = Vec3::Zero();
    n_local[k] = sign_of(local[k]);
    depth_out = -(box.half[k] - std::abs(local[k]));
    surface[k] = n_local[k] * box.half[k];
  }
  const double gap = depth_out - radius;
  if (gap > margin) return std::nullopt;
  const Vec3 n = box.axes * n_local;
  const Vec3 on_box = box.centre + box.axes * surface;
  return ContactPoint{on_box + 0.5 * gap * n, n, gap};
}

std::vector<ContactPoint> box_plane_contacts(const OrientedBox& box, const Vec3& point, const Vec3& normal,
                                             double margin) {
  std::vector<ContactPoint> out;
  for (int k = 0; k < 8; ++k) {
    const Vec3 x = box.vertex(k);
    const double gap = normal.dot(x - point);
    if (gap <= margin) out.push_back({x - 0.5 * gap * normal, -normal, gap});
  }
  return out;
}

}  // namespace percussion::geometry
