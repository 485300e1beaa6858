#pragma once
// Reading a bonded-DEM checkpoint back into a Model: each rank reads a contiguous slice of every table's rows
// (parallel HDF5 hyperslabs) and checks it; place() then moves the rows to their owners.
// Writing is Domain::write_checkpoint.
#include <mpi.h>

#include <string>

#include "percussion/methods/bdem/model.hpp"

namespace percussion::bdem {

Model model_from_checkpoint(const std::string& path, MPI_Comm comm);

}  // namespace percussion::bdem
