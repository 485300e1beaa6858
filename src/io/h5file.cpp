// HDF5 files, groups, handles and links; the error handling and per-file communicator the other h5_*.cpp share.
#include "percussion/io/h5file.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <array>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <string_view>
#include <stdexcept>
#include <utility>

#include "h5_internal.hpp"
#include "percussion/core/error.hpp"

namespace percussion::io {
namespace detail {

bool g_write_failed = false;

void silence_hdf5() {
  static const bool silenced = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)silenced;
}

namespace {
// The innermost description, or the operating system's message where a file driver reports one ("... errno = 28,
// error message = 'No space left on device', ...").
struct Reason {
  std::string innermost, system;
};
herr_t collect_reason(unsigned n, const H5E_error2_t* err, void* data) {
  if (err == nullptr || err->desc == nullptr) return 0;
  auto* reason = static_cast<Reason*>(data);
  const std::string desc = err->desc;
  if (n == 0) reason->innermost = desc;
  constexpr std::string_view key = "error message = '";
  const std::size_t at = desc.find(key);
  if (reason->system.empty() && at != std::string::npos) {
    const std::size_t begin = at + key.size(), end = desc.find('\'', begin);
    reason->system = desc.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  }
  return 0;
}
}  // namespace

std::string hdf5_reason() {
  Reason reason;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect_reason, &reason);
  H5Eclear2(H5E_DEFAULT);
  if (!reason.system.empty()) return reason.system;
  if (reason.innermost.find("Fletcher32") != std::string::npos)
    return "a block of it fails its Fletcher32 checksum: the file is corrupted";
  return reason.innermost.empty() ? std::string("HDF5 error") : "HDF5: " + reason.innermost;
}

void fail_read(const std::string& what) { throw InputError(what + " (" + hdf5_reason() + ")"); }

void settle_read(const FileComm& comm, herr_t status, const std::string& what) {
  std::string message = status < 0 ? what + " (" + hdf5_reason() + ")" : std::string();
  int first = status < 0 ? comm.rank() : std::numeric_limits<int>::max();
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm.get());
  if (first == std::numeric_limits<int>::max()) return;
  int length = static_cast<int>(message.size());
  MPI_Bcast(&length, 1, MPI_INT, first, comm.get());
  message.resize(static_cast<std::size_t>(length));
  MPI_Bcast(message.data(), length, MPI_CHAR, first, comm.get());
  throw InputError(message);
}
void fail_write(const std::string& what, hid_t loc) {
  g_write_failed = true;
  const std::string message = what + " (" + hdf5_reason() + ")";
  if (loc >= 0) abort_if_shared(loc, message);
  throw OutputError(message);
}

void check_write(herr_t status, hid_t loc, const std::string& name, const char* action) {
  if (status < 0) fail_write(describe(loc, name) + ": cannot " + action, loc);
}

namespace {
// A file is written through MPI-IO when more than one rank shares it; a one-rank run's files through POSIX I/O,
// whose open, close and transfers cost a small scene's frames much less than MPI-IO's.
bool uses_mpio(MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  return size > 1;
}

// The communicator of each file open through H5File (a duplicate owned here; MPI_COMM_SELF for a POSIX file),
// so that a table write looks it up instead of copying the file's access list to ask HDF5 (a copy per table
// write is a visible share of a small frame's cost).
struct OpenFile {
  MPI_Comm comm = MPI_COMM_SELF;
  bool mpio = false;
  bool checksums = false;
};

std::map<hid_t, OpenFile>& open_files() {
  static std::map<hid_t, OpenFile> files;
  return files;
}

void remember_file(hid_t id, MPI_Comm comm, Checksums checksums) {
  OpenFile file;
  file.mpio = uses_mpio(comm);
  file.checksums = checksums == Checksums::on;
  if (file.mpio) MPI_Comm_dup(comm, &file.comm);
  open_files()[id] = file;
}

void forget_file(hid_t id) {
  const auto it = open_files().find(id);
  if (it == open_files().end()) return;
  if (it->second.mpio) MPI_Comm_free(&it->second.comm);
  open_files().erase(it);
}
}  // namespace

