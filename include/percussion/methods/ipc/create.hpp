#pragma once
// The IPC method's entry in the method registry.
#include <mpi.h>

#include <memory>
#include <string>

#include "percussion/core/scene.hpp"
#include "percussion/methods/method.hpp"

namespace percussion::ipc {

void validate(const Scene& scene);
std::string describe(const Scene& scene);
std::unique_ptr<Method> create(const Scene& scene, MPI_Comm comm, const std::string& restart_file);

}  // namespace percussion::ipc
