#pragma once
// Bonded DEM's entry in the method registry.
#include <mpi.h>

#include <memory>
#include <string>

#include "percussion/core/scene.hpp"
#include "percussion/methods/bdem/bdem_method.hpp"
#include "percussion/methods/bdem/scene.hpp"
#include "percussion/methods/method.hpp"

namespace percussion::bdem {

void validate(const Scene& scene);
std::string describe(const Scene& scene);
// The explicit or implicit integrator the scene names, from the scene or continuing `restart_file`.
std::unique_ptr<Method> create(const Scene& scene, MPI_Comm comm, const std::string& restart_file);
// The same from a parsed (and perhaps edited) BDEM scene.
std::unique_ptr<BdemMethod> create_from(const BdemScene& scene, MPI_Comm comm, const std::string& restart_file);
// The integrator the scene names, on a model from a scene, a checkpoint or a snapshot.
std::unique_ptr<BdemMethod> create_from(const BdemScene& scene, MPI_Comm comm, Model model);

}  // namespace percussion::bdem
