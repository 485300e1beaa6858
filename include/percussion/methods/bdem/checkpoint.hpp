#pragma once
// Reading a bonded-DEM checkpoint back into a GlobalModel (every rank reads it whole, then keeps its part).
// Writing is ExplicitBdem::write_checkpoint.
#include <mpi.h>

#include <string>

#include "percussion/methods/bdem/model.hpp"

namespace percussion::bdem {

GlobalModel model_from_checkpoint(const std::string& path, MPI_Comm comm);

}  // namespace percussion::bdem
