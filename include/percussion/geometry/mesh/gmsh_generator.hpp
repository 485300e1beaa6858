#pragma once
// Boxes, disks and balls meshed by Gmsh's C++ API (OpenCASCADE geometry, Delaunay meshing, one thread so the
// same parameters always give the same mesh).
#include <string>
#include <variant>

#include "percussion/geometry/mesh/mesh_body.hpp"
#include "percussion/geometry/mesh/serial_mesh.hpp"

namespace percussion::geometry {

using GeneratedShape = std::variant<BoxShape, DiskShape, BallShape>;

// Meshes the shape and returns its cells of full dimension with the vertices they use.
SerialMesh generate_gmsh_mesh(const GeneratedShape& shape);

// Meshes the shape and writes a Gmsh .msh file (format 4.1, cells of full dimension only).
void write_gmsh_file(const GeneratedShape& shape, const std::string& path);

}  // namespace percussion::geometry
