#pragma once
// What a scene asks of each body's mesh: a shape (generated or read from a Gmsh file), where it goes, its id.
#include <Eigen/Core>
#include <array>
#include <string>
#include <variant>

namespace percussion::geometry {

// An axis-aligned box [lower, upper] meshed with triangles (dim 2, z ignored) or tetrahedra (dim 3).
struct BoxShape {
  int dim = 3;
  std::array<double, 3> lower{0, 0, 0};
  std::array<double, 3> upper{1, 1, 1};
  double element_size = 0.25;  // characteristic edge length
};

// A disk (2D, triangles) centred at the origin.
struct DiskShape {
  double radius = 1;
  double element_size = 0.25;
};

// A ball (3D, tetrahedra) centred at the origin.
struct BallShape {
  double radius = 1;
  double element_size = 0.25;
};

// A Gmsh .msh file of triangles or tetrahedra, read by PETSc's DMPlex reader.
struct GmshFileShape {
  std::string path;
};

using BodyShape = std::variant<BoxShape, DiskShape, BallShape, GmshFileShape>;

// x_placed = rotation * (scale * x) + translation; in 2D the top-left 2x2 block and the first two components apply.
struct Placement {
  Eigen::Matrix3d rotation = Eigen::Matrix3d::Identity();
  Eigen::Vector3d translation = Eigen::Vector3d::Zero();
  double scale = 1;
};

struct MeshBody {
  BodyShape shape;
  Placement placement;
  int body_id = 0;
};

// The spatial dimension a shape is meshed in (a Gmsh file's is known once read: 0 here).
int shape_dimension(const BodyShape& shape);

}  // namespace percussion::geometry
