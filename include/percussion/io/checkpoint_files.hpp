#pragma once
// Where checkpoint files live and how they become visible: write to a hidden temporary, then
// commit = rename to ckpt_<step>.h5 and atomically repoint the `latest` symlink. A run killed
// before commit leaves the previous checkpoint and `latest` untouched.
#include <mpi.h>

#include <string>
#include <vector>

namespace percussion::io {

class CheckpointDirectory {
 public:
  // dir is usually <out>/checkpoints (created if absent); keep >= 1 committed checkpoints are kept.
  CheckpointDirectory(std::string dir, int keep);

  const std::string& dir() const { return dir_; }
  int keep() const { return keep_; }
  std::string temp_path(long step) const;   // <dir>/.ckpt_<step, 10 digits>.h5.tmp
  std::string final_path(long step) const;  // <dir>/ckpt_<step, 10 digits>.h5
  std::string latest_path() const;          // <dir>/latest

  // Collective, after every rank has closed temp_path(step): rank 0 renames it to final_path(step),
  // repoints `latest` at it, deletes the oldest checkpoints beyond `keep` and stale temporaries.
  void commit(MPI_Comm comm, long step);

  // Committed checkpoints in this directory, oldest first (final paths).
  std::vector<std::string> committed() const;

  // A checkpoint file, a checkpoints directory, an output directory (checkpoints/latest) or a
  // `latest` link → the concrete file. InputError "<path>: no checkpoint found" otherwise.
  static std::string resolve(const std::string& path);

 private:
  std::string dir_;
  int keep_;
};

}  // namespace percussion::io
