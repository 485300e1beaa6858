#pragma once
// Intersection check of the bodies' boundary surfaces at given positions (the initial state must be free of
// intersection, and every accepted step must stay so): exact predicates (geometry/intersection) on every pair of
// surface primitives not sharing a vertex — 2D: boundary edge–edge, 3D: edge–triangle — of different bodies and
// of one body, vertices on or behind an analytic plane, and bodies nested inside another body with no crossing
// surfaces (the parity of crossings of a ray from one vertex of each body). Touching counts as intersecting: a
// zero distance is not a feasible IPC state.
//
// Distribution: the primitives travel as the pair set's do (contact_set.hpp), to every rank whose box of own
// primitives they overlap; a pair is tested by the smaller of its two primitives' owner ranks, so exactly once.
// Limit: pairs that share a vertex are not tested (a self-intersection through primitives adjacent at a vertex is
// not seen), and a body nested in another one's hole is outside it (parity), as it should be.
#include <mpi.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "percussion/methods/ipc/contact_surface.hpp"
#include "percussion/physics/ipc/contact_pair.hpp"

namespace percussion::ipc {

// One intersection, for the message. Global vertex ids; −1 where unused.
struct IntersectionExample {
  enum class Kind : std::int32_t { none = 0, primitives = 1, plane = 2, nested = 3 };
  Kind kind = Kind::none;
  // primitives: the two primitives' bodies; plane: the vertex's body and −1; nested: the inner and outer body.
  std::array<std::int32_t, 2> body{-1, -1};
  std::int32_t plane = -1;  // plane: index into the planes
  // primitives: 2D edge a (0, 1) and edge b (2, 3), 3D edge (0, 1) and triangle (2, 3, 4); plane and nested: the
  // vertex (0).
  std::array<std::int64_t, 5> vertex{-1, -1, -1, -1, -1};
};

struct IntersectionReport {
  std::int64_t between_bodies = 0;  // crossing or touching primitive pairs of two different bodies
  std::int64_t within_body = 0;     // of one body (self-intersection)
  std::int64_t behind_planes = 0;   // surface vertices on or behind a plane
  std::int64_t nested = 0;          // (inner, outer) body pairs: the inner body's vertex inside the outer body
  IntersectionExample example;      // the first by (between, within, plane, nested), then by vertex ids
  std::int64_t count() const { return between_bodies + within_body + behind_planes + nested; }
};

// Collective over comm (the mesh's). x: dim numbers per mesh-local vertex (as ContactSet::build takes; ghost
// values current). The same report on every rank, and on every rank count.
IntersectionReport find_intersections(MPI_Comm comm, const ContactSurface& surface, std::span<const double> x,
                                      std::span<const HalfPlane> planes);

// The example in words with the counts, e.g. "body 0 and body 1 intersect: edge 12–13 meets triangle 40, 41, 42
// (global vertex ids; 6 intersecting primitive pairs)"; "" if none.
std::string describe(const IntersectionReport& report, int dim);

// The scene's JSON pointer for the message: "/obstacles/<plane>" for a vertex behind a plane, else "/bodies"
// (bodies and planes numbered as in the scene).
std::string input_pointer(const IntersectionReport& report);

}  // namespace percussion::ipc
