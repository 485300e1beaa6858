// Writes a small trajectory with a mesh and rigid bodies, split over the ranks it runs on, for viewers to open:
//   mpiexec -n 2 io_demo_trajectory DIR
// DIR/trajectory.{h5,xdmf}: 4 frames of a bending 6x4x3 box of tetrahedra (140 vertices, 432 elements) and three
// spheres falling beside it. tests/cli/paraview.sh opens it with ParaView.
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "percussion/core/observable_set.hpp"
#include "percussion/io/trajectory.hpp"

namespace {

using namespace percussion;

constexpr int kNx = 6, kNy = 4, kNz = 3;
constexpr int kFrames = 4;
constexpr std::int64_t kBodies = 3;

std::int64_t vertex(int i, int j, int k) { return i + (kNx + 1) * (j + (kNy + 1) * std::int64_t{k}); }

void run(const std::string& dir) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::int64_t n_vertices = vertex(kNx, kNy, kNz) + 1;
  const std::int64_t n_elements = 6 * std::int64_t{kNx} * kNy * kNz;

  io::TrajectoryLayout layout;
  layout.mesh = io::MeshLayout{n_vertices, n_elements, 4};
  io::BodyLayout bodies;
  bodies.bodies = kBodies;
  io::BodyShape sphere;
  sphere.radius = 0.3;
  bodies.shapes = {sphere};
  layout.bodies = bodies;
  io::TrajectoryWriter writer(MPI_COMM_WORLD, dir, layout);

  // Vertices in contiguous blocks of ids, elements interleaved: any split works.
  const std::int64_t block = (n_vertices + size - 1) / size;
  std::vector<std::int64_t> vertex_id, element_id, connectivity;
  for (std::int64_t g = rank * block; g < std::min(n_vertices, (rank + 1) * block); ++g) vertex_id.push_back(g);
  static constexpr int kTets[6][4] = {{0, 1, 3, 7}, {0, 1, 5, 7}, {0, 2, 3, 7},
                                      {0, 2, 6, 7}, {0, 4, 5, 7}, {0, 4, 6, 7}};
  for (std::int64_t e = rank; e < n_elements; e += size) {
    const std::int64_t c = e / 6;
    const int i = static_cast<int>(c % kNx), j = static_cast<int>((c / kNx) % kNy);
    const int k = static_cast<int>(c / (kNx * kNy));
    element_id.push_back(e);
    for (int corner : kTets[e % 6])
      connectivity.push_back(vertex(i + (corner & 1), j + ((corner >> 1) & 1), k + ((corner >> 2) & 1)));
  }

  for (int f = 0; f < kFrames; ++f) {
    const double t = 0.1 * f;
    std::vector<double> position, velocity;
    for (std::int64_t g : vertex_id) {
      const double x = 0.5 * static_cast<double>(g % (kNx + 1));
      const double y = 0.5 * static_cast<double>((g / (kNx + 1)) % (kNy + 1));
      const double z = 0.5 * static_cast<double>(g / ((kNx + 1) * (kNy + 1)));
      const double bend = 0.08 * f * x * x;  // the free end sags more each frame
      position.insert(position.end(), {x, y, z - bend});
      velocity.insert(velocity.end(), {0.0, 0.0, -0.8 * x * x});
    }
    std::vector<std::int64_t> body_id, body_shape;
    std::vector<double> body_x, body_q, body_v, body_w;
    for (std::int64_t b = rank; b < kBodies; b += size) {
      body_id.push_back(b);
      body_shape.push_back(0);
      body_x.insert(body_x.end(), {0.8 + 1.0 * static_cast<double>(b), -1.0, 2.5 - 4.9 * t * t});
      body_q.insert(body_q.end(), {0.0, 0.0, std::sin(0.5 * t), std::cos(0.5 * t)});
      body_v.insert(body_v.end(), {0.0, 0.0, -9.8 * t});
      body_w.insert(body_w.end(), {0.0, 0.0, 1.0});
    }
    const io::MeshFields mesh{vertex_id, position, velocity, element_id, connectivity, {}, {}};
    const io::BodyFields body{body_id, body_x, body_q, body_v, body_w, body_shape};
    ObservableSet observables;
    observables.set("sag", 0.08 * f * 9.0);
    writer.write_frame(f, t, observables, io::FrameContent{nullptr, &mesh, &body});
  }
  writer.close();
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int code = 0;
  if (argc != 2) {
    std::fprintf(stderr, "usage: io_demo_trajectory DIR\n");
    code = 2;
  } else {
    try {
      run(argv[1]);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "io_demo_trajectory: %s\n", e.what());
      code = 1;
    }
  }
  MPI_Finalize();
  return code;
}
