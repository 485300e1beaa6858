#pragma once
// Trajectory output: <dir>/trajectory.h5 (frames + observables, rows = global particle id) and
// <dir>/trajectory.xdmf (XDMF 2 temporal collection that ParaView's Xdmf reader opens).
//
// trajectory.h5 layout:
//   /@kind = "trajectory", /@particles = N, /@format_version = 1
//   /frames/000000/{position[N,3], quaternion[N,4], velocity[N,3], angular_velocity[N,3], radius[N],
//                   id[N], bonds[M,2]} with attributes step, time
//   /observables/{step, time, kinetic, potential, total, momentum[F,3], angular_momentum[F,3],
//                 bonds_broken, contacts}: extensible, one row per frame
//   /observables/{wall_seconds, newton_iterations, krylov_iterations}: the run's effort since the previous frame
//                 (FrameEffort; the iteration counts only for methods that iterate)
// The file stays open while the writer lives and is flushed after every frame, so it is complete whenever no
// frame is being written (a killed run leaves a readable file and a restart continues it). Opening and closing
// it around every frame would be a sizeable share of a small scene's frame time.
#include <mpi.h>

#include <array>
#include <cstdint>
#include <ios>
#include <span>
#include <string>
#include <vector>

#include "percussion/io/h5file.hpp"

namespace percussion::io {

struct FrameObservables {
  long step = 0;
  double time = 0.0;
  double kinetic = 0.0;
  double potential = 0.0;
  double total = 0.0;
  std::array<double, 3> momentum{};
  std::array<double, 3> angular_momentum{};
  long bonds_broken = 0;
  long contacts = 0;
};

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

class TrajectoryWriter {
 public:
  // resume_step < 0: start a new trajectory. resume_step >= 0: continue the existing one (created
  // if absent), dropping every frame and observable row with step > resume_step. Collective; comm
  // must outlive the writer.
  TrajectoryWriter(MPI_Comm comm, const std::string& dir, std::int64_t n_particles,
                   long resume_step = -1);

  // Collective: every rank passes its own particles; observables are taken from rank 0.
  void write_frame(const FrameObservables& observables, const FrameFields& fields);
  // The effort rows the next write_frame appends (rank 0's are written). Without a call before a frame, that frame
  // gets none, and neither does any frame of a trajectory continued from a file that lacks them (rows stay in step
  // with the frames).
  void set_effort(const FrameEffort& effort) { effort_ = effort; pending_effort_ = true; }
  // Collective: closes the file, reporting errors (the destructor closes quietly).
  void close() { file_.close(); }

  int frames() const { return static_cast<int>(frames_.size()); }
  const std::string& h5_path() const { return h5_path_; }
  const std::string& xdmf_path() const { return xdmf_path_; }

  // "000042": the group name of frame `index` under /frames.
  static std::string frame_name(int index);

 private:
  struct FrameRecord {
    long step;
    double time;
    std::int64_t bonds;
  };
  void start_new();
  void resume(long resume_step);
  std::string frame_xdmf(std::size_t index) const;
  void write_xdmf();   // rank 0 only: the whole file, written then renamed
  void append_xdmf();  // rank 0 only: the newest frame, written over the closing tags

  MPI_Comm comm_;
  int rank_ = 0;
  std::string h5_path_;
  std::string xdmf_path_;
  std::int64_t n_particles_;
  std::vector<FrameRecord> frames_;
  H5File file_;
  std::streamoff xdmf_tail_ = -1;  // where the XDMF file's closing tags start (rank 0; -1: not written)
  FrameEffort effort_;
  bool pending_effort_ = false;
  void append_effort(hid_t observables);  // effort_'s rows, where the file's effort rows match its frames
};

}  // namespace percussion::io
