#pragma once
// Squared-distance convention of the IPC kernels (notes 002 §2.7, as in the IPC Toolkit): every distance
// function returns d², its gradient and Hessian are those of d², and every threshold is passed squared
// (dhat2 = d̂², dmin2, ...). Squared distances are smooth where the distances themselves are not (d = 0).
//
// A primitive pair's closest points lie in one of several regions; each region is a simpler distance on a
// sub-stencil. The classification is done once per pair so that callers evaluate the distance, and scatter its
// derivatives, on the right vertices.
#include <Eigen/Core>
#include <Eigen/Geometry>  // cross products

namespace percussion::geometry {

template <int N>
using Vec = Eigen::Matrix<double, N, 1>;
template <int N>
using Mat = Eigen::Matrix<double, N, N>;

// Point p against edge (e0, e1): closest to e0, to e1, or to the edge's interior.
enum class PointEdgeCase { P_E0, P_E1, P_E };

// Point p against triangle (t0, t1, t2): a vertex, an edge (E0 = t0t1, E1 = t1t2, E2 = t2t0) or the interior.
enum class PointTriangleCase { P_T0, P_T1, P_T2, P_E0, P_E1, P_E2, P_T };

// Edge a = (ea0, ea1) against edge b = (eb0, eb1): two endpoints, an endpoint against the other edge, or both
// interiors (line–line).
enum class EdgeEdgeCase { EA0_EB0, EA0_EB1, EA1_EB0, EA1_EB1, EA_EB0, EA_EB1, EA0_EB, EA1_EB, EA_EB };

// Adds the derivatives of a function of K of a stencil's M points (indices idx, each of dimension D) into the
// full stencil's gradient and Hessian.
template <int D, int K, int M>
void scatter_gradient(const Vec<D * K>& sub, const int (&idx)[K], Vec<D * M>& full) {
  for (int i = 0; i < K; ++i) full.template segment<D>(D * idx[i]) += sub.template segment<D>(D * i);
}

template <int D, int K, int M>
void scatter_hessian(const Mat<D * K>& sub, const int (&idx)[K], Mat<D * M>& full) {
  for (int i = 0; i < K; ++i)
    for (int j = 0; j < K; ++j)
      full.template block<D, D>(D * idx[i], D * idx[j]) += sub.template block<D, D>(D * i, D * j);
}

}  // namespace percussion::geometry
