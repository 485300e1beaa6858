#pragma once
// How two closed primitives meet: not at all, touching (a shared boundary point, a vertex on the other primitive,
// a collinear or coplanar overlap) or crossing (their relative interiors cross transversally at one point).
namespace percussion::geometry {

enum class Intersection { none, touching, crossing };

}  // namespace percussion::geometry
