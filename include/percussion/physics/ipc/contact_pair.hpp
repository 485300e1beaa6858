#pragma once
// One contact pair of the IPC pair set (notes 002 §2.7) on a table of contact vertices: its type, its stencil
// (indices into the table) and its area weight A_k; the barrier w b(d²) with w = κ A_k on a uniform 12-dof
// stencil (2D point–edge uses the first 6 entries, vertex–plane the first dim).
//
// Counting rule: the set holds every unordered primitive pair within reach exactly once, and each pair keeps its
// full stencil whatever the distance sub-case (a point–triangle pair whose closest point is a triangle vertex is
// still that pair, with zero derivatives on the unused vertices). So E = Σ_k κ A_k b(d_k²) over primitive pairs;
// a vertex–vertex contact reached through several pairs gets the sum of their weights, which is what the IPC
// Toolkit's merged point–point collisions carry (its area-weighted build adds the weights of duplicates). The
// weights divide by the multiplicity of the surface integral (area_weights.hpp); an analytic plane is one-sided,
// so a vertex–plane pair weighs the vertex's full area.
#include <array>
#include <cstdint>
#include <span>

#include "percussion/physics/ipc/barrier_potential.hpp"
#include "percussion/physics/ipc/friction_potential.hpp"

namespace percussion::ipc {

enum class PairType : std::int32_t { PointEdge2D, PointTriangle, EdgeEdge, PointPlane };

// The half-space n·(x − p) ≥ 0 bounded by an analytic plane (n unit; in 2D the z components are 0).
struct HalfPlane {
  Eigen::Vector3d point = Eigen::Vector3d::Zero();
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();
};

struct ContactPair {
  PairType type = PairType::PointTriangle;
  // Stencil: [p, e0, e1], [p, t0, t1, t2], [ea0, ea1, eb0, eb1], or [p] with vertex[1] the plane's index.
  std::array<std::int32_t, 4> vertex{-1, -1, -1, -1};
  double area = 0.0;   // A_k
  double eps_x = 0.0;  // edge–edge mollifier threshold (rest positions)
};

// Stencil points of a pair type.
inline int stencil_size(PairType t) {
  return t == PairType::PointEdge2D ? 3 : t == PairType::PointPlane ? 1 : 4;
}

// Squared distance of the pair; x holds dim numbers per contact vertex. A vertex on the wrong side of its plane
// gets −(n·(x − p))², so that d² ≤ 0 reads as penetrated.
double pair_distance2(const ContactPair& pair, int dim, std::span<const double> x, std::span<const HalfPlane> planes);

// κ A_k b(d²) with exact gradient and Hessian on the stencil (dim × stencil_size entries used).
PairEnergy<12> pair_barrier(const ContactPair& pair, int dim, std::span<const double> x,
                            std::span<const HalfPlane> planes, double dhat2, double kappa);

// The value alone (no derivatives), for line searches: the same number as pair_barrier's.
double pair_barrier_value(const ContactPair& pair, int dim, std::span<const double> x,
                          std::span<const HalfPlane> planes, double dhat2, double kappa);

// Lagged friction of a pair at the previous step's positions x_prev (N_k from κ A_k b, T_k from the closest
// points); tangent columns beyond dim − 1 are zero. A pair beyond d̂ gets N_k = 0.
LaggedFriction<12, 2> pair_lagged_friction(const ContactPair& pair, int dim, std::span<const double> x_prev,
                                           std::span<const HalfPlane> planes, double dhat2, double kappa);

}  // namespace percussion::ipc
