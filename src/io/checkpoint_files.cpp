#include "percussion/io/checkpoint_files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <utility>

#include "percussion/core/error.hpp"
#include "percussion/io/h5file.hpp"

namespace percussion::io {
namespace {

namespace fs = std::filesystem;

std::string step_digits(long step) {
  if (step < 0) throw std::invalid_argument("checkpoint step must be non-negative");
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%010ld", step);
  return buffer;
}

// "ckpt_0000000042.h5" → 42; anything else → -1.
long committed_step(const std::string& name) {
  constexpr std::string_view prefix = "ckpt_";
  constexpr std::string_view suffix = ".h5";
  if (name.size() < prefix.size() + 10 + suffix.size() || !name.starts_with(prefix) || !name.ends_with(suffix))
    return -1;
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.size() > 18 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  return std::stol(digits);
}

bool is_temporary(const std::string& name) {
  return name.starts_with(".ckpt_") && name.ends_with(".h5.tmp");
}

// Committed files of `dir` as (step, path), oldest first.
std::vector<std::pair<long, fs::path>> list_committed(const fs::path& dir) {
  std::vector<std::pair<long, fs::path>> out;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const long step = committed_step(entry.path().filename().string());
    if (step >= 0 && entry.is_regular_file(ec)) out.emplace_back(step, entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// fsync a file or directory so a rename that follows is not reordered before its data on a crash.
void sync_path(const fs::path& path, bool directory) {
  const int fd = ::open(path.c_str(), directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY);
  if (fd < 0) return;  // best effort: the rename itself is still atomic
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

CheckpointDirectory::CheckpointDirectory(std::string dir, int keep) : dir_(std::move(dir)), keep_(keep) {
  if (keep < 1) throw std::invalid_argument("CheckpointDirectory: keep must be at least 1");
  // Idempotent on every rank, so no rank can reach the first write before the directory exists.
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (!fs::is_directory(dir_))
    throw InputError(dir_ + ": cannot create checkpoint directory" + (ec ? " (" + ec.message() + ")" : ""));
}

std::string CheckpointDirectory::temp_path(long step) const {
  return (fs::path(dir_) / (".ckpt_" + step_digits(step) + ".h5.tmp")).string();
}

std::string CheckpointDirectory::final_path(long step) const {
  return (fs::path(dir_) / ("ckpt_" + step_digits(step) + ".h5")).string();
}

std::string CheckpointDirectory::latest_path() const { return (fs::path(dir_) / "latest").string(); }

std::vector<std::string> CheckpointDirectory::committed() const {
  std::vector<std::string> out;
  for (const auto& [step, path] : list_committed(dir_)) out.push_back(path.string());
  return out;
}

void CheckpointDirectory::commit(MPI_Comm comm, long step) {
  MPI_Barrier(comm);  // every rank has finished (closed) its part of the temporary file
  on_rank0(comm, [&] {
    const fs::path temp = temp_path(step);
    const fs::path final = final_path(step);
    if (!fs::is_regular_file(temp)) throw std::runtime_error(temp.string() + ": no checkpoint to commit");
    sync_path(temp, false);
    fs::rename(temp, final);

    // New link beside the old one, then rename over it: `latest` always names a complete file.
    const fs::path link = latest_path();
    const fs::path new_link = fs::path(dir_) / ".latest.tmp";
    std::error_code ec;
    fs::remove(new_link, ec);
    fs::create_symlink(final.filename(), new_link);
    fs::rename(new_link, link);
    sync_path(dir_, true);

    // Keep `keep` files, dropping the lowest steps first but never the one just committed.
    auto files = list_committed(dir_);
    std::size_t excess = files.size() > static_cast<std::size_t>(keep_) ? files.size() - keep_ : 0;
    for (const auto& [s, path] : files) {
      if (excess == 0) break;
      if (s == step) continue;
      fs::remove(path);
      --excess;
    }
    // Temporaries left by runs killed before their commit.
    for (const fs::directory_entry& entry : fs::directory_iterator(dir_))
      if (is_temporary(entry.path().filename().string())) fs::remove(entry.path(), ec);
  });
}

std::string CheckpointDirectory::resolve(const std::string& path) {
  const fs::path p(path);
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) return fs::canonical(p).string();  // a file or a link to one
  if (fs::is_directory(p, ec)) {
    for (const fs::path& link : {p / "latest", p / "checkpoints" / "latest"})
      if (fs::is_regular_file(link, ec)) return fs::canonical(link).string();
    // No (or a dangling) link, e.g. after a copy that dropped symlinks: newest committed file.
    for (const fs::path& dir : {p, p / "checkpoints"}) {
      const auto files = list_committed(dir);
      if (!files.empty()) return fs::canonical(files.back().second).string();
    }
  }
  throw InputError(path + ": no checkpoint found");
}

}  // namespace percussion::io
