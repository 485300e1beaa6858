#pragma once
// Trajectory output: <dir>/trajectory.h5 (frames + observables) and <dir>/trajectory.xdmf (an XDMF 2 temporal
// collection that ParaView's Xdmf reader opens). A run writes any of three kinds in each frame, as its
// TrajectoryLayout says: particles, a mesh (vertices + elements) and rigid bodies. Every table's row is a global id,
// so a file does not depend on the rank count that wrote it. Each frame is a spatial collection with a grid per kind
// (particles, bonds, mesh, bodies): ParaView's default Xdmf3 reader reads them as pieces of one dataset, its "Top
// Level Partition" reader (Xdmf3ReaderT) as one block each.
//
// trajectory.h5 layout:
//   /@kind = "trajectory", /@format_version = 1
//   /@particles = N                                  (particles)
//   /@mesh_vertices = V, /@mesh_elements = E, /@mesh_nodes_per_element = k   (mesh: k = 4 tetrahedra, 3 triangles)
//   /@bodies = B, /@shapes = S, /shapes/<s>/{@radius, vertices[n,3], triangles[m,3]}   (bodies; a sphere has no
//                                                    vertices, a mesh shape is in body coordinates, stored once)
//   /frames/000000/ with attributes step, time:
//       {position[N,3], quaternion[N,4], velocity[N,3], angular_velocity[N,3], radius[N], id[N], bonds[M,2]}
//       mesh/{position[V,3], velocity[V,3], id[V], connectivity[E,k]}   (a frame whose elements are the previous
//                                                    frame's links to its connectivity: a fixed mesh is stored once)
//            {displacement[V,3], stress[E,9]}        (where the layout asks: elastic bodies)
//       bodies/{position[B,3], quaternion[B,4], velocity[B,3], angular_velocity[B,3], id[B], shape[B],
//               radius[B]}                           (radius: the shape's sphere or bounding-sphere radius)
//   /observables/{step, time}: one row per frame
//   /observables/<name>: the method's named observables, one row per frame: [F] float64 for a scalar, [F,3] for a
//                 vector, int64 for a count; every frame of a file has the same names
//   /observables/{wall_seconds, newton_iterations, krylov_iterations}: the run's effort since the previous frame
//                 (FrameEffort; the iteration counts only for methods that iterate)
// The file stays open while the writer lives and is flushed after every frame, so it is complete whenever no
// frame is being written (a killed run leaves a readable file and a restart continues it). Opening and closing
// it around every frame would cost a small scene a large share of its frame time.
#include <mpi.h>

#include <array>
#include <cstdint>
#include <ios>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "percussion/core/observable_set.hpp"
#include "percussion/io/h5file.hpp"

namespace percussion::io {

// What a frame cost since the previous one of the same run (for the first frame of a run or of a restart: since its
// time loop started: about 0 for a run's initial frame). Not state: a restarted trajectory's effort rows differ from an
// uninterrupted one's in wall_seconds, and in the counts for a restart between frames.
struct FrameEffort {
  double wall_seconds = 0.0;
  std::int64_t newton_iterations = -1;  // -1: the method has no Newton and Krylov iterations (nothing written)
  std::int64_t krylov_iterations = -1;
};

// This rank's owned particles in ascending global id (n = id.size()).
struct FrameFields {
  std::span<const std::int64_t> id;
  std::span<const double> position;          // 3n
  std::span<const double> quaternion;        // 4n, scalar-last
  std::span<const double> velocity;          // 3n
  std::span<const double> angular_velocity;  // 3n
  std::span<const double> radius;            // n
  std::span<const std::int64_t> bonds;       // 2 per intact bond this rank evaluates (global ids)
};
using ParticleFields = FrameFields;

// This rank's owned mesh vertices in ascending global id and its owned elements in ascending global element id.
struct MeshFields {
  std::span<const std::int64_t> vertex_id;
  std::span<const double> position;             // 3 per vertex
  std::span<const double> velocity;             // 3 per vertex
  std::span<const std::int64_t> element_id;
  std::span<const std::int64_t> connectivity;  // nodes_per_element global vertex ids per element
  std::span<const double> displacement;         // 3 per vertex, when the layout has displacement
  std::span<const double> stress;               // 9 per element (3×3 row-major), when the layout has stress
};

// This rank's owned rigid bodies in ascending global id (n = id.size()).
struct BodyFields {
  std::span<const std::int64_t> id;
  std::span<const double> position;          // 3n: the centre of mass
  std::span<const double> quaternion;        // 4n, scalar-last: body to world
  std::span<const double> velocity;          // 3n
  std::span<const double> angular_velocity;  // 3n, world frame
  std::span<const std::int64_t> shape;       // n: an index into BodyLayout::shapes
};

struct MeshLayout {
  std::int64_t vertices = 0;
  std::int64_t elements = 0;
  int nodes_per_element = 4;  // 4: tetrahedra, 3: triangles
  bool displacement = false;  // a displacement point field (elastic bodies)
  bool stress = false;        // a stress cell field (elastic bodies)
};

// A body's shape in body coordinates: a sphere of `radius` when `vertices` is empty, else a triangulated surface
// (its radius in the file is then that of its bounding sphere about the body origin).
struct BodyShape {
  double radius = 0.0;
  std::vector<double> vertices;         // 3 per vertex
  std::vector<std::int64_t> triangles;  // 3 vertex rows per triangle
};

struct BodyLayout {
  std::int64_t bodies = 0;
  std::vector<BodyShape> shapes;  // the same on every rank
};

// Which kinds every frame of a trajectory holds, and their global counts.
struct TrajectoryLayout {
  std::optional<std::int64_t> particles;
  std::optional<MeshLayout> mesh;
  std::optional<BodyLayout> bodies;
};

// One frame's items: a pointer for each kind of the layout (and none for the others).
struct FrameContent {
  const FrameFields* particles = nullptr;
  const MeshFields* mesh = nullptr;
  const BodyFields* bodies = nullptr;
};

class TrajectoryWriter {
 public:
  // resume_step < 0: start a new trajectory. resume_step >= 0: continue the existing one (created if absent),
  // dropping every frame and observable row with step > resume_step; its layout must be the file's. Collective;
  // comm must outlive the writer.
  TrajectoryWriter(MPI_Comm comm, const std::string& dir, TrajectoryLayout layout, long resume_step = -1);
  // A particle trajectory.
  TrajectoryWriter(MPI_Comm comm, const std::string& dir, std::int64_t n_particles, long resume_step = -1);