void abort_if_shared(hid_t loc, const std::string& message) {
  H5Handle file(H5Iget_file_id(loc), H5Fclose);
  const auto it = file.valid() ? open_files().find(file.id()) : open_files().end();
  if (it == open_files().end() || !it->second.mpio) return;
  // A write that failed on some ranks of a shared file leaves HDF5's collective state different on each: closing
  // the file (as unwinding would) waits forever in mismatched collectives. End every rank instead, removing a file
  // that was being written under a temporary name (a checkpoint) so that no half-written file is left.
  std::cerr << "error: cannot write output: " << message << std::endl;
  const ssize_t length = H5Fget_name(file.id(), nullptr, 0);
  std::string path(static_cast<std::size_t>(std::max<ssize_t>(length, 0)) + 1, '\0');
  if (length > 0) H5Fget_name(file.id(), path.data(), path.size());
  path.resize(static_cast<std::size_t>(std::max<ssize_t>(length, 0)));
  if (path.ends_with(".tmp")) ::unlink(path.c_str());
  MPI_Abort(MPI_COMM_WORLD, kExitOutput);
}

FileComm::FileComm(hid_t loc) {
  H5Handle file(H5Iget_file_id(loc), H5Fclose);
  const auto it = file.valid() ? open_files().find(file.id()) : open_files().end();
  if (it == open_files().end()) throw std::logic_error(describe(loc, "") + ": not a file opened through H5File");
  comm_ = it->second.comm;
  mpio_ = it->second.mpio;
  checksums_ = it->second.checksums;
}

namespace {
H5Handle file_access(MPI_Comm comm) {
  H5Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!uses_mpio(comm)) {
    // No lock, as under MPI-IO: a viewer may keep the file open while we write.
    H5Pset_file_locking(fapl.id(), false, true);
    return fapl;
  }
  if (H5Pset_fapl_mpio(fapl.id(), comm, MPI_INFO_NULL) < 0)
    throw std::runtime_error("cannot select the HDF5 MPI-IO driver (" + hdf5_reason() + ")");
  // Metadata is written collectively: fewer, larger writes on parallel file systems.
  H5Pset_coll_metadata_write(fapl.id(), 1);
  return fapl;
}

}  // namespace

H5Handle collective_transfer(const FileComm& comm) {
  H5Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
  if (comm.mpio()) H5Pset_dxpl_mpio(dxpl.id(), H5FD_MPIO_COLLECTIVE);
  return dxpl;
}

std::vector<hsize_t> table_dims(std::int64_t rows, int components) {
  if (components == 1) return {static_cast<hsize_t>(rows)};
  return {static_cast<hsize_t>(rows), static_cast<hsize_t>(components)};
}

std::vector<hsize_t> dataspace_dims(hid_t space) {
  const int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(rank, 0)));
  if (rank > 0) H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  return dims;
}

H5Handle open_dataset(hid_t loc, const std::string& name) {
  silence_hdf5();
  if (!exists(loc, name)) throw InputError(describe(loc, name) + ": no such dataset");
  H5Handle dset(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!dset.valid()) fail_read(describe(loc, name) + ": not a dataset");
  return dset;
}

// Rows and row width of a dataset: [n] → (n, 1), [n, c] → (n, c), [n, a, b] → (n, a*b), scalar → (1, 1).
std::pair<hsize_t, int> rows_and_width(hid_t dset) {
  H5Handle space(H5Dget_space(dset), H5Sclose);
  const std::vector<hsize_t> dims = dataspace_dims(space.id());
  if (dims.empty()) return {1, 1};
  hsize_t width = 1;
  for (std::size_t i = 1; i < dims.size(); ++i) width *= dims[i];
  return {dims[0], static_cast<int>(width)};
}

}  // namespace detail

using namespace detail;

// ---------------------------------------------------------------------------------------------
H5Handle::H5Handle(H5Handle&& other) noexcept
    : id_(std::exchange(other.id_, H5I_INVALID_HID)), closer_(other.closer_) {}

H5Handle& H5Handle::operator=(H5Handle&& other) noexcept {
  if (this != &other) {
    reset();
    id_ = std::exchange(other.id_, H5I_INVALID_HID);
    closer_ = other.closer_;
  }
  return *this;
}

H5Handle::~H5Handle() { reset(); }

void H5Handle::reset() {
  if (id_ >= 0 && closer_ != nullptr) closer_(id_);
  id_ = H5I_INVALID_HID;
}

