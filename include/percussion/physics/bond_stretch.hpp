#pragma once
// Bond stretch V = ½ k_n (L − l0)², L = |p_j − p_i| (notes 001 §2.5, eq. 8). Independent of q.
#include <Eigen/Core>

#include "percussion/physics/bond_rest.hpp"

namespace percussion::physics::stretch {

double energy(const BondDofs& x, const BondRest& b);

BondDofs gradient(const BondDofs& x, const BondRest& b);

// H = k_n [d dᵀ + ((L − l0)/L)(I − d dᵀ)] in [[H, −H], [−H, H]] on the positions; indefinite when L < l0.
BondHessian hessian(const BondDofs& x, const BondRest& b);

}  // namespace percussion::physics::stretch