  // Collective: every rank passes its own items; step, time and observables are taken from rank 0. The observables'
  // names are fixed by the first frame of a trajectory (or by the file a resumed writer continues): a frame that
  // lacks one or adds one throws std::invalid_argument on every rank and writes nothing.
  void write_frame(long step, double time, std::span<const Observable> observables, const FrameContent& content);
  void write_frame(long step, double time, const ObservableSet& observables, const FrameContent& content) {
    write_frame(step, time, std::span<const Observable>(observables.values()), content);
  }

  // The effort rows the next write_frame appends (rank 0's are written). Without a call before a frame, that frame
  // gets none, and neither does any frame of a trajectory continued from a file that lacks them (rows stay in step
  // with the frames).
  void set_effort(const FrameEffort& effort) { effort_ = effort; pending_effort_ = true; }
  // Collective: closes the file, reporting errors (the destructor closes quietly).
  void close() { file_.close(); }

  int frames() const { return static_cast<int>(frames_.size()); }
  const TrajectoryLayout& layout() const { return layout_; }
  const std::string& h5_path() const { return h5_path_; }
  const std::string& xdmf_path() const { return xdmf_path_; }

  // "000042": the group name of frame `index` under /frames.
  static std::string frame_name(int index);

 private:
  struct FrameRecord {
    long step;
    double time;
    std::int64_t bonds;  // intact bonds (particles)
  };
  // A column of /observables other than step, time and the effort rows.
  struct Column {
    std::string name;
    int width;
    bool integer;
  };
  void start_new();
  void resume(long resume_step);
  void check_layout() const;  // resume: the file's counts are the run's
  bool frame_complete(hid_t frame) const;

  // trajectory_frames.cpp: each kind's datasets of one frame, and the body shapes stored once.
  std::int64_t write_particles(hid_t frame, const FrameFields& fields);  // returns the intact bonds
  bool check_mesh(const MeshFields& fields) const;  // collective; true if the elements are the previous frame's
  void write_mesh(hid_t frame, const std::string& frame_path, const MeshFields& fields, bool same_elements);
  void check_bodies(const BodyFields& fields) const;  // collective
  void write_bodies(hid_t frame, const BodyFields& fields);
  void write_shapes();

  // trajectory_observables.cpp
  std::vector<Observable> agreed_observables(long step, std::span<const Observable> local);  // rank 0's, checked
  void load_columns(hid_t observables);  // resume: the names of the continued file
  void append_observables(hid_t observables, const std::vector<Observable>& values);
  void append_effort(hid_t observables);  // effort_'s rows, where the file's effort rows match its frames

  // trajectory_xdmf.cpp
  std::string frame_xdmf(std::size_t index) const;
  void write_xdmf();   // rank 0 only: the whole file, written then renamed
  void append_xdmf();  // rank 0 only: the newest frame, written over the closing tags

  MPI_Comm comm_;
  int rank_ = 0;
  std::string h5_path_;
  std::string xdmf_path_;
  TrajectoryLayout layout_;
  std::vector<double> shape_radius_;  // bounding radius of each body shape
  std::vector<FrameRecord> frames_;
  std::vector<Column> columns_;  // sorted by name
  bool columns_fixed_ = false;   // set by the first frame, or by a resumed file with frames
  bool columns_from_file_ = false;
  H5File file_;
  std::streamoff xdmf_tail_ = -1;  // where the XDMF file's closing tags start (rank 0; -1: not written)
  FrameEffort effort_;
  bool pending_effort_ = false;
  // The previous frame's elements on this rank and where its connectivity is, so an unchanged mesh is linked.
  std::vector<std::int64_t> last_element_id_, last_connectivity_;
  std::string last_connectivity_path_;
};

// Whether a group name under /frames is a frame's (its decimal index).
bool is_frame_name(const std::string& name);

// Rank 0 alone, while no rank has `path` open: replaces the trajectory with a copy of its first `kept` frames and
// observable rows (trajectory_repair.cpp; for a file whose tail HDF5 cannot delete in place).
void rewrite_trajectory_prefix(const std::string& path, std::size_t kept);

}  // namespace percussion::io