// ---------------------------------------------------------------------------------------------
H5File H5File::create(MPI_Comm comm, const std::string& path, Checksums checksums) {
  silence_hdf5();
  H5Handle fapl = file_access(comm);
  const hid_t id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.id());
  if (id < 0) fail_write(path + ": cannot create HDF5 file");
  remember_file(id, comm, checksums);
  return H5File(id, path);
}

namespace {
hid_t open_existing(MPI_Comm comm, const std::string& path, unsigned flags, Checksums checksums) {
  silence_hdf5();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError(path + ": no such file");
  if (std::filesystem::is_directory(path, ec)) throw InputError(path + ": is a directory, not an HDF5 file");
  // A file we must write but cannot (read-only file system, permissions) is an output fault, not bad input.
  if ((flags & H5F_ACC_RDWR) && ::access(path.c_str(), W_OK) != 0)
    throw OutputError(path + ": cannot open for writing (" + std::strerror(errno) + ")");
  H5Handle fapl = file_access(comm);
  const hid_t id = H5Fopen(path.c_str(), flags, fapl.id());
  if (id < 0) fail_read(path + ": not a readable HDF5 file");
  remember_file(id, comm, checksums);
  return id;
}
}  // namespace

H5File H5File::open_read(MPI_Comm comm, const std::string& path) {
  return H5File(open_existing(comm, path, H5F_ACC_RDONLY, Checksums::off), path);
}

H5File H5File::open_rw(MPI_Comm comm, const std::string& path, Checksums checksums) {
  return H5File(open_existing(comm, path, H5F_ACC_RDWR, checksums), path);
}

namespace {
void close_file(hid_t id) {
  if (H5Fclose(id) < 0) g_write_failed = true;
}
}  // namespace

bool H5File::write_failed() { return g_write_failed; }

H5File::H5File(H5File&& other) noexcept
    : id_(std::exchange(other.id_, H5I_INVALID_HID)), path_(std::move(other.path_)) {}

H5File& H5File::operator=(H5File&& other) noexcept {
  if (this != &other) {
    if (id_ >= 0) {
      forget_file(id_);
      close_file(id_);
    }
    id_ = std::exchange(other.id_, H5I_INVALID_HID);
    path_ = std::move(other.path_);
  }
  return *this;
}

H5File::~H5File() {
  if (id_ < 0) return;
  forget_file(id_);
  close_file(id_);
}

void H5File::flush() {
  if (id_ >= 0 && H5Fflush(id_, H5F_SCOPE_LOCAL) < 0) fail_write(path_ + ": cannot flush HDF5 file", id_);
}

void H5File::close() {
  if (id_ < 0) return;
  forget_file(id_);
  const herr_t status = H5Fclose(std::exchange(id_, H5I_INVALID_HID));
  if (status < 0) fail_write(path_ + ": cannot close HDF5 file");
}

H5Group H5Group::create(hid_t loc, const std::string& name) {
  silence_hdf5();
  H5Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(lcpl.id(), 1);
  H5Handle group(H5Gcreate2(loc, name.c_str(), lcpl.id(), H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (!group.valid()) fail_write(describe(loc, name) + ": cannot create group", loc);
  return H5Group(std::move(group));
}

H5Group H5Group::open(hid_t loc, const std::string& name) {
  silence_hdf5();
  if (!exists(loc, name)) throw InputError(describe(loc, name) + ": no such group");
  H5Handle group(H5Gopen2(loc, name.c_str(), H5P_DEFAULT), H5Gclose);
  if (!group.valid()) fail_read(describe(loc, name) + ": not a group");
  return H5Group(std::move(group));
}

// ---------------------------------------------------------------------------------------------
bool exists(hid_t loc, const std::string& path) {
  silence_hdf5();
  std::string prefix = (!path.empty() && path.front() == '/') ? "/" : "";
  std::size_t begin = prefix.size();
  while (begin < path.size()) {
    std::size_t end = path.find('/', begin);
    if (end == std::string::npos) end = path.size();
    if (end > begin) {
      if (!prefix.empty() && prefix.back() != '/') prefix += '/';
      prefix += path.substr(begin, end - begin);
      if (H5Lexists(loc, prefix.c_str(), H5P_DEFAULT) <= 0 ||
          H5Oexists_by_name(loc, prefix.c_str(), H5P_DEFAULT) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return false;
      }
    }
    begin = end + 1;
  }
  return true;
}

std::string describe(hid_t loc, const std::string& name) {
  // Keep the error stack of a failure being reported: the calls below would clear it.
  const hid_t pending = H5Eget_current_stack();
  std::string file;
  const ssize_t file_len = H5Fget_name(loc, nullptr, 0);
  if (file_len > 0) {
    file.assign(static_cast<std::size_t>(file_len) + 1, '\0');
    H5Fget_name(loc, file.data(), file.size());
    file.resize(static_cast<std::size_t>(file_len));
  }
  std::string object = "/";
  const ssize_t obj_len = H5Iget_name(loc, nullptr, 0);
  if (obj_len > 0) {
    object.assign(static_cast<std::size_t>(obj_len) + 1, '\0');
    H5Iget_name(loc, object.data(), object.size());
    object.resize(static_cast<std::size_t>(obj_len));
  }
  H5Eclear2(H5E_DEFAULT);
  if (pending >= 0) H5Eset_current_stack(pending);
  std::string full;
  if (!name.empty() && name.front() == '/') {
    full = name;
  } else if (name.empty()) {
    full = object;
  } else if (!name.empty() && name.front() == '@') {
    full = object + name;  // attribute: "/group@name"
  } else {
    full = object + (object.back() == '/' ? "" : "/") + name;
  }
  return file + ":" + full;
}

std::vector<std::int64_t> shape(hid_t loc, const std::string& name) {
  H5Handle dset = open_dataset(loc, name);
  H5Handle space(H5Dget_space(dset.id()), H5Sclose);
  std::vector<std::int64_t> out;
  for (hsize_t d : dataspace_dims(space.id())) out.push_back(static_cast<std::int64_t>(d));
  return out;
}

void remove(hid_t loc, const std::string& name) {
  silence_hdf5();
  if (!exists(loc, name)) return;
  check_write(H5Ldelete(loc, name.c_str(), H5P_DEFAULT), loc, name, "delete");
}

namespace {
herr_t collect_link_name(hid_t, const char* name, const H5L_info_t*, void* data) {
  static_cast<std::vector<std::string>*>(data)->emplace_back(name);
  return 0;
}
}  // namespace

std::vector<std::string> members(hid_t loc, const std::string& name) {
  silence_hdf5();
  H5Group group = H5Group::open(loc, name);
  std::vector<std::string> names;
  hsize_t index = 0;
  if (H5Literate(group.id(), H5_INDEX_NAME, H5_ITER_INC, &index, collect_link_name, &names) < 0)
    fail_read(describe(loc, name) + ": cannot list group");
  return names;
}

void link(hid_t loc, const std::string& target, const std::string& name) {
  silence_hdf5();
  if (!exists(loc, target)) throw InputError(describe(loc, target) + ": no such object to link to");
  remove(loc, name);
  H5Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(lcpl.id(), 1);
  check_write(H5Lcreate_hard(loc, target.c_str(), loc, name.c_str(), lcpl.id(), H5P_DEFAULT), loc, name,
              "create link");
}

bool holds_integers(hid_t loc, const std::string& name) {
  H5Handle dset = open_dataset(loc, name);
  H5Handle type(H5Dget_type(dset.id()), H5Tclose);
  return H5Tget_class(type.id()) == H5T_INTEGER;
}

void on_rank0(MPI_Comm comm, const std::function<void()>& action) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // status: 0 ok, 1 InputError, 2 any other failure, 3 OutputError (a file-system error is one too)
  int status = 0;
  std::string message;
  if (rank == 0) {
    try {
      action();
    } catch (const InputError& e) {
      status = 1;
      message = e.what();
    } catch (const OutputError& e) {
      status = 3;
      message = e.what();
    } catch (const std::filesystem::filesystem_error& e) {
      status = 3;
      message = e.path1().string() + ": " + e.code().message();
    } catch (const std::exception& e) {
      status = 2;
      message = e.what();
    }
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, comm);
  if (status == 0) return;
  int length = static_cast<int>(message.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, comm);
  message.resize(static_cast<std::size_t>(length));
  MPI_Bcast(message.data(), length, MPI_CHAR, 0, comm);
  if (status == 1) throw InputError(message);
  if (status == 3) throw OutputError(message, true);
  throw std::runtime_error(message);
}

}  // namespace percussion::io
