#include "percussion/io/h5file.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <utility>

#include "percussion/core/error.hpp"

namespace percussion::io {
namespace {

// HDF5 prints its error stack to stderr by default; we turn failures into exceptions instead.
void silence_hdf5() {
  static const bool silenced = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)silenced;
}

herr_t innermost_error(unsigned n, const H5E_error2_t* err, void* data) {
  if (n == 0 && err != nullptr && err->desc != nullptr) *static_cast<std::string*>(data) = err->desc;
  return 0;
}

// The deepest message on HDF5's error stack (the actual cause), then clears the stack.
std::string hdf5_reason() {
  std::string reason;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost_error, &reason);
  H5Eclear2(H5E_DEFAULT);
  return reason.empty() ? std::string("HDF5 error") : "HDF5: " + reason;
}

[[noreturn]] void fail_read(const std::string& what) {
  throw InputError(what + " (" + hdf5_reason() + ")");
}
[[noreturn]] void fail_write(const std::string& what) {
  throw std::runtime_error(what + " (" + hdf5_reason() + ")");
}

void check_write(herr_t status, hid_t loc, const std::string& name, const char* action) {
  if (status < 0) fail_write(describe(loc, name) + ": cannot " + action);
}

// A file is written through MPI-IO when more than one rank shares it; a one-rank run's files through POSIX I/O,
// whose open, close and transfers cost a frame of a small scene less than MPI-IO's do.
bool uses_mpio(MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  return size > 1;
}

// The communicator of each file open through H5File (a duplicate owned here; MPI_COMM_SELF for a POSIX file),
// so that a table write looks it up instead of copying the file's access list to ask HDF5 (a tenth of the time
// of writing a small scene's frame).
struct OpenFile {
  MPI_Comm comm = MPI_COMM_SELF;
  bool mpio = false;
};

std::map<hid_t, OpenFile>& open_files() {
  static std::map<hid_t, OpenFile> files;
  return files;
}

void remember_file(hid_t id, MPI_Comm comm) {
  OpenFile file;
  file.mpio = uses_mpio(comm);
  if (file.mpio) MPI_Comm_dup(comm, &file.comm);
  open_files()[id] = file;
}

void forget_file(hid_t id) {
  const auto it = open_files().find(id);
  if (it == open_files().end()) return;
  if (it->second.mpio) MPI_Comm_free(&it->second.comm);
  open_files().erase(it);
}

// The communicator of the file holding `loc`, as H5File opened it (every file here is opened through H5File).
class FileComm {
 public:
  explicit FileComm(hid_t loc) {
    H5Handle file(H5Iget_file_id(loc), H5Fclose);
    const auto it = file.valid() ? open_files().find(file.id()) : open_files().end();
    if (it == open_files().end()) throw std::logic_error(describe(loc, "") + ": not a file opened through H5File");
    file_ = it->second;
  }
  MPI_Comm get() const { return file_.comm; }
  bool mpio() const { return file_.mpio; }
  int rank() const {
    int r = 0;
    MPI_Comm_rank(file_.comm, &r);
    return r;
  }

 private:
  OpenFile file_;
};

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

// Collective transfers on MPI-IO files; plain POSIX ones on a one-rank run's files.
H5Handle collective_transfer(const FileComm& comm) {
  H5Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
  if (comm.mpio()) H5Pset_dxpl_mpio(dxpl.id(), H5FD_MPIO_COLLECTIVE);
  return dxpl;
}

template <class T>
struct Types;
template <>
struct Types<double> {
  static hid_t memory() { return H5T_NATIVE_DOUBLE; }
  static hid_t file() { return H5T_IEEE_F64LE; }
  static constexpr H5T_class_t klass = H5T_FLOAT;
  static constexpr const char* kind = "floating-point";
};
template <>
struct Types<std::int64_t> {
  static hid_t memory() { return H5T_NATIVE_INT64; }
  static hid_t file() { return H5T_STD_I64LE; }
  static constexpr H5T_class_t klass = H5T_INTEGER;
  static constexpr const char* kind = "integer";
};

struct Run {
  hsize_t start;
  hsize_t count;
};

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

template <class T>
void check_class(hid_t dset, hid_t loc, const std::string& name) {
  H5Handle type(H5Dget_type(dset), H5Tclose);
  if (H5Tget_class(type.id()) != Types<T>::klass)
    throw InputError(describe(loc, name) + ": expected " + Types<T>::kind + " data");
}

// Opens `name` if it already has this shape and type, else (re)creates it as a contiguous table.
H5Handle table_dataset(hid_t loc, const std::string& name, hid_t file_type, std::int64_t rows,
                       int components) {
  const std::vector<hsize_t> dims = table_dims(rows, components);
  if (exists(loc, name)) {
    H5Handle dset(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose);
    if (dset.valid()) {
      H5Handle space(H5Dget_space(dset.id()), H5Sclose);
      H5Handle type(H5Dget_type(dset.id()), H5Tclose);
      if (dataspace_dims(space.id()) == dims && H5Tequal(type.id(), file_type) > 0) return dset;
    }
    dset.reset();
    check_write(H5Ldelete(loc, name.c_str(), H5P_DEFAULT), loc, name, "replace dataset");
  }
  H5Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
  H5Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(lcpl.id(), 1);
  H5Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  // Every element is written right away: skip HDF5's fill pass.
  H5Pset_fill_time(dcpl.id(), H5D_FILL_TIME_NEVER);
  H5Handle dset(H5Dcreate2(loc, name.c_str(), file_type, space.id(), lcpl.id(), dcpl.id(), H5P_DEFAULT),
                H5Dclose);
  if (!dset.valid()) fail_write(describe(loc, name) + ": cannot create dataset");
  return dset;
}

void or_runs(hid_t space, std::span<const Run> runs, int components, bool replace) {
  for (const Run& run : runs) {
    const std::array<hsize_t, 2> start{run.start, 0};
    const std::array<hsize_t, 2> count{run.count, static_cast<hsize_t>(components)};
    H5Sselect_hyperslab(space, replace ? H5S_SELECT_SET : H5S_SELECT_OR, start.data(), nullptr,
                        count.data(), nullptr);
    replace = false;
  }
}

// HDF5 1.10 merges every H5S_SELECT_OR into the whole selection built so far (quadratic in the
// number of runs); merging halves pairwise keeps it near n log n.
H5Handle merge_runs(hid_t extent, std::span<const Run> runs, int components) {
  constexpr std::size_t kLeafRuns = 16;
  if (runs.size() <= kLeafRuns) {
    H5Handle space(H5Scopy(extent), H5Sclose);
    or_runs(space.id(), runs, components, true);
    return space;
  }
  const std::size_t half = runs.size() / 2;
  H5Handle low = merge_runs(extent, runs.first(half), components);
  H5Handle high = merge_runs(extent, runs.subspan(half), components);
  return H5Handle(H5Scombine_select(low.id(), H5S_SELECT_OR, high.id()), H5Sclose);
}

// A copy of `extent` selecting the union of hyperslabs over runs of consecutive rows (all
// components); nothing when the rank has no rows. Evenly spaced equal runs (contiguous ownership,
// gid % size, block-cyclic) become one strided hyperslab.
H5Handle select_runs(hid_t extent, const std::vector<Run>& runs, int components) {
  if (runs.size() > 64) {
    bool regular = true;
    const hsize_t stride = runs[1].start - runs[0].start;
    for (std::size_t i = 1; i < runs.size() && regular; ++i)
      regular = runs[i].count == runs[0].count && runs[i].start - runs[i - 1].start == stride;
    if (!regular) return merge_runs(extent, runs, components);
    H5Handle space(H5Scopy(extent), H5Sclose);
    const std::array<hsize_t, 2> start{runs[0].start, 0};
    const std::array<hsize_t, 2> strides{stride, 1};
    const std::array<hsize_t, 2> count{runs.size(), 1};
    const std::array<hsize_t, 2> block{runs[0].count, static_cast<hsize_t>(components)};
    H5Sselect_hyperslab(space.id(), H5S_SELECT_SET, start.data(), strides.data(), count.data(), block.data());
    return space;
  }
  H5Handle space(H5Scopy(extent), H5Sclose);
  if (runs.empty()) {
    H5Sselect_none(space.id());
  } else {
    or_runs(space.id(), runs, components, true);
  }
  return space;
}

H5Handle memory_space(std::size_t values) {
  const hsize_t n = std::max<hsize_t>(values, 1);
  H5Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  if (values == 0) H5Sselect_none(space.id());
  return space;
}

std::vector<Run> runs_of(std::span<const std::int64_t> sorted_rows) {
  std::vector<Run> runs;
  for (std::size_t i = 0; i < sorted_rows.size();) {
    std::size_t j = i + 1;
    while (j < sorted_rows.size() && sorted_rows[j] == sorted_rows[j - 1] + 1) ++j;
    runs.push_back({static_cast<hsize_t>(sorted_rows[i]), static_cast<hsize_t>(j - i)});
    i = j;
  }
  return runs;
}

// Agree across ranks on argument validity and on the values every rank must share, so a bad call
// throws everywhere instead of leaving the other ranks inside a collective.
void agree(MPI_Comm comm, bool locally_bad, std::int64_t shared_a, std::int64_t shared_b,
           const std::string& what) {
  std::array<std::int64_t, 5> v{locally_bad ? 1 : 0, shared_a, -shared_a, shared_b, -shared_b};
  MPI_Allreduce(MPI_IN_PLACE, v.data(), 5, MPI_INT64_T, MPI_MAX, comm);
  if (v[0] != 0) throw std::invalid_argument(what + ": inconsistent rows or sizes on some rank");
  if (v[1] != -v[2] || v[3] != -v[4])
    throw std::invalid_argument(what + ": ranks disagree on the table shape");
}

template <class T>
void write_runs(const FileComm& comm, hid_t loc, const std::string& name, const std::vector<Run>& runs,
                std::int64_t global_rows, const T* data, std::size_t values, int components) {
  H5Handle dset = table_dataset(loc, name, Types<T>::file(), global_rows, components);
  if (global_rows == 0) return;  // nothing to write (HDF5 rejects transfers to empty datasets)
  H5Handle extent(H5Dget_space(dset.id()), H5Sclose);
  H5Handle fspace = select_runs(extent.id(), runs, components);
  H5Handle mspace = memory_space(values);
  const T dummy{};
  H5Handle dxpl = collective_transfer(comm);
  check_write(H5Dwrite(dset.id(), Types<T>::memory(), mspace.id(), fspace.id(), dxpl.id(),
                       values > 0 ? data : &dummy),
              loc, name, "write rows");
}

template <class T>
void write_rows_impl(hid_t loc, const std::string& name, std::span<const std::int64_t> rows,
                     std::int64_t global_rows, std::span<const T> data, int components) {
  silence_hdf5();
  bool bad = components < 1 || global_rows < 0 ||
             data.size() != rows.size() * static_cast<std::size_t>(std::max(components, 0));
  for (std::size_t i = 0; i < rows.size() && !bad; ++i)
    bad = rows[i] < 0 || rows[i] >= global_rows || (i > 0 && rows[i] <= rows[i - 1]);
  FileComm comm(loc);
  agree(comm.get(), bad, global_rows, components, describe(loc, name));
  write_runs(comm, loc, name, runs_of(rows), global_rows, data.data(), data.size(), components);
}

template <class T>
void write_blocks_impl(hid_t loc, const std::string& name, std::span<const T> data, int components) {
  silence_hdf5();
  const bool bad = components < 1 || data.size() % static_cast<std::size_t>(std::max(components, 1)) != 0;
  FileComm comm(loc);
  agree(comm.get(), bad, components, components, describe(loc, name));
  const std::int64_t local = static_cast<std::int64_t>(data.size()) / components;
  std::int64_t offset = 0;
  std::int64_t total = 0;
  MPI_Exscan(&local, &offset, 1, MPI_INT64_T, MPI_SUM, comm.get());
  if (comm.rank() == 0) offset = 0;  // MPI_Exscan leaves rank 0's result undefined
  MPI_Allreduce(&local, &total, 1, MPI_INT64_T, MPI_SUM, comm.get());
  std::vector<Run> runs;
  if (local > 0) runs.push_back({static_cast<hsize_t>(offset), static_cast<hsize_t>(local)});
  write_runs(comm, loc, name, runs, total, data.data(), data.size(), components);
}

template <class T>
std::vector<T> read_all_impl(hid_t loc, const std::string& name, int* components) {
  H5Handle dset = open_dataset(loc, name);
  check_class<T>(dset.id(), loc, name);
  const auto [rows, width] = rows_and_width(dset.id());
  if (components != nullptr) *components = width;
  std::vector<T> out(static_cast<std::size_t>(rows) * static_cast<std::size_t>(width));
  if (out.empty()) return out;  // same on every rank: no collective call is skipped unevenly
  FileComm comm(loc);
  H5Handle dxpl = collective_transfer(comm);
  if (H5Dread(dset.id(), Types<T>::memory(), H5S_ALL, H5S_ALL, dxpl.id(), out.data()) < 0)
    fail_read(describe(loc, name) + ": cannot read dataset");
  return out;
}

template <class T>
std::vector<T> read_rows_impl(hid_t loc, const std::string& name, std::span<const std::int64_t> rows,
                              int components) {
  H5Handle dset = open_dataset(loc, name);
  check_class<T>(dset.id(), loc, name);
  const auto [total, width] = rows_and_width(dset.id());
  if (width != components)
    throw InputError(describe(loc, name) + ": rows have " + std::to_string(width) +
                     " components, expected " + std::to_string(components));
  std::vector<std::int64_t> sorted(rows.begin(), rows.end());
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  const bool bad = !sorted.empty() &&
                   (sorted.front() < 0 || sorted.back() >= static_cast<std::int64_t>(total));
  FileComm comm(loc);
  agree(comm.get(), bad, components, components, describe(loc, name));
  if (total == 0) return {};  // every rank asked for nothing (checked above)

  H5Handle extent(H5Dget_space(dset.id()), H5Sclose);
  H5Handle fspace = select_runs(extent.id(), runs_of(sorted), components);
  const std::size_t c = static_cast<std::size_t>(components);
  std::vector<T> unique_values(sorted.size() * c);
  H5Handle mspace = memory_space(unique_values.size());
  T dummy{};
  H5Handle dxpl = collective_transfer(comm);
  if (H5Dread(dset.id(), Types<T>::memory(), mspace.id(), fspace.id(), dxpl.id(),
              unique_values.empty() ? &dummy : unique_values.data()) < 0)
    fail_read(describe(loc, name) + ": cannot read rows");
  if (sorted.size() == rows.size() && std::is_sorted(rows.begin(), rows.end())) return unique_values;
  std::vector<T> out(rows.size() * c);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto k = static_cast<std::size_t>(std::lower_bound(sorted.begin(), sorted.end(), rows[i]) -
                                            sorted.begin());
    std::copy_n(unique_values.begin() + static_cast<std::ptrdiff_t>(k * c), c,
                out.begin() + static_cast<std::ptrdiff_t>(i * c));
  }
  return out;
}

constexpr hsize_t kAppendChunkRows = 256;

template <class T>
void append_row_impl(hid_t loc, const std::string& name, std::span<const T> row) {
  silence_hdf5();
  const int components = static_cast<int>(row.size());
  FileComm comm(loc);
  agree(comm.get(), components < 1, components, components, describe(loc, name));
  H5Handle dset;
  if (exists(loc, name)) {
    dset = H5Handle(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose);
    if (!dset.valid()) fail_read(describe(loc, name) + ": not a dataset");
    check_class<T>(dset.id(), loc, name);
    if (rows_and_width(dset.id()).second != components)
      throw InputError(describe(loc, name) + ": row width differs from the existing table");
  } else {
    std::vector<hsize_t> dims = table_dims(0, components);
    std::vector<hsize_t> max_dims = dims;
    max_dims[0] = H5S_UNLIMITED;
    std::vector<hsize_t> chunk = dims;
    chunk[0] = kAppendChunkRows;
    H5Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), max_dims.data()),
                   H5Sclose);
    H5Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
    H5Pset_create_intermediate_group(lcpl.id(), 1);
    H5Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    H5Pset_chunk(dcpl.id(), static_cast<int>(chunk.size()), chunk.data());
    H5Pset_fill_time(dcpl.id(), H5D_FILL_TIME_NEVER);
    dset = H5Handle(H5Dcreate2(loc, name.c_str(), Types<T>::file(), space.id(), lcpl.id(), dcpl.id(),
                               H5P_DEFAULT),
                    H5Dclose);
    if (!dset.valid()) fail_write(describe(loc, name) + ": cannot create table");
  }
  const hsize_t n = rows_and_width(dset.id()).first;
  std::vector<hsize_t> dims = table_dims(static_cast<std::int64_t>(n) + 1, components);
  check_write(H5Dset_extent(dset.id(), dims.data()), loc, name, "extend table");
  H5Handle extent(H5Dget_space(dset.id()), H5Sclose);
  std::vector<Run> runs;
  if (comm.rank() == 0) runs.push_back({n, 1});
  H5Handle fspace = select_runs(extent.id(), runs, components);
  H5Handle mspace = memory_space(runs.empty() ? 0 : row.size());
  H5Handle dxpl = collective_transfer(comm);
  check_write(H5Dwrite(dset.id(), Types<T>::memory(), mspace.id(), fspace.id(), dxpl.id(), row.data()),
              loc, name, "append row");
}

H5Handle string_type(std::size_t length) {
  H5Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.id(), std::max<std::size_t>(length, 1));
  // NULLPAD keeps every byte of a string that fills the type exactly.
  H5Tset_strpad(type.id(), H5T_STR_NULLPAD);
  return type;
}

// Reads a string attribute or dataset (fixed-length or variable-length) through `read`.
template <class Read>
std::string read_text(hid_t stored_type, Read read, const std::string& what) {
  if (H5Tget_class(stored_type) != H5T_STRING) throw InputError(what + ": not a string");
  if (H5Tis_variable_str(stored_type) > 0) {
    H5Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mem.id(), H5T_VARIABLE);
    char* text = nullptr;
    if (read(mem.id(), static_cast<void*>(&text)) < 0) fail_read(what + ": cannot read string");
    std::string out = text != nullptr ? std::string(text) : std::string();
    if (text != nullptr) H5free_memory(text);
    return out;
  }
  const std::size_t size = H5Tget_size(stored_type);
  H5Handle mem = string_type(size);
  std::string buffer(size, '\0');
  if (read(mem.id(), static_cast<void*>(buffer.data())) < 0) fail_read(what + ": cannot read string");
  buffer.resize(std::min(buffer.find('\0'), buffer.size()));
  return buffer;
}

H5Handle open_attribute(hid_t loc, const std::string& name) {
  silence_hdf5();
  if (H5Aexists(loc, name.c_str()) <= 0) throw InputError(describe(loc, "@" + name) + ": no such attribute");
  H5Handle attr(H5Aopen(loc, name.c_str(), H5P_DEFAULT), H5Aclose);
  if (!attr.valid()) fail_read(describe(loc, "@" + name) + ": cannot open attribute");
  return attr;
}

void write_scalar_attribute(hid_t loc, const std::string& name, hid_t file_type, hid_t mem_type,
                            const void* value) {
  silence_hdf5();
  if (H5Aexists(loc, name.c_str()) > 0)
    check_write(H5Adelete(loc, name.c_str()), loc, "@" + name, "replace attribute");
  H5Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  H5Handle attr(H5Acreate2(loc, name.c_str(), file_type, space.id(), H5P_DEFAULT, H5P_DEFAULT),
                H5Aclose);
  if (!attr.valid()) fail_write(describe(loc, "@" + name) + ": cannot create attribute");
  check_write(H5Awrite(attr.id(), mem_type, value), loc, "@" + name, "write attribute");
}

herr_t collect_attribute_name(hid_t, const char* name, const H5A_info_t*, void* data) {
  static_cast<std::vector<std::string>*>(data)->emplace_back(name);
  return 0;
}

}  // namespace

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
H5File H5File::create(MPI_Comm comm, const std::string& path) {
  silence_hdf5();
  H5Handle fapl = file_access(comm);
  const hid_t id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.id());
  if (id < 0) fail_write(path + ": cannot create HDF5 file");
  remember_file(id, comm);
  return H5File(id, path);
}

namespace {
hid_t open_existing(MPI_Comm comm, const std::string& path, unsigned flags) {
  silence_hdf5();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError(path + ": no such file");
  if (std::filesystem::is_directory(path, ec)) throw InputError(path + ": is a directory, not an HDF5 file");
  H5Handle fapl = file_access(comm);
  const hid_t id = H5Fopen(path.c_str(), flags, fapl.id());
  if (id < 0) fail_read(path + ": not a readable HDF5 file");
  remember_file(id, comm);
  return id;
}
}  // namespace

H5File H5File::open_read(MPI_Comm comm, const std::string& path) {
  return H5File(open_existing(comm, path, H5F_ACC_RDONLY), path);
}

H5File H5File::open_rw(MPI_Comm comm, const std::string& path) {
  return H5File(open_existing(comm, path, H5F_ACC_RDWR), path);
}

H5File::H5File(H5File&& other) noexcept
    : id_(std::exchange(other.id_, H5I_INVALID_HID)), path_(std::move(other.path_)) {}

H5File& H5File::operator=(H5File&& other) noexcept {
  if (this != &other) {
    if (id_ >= 0) {
      forget_file(id_);
      H5Fclose(id_);
    }
    id_ = std::exchange(other.id_, H5I_INVALID_HID);
    path_ = std::move(other.path_);
  }
  return *this;
}

H5File::~H5File() {
  if (id_ < 0) return;
  forget_file(id_);
  H5Fclose(id_);
}

void H5File::flush() {
  if (id_ >= 0 && H5Fflush(id_, H5F_SCOPE_LOCAL) < 0) fail_write(path_ + ": cannot flush HDF5 file");
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
  if (!group.valid()) fail_write(describe(loc, name) + ": cannot create group");
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

void write_rows(hid_t loc, const std::string& name, std::span<const std::int64_t> rows,
                std::int64_t global_rows, std::span<const double> data, int components) {
  write_rows_impl<double>(loc, name, rows, global_rows, data, components);
}

void write_rows(hid_t loc, const std::string& name, std::span<const std::int64_t> rows,
                std::int64_t global_rows, std::span<const std::int64_t> data, int components) {
  write_rows_impl<std::int64_t>(loc, name, rows, global_rows, data, components);
}

void write_blocks(hid_t loc, const std::string& name, std::span<const std::int64_t> data,
                  int components) {
  write_blocks_impl<std::int64_t>(loc, name, data, components);
}

void write_blocks(hid_t loc, const std::string& name, std::span<const double> data, int components) {
  write_blocks_impl<double>(loc, name, data, components);
}

std::vector<double> read_all_double(hid_t loc, const std::string& name, int* components) {
  return read_all_impl<double>(loc, name, components);
}

std::vector<std::int64_t> read_all_int(hid_t loc, const std::string& name, int* components) {
  return read_all_impl<std::int64_t>(loc, name, components);
}

std::vector<double> read_rows_double(hid_t loc, const std::string& name,
                                     std::span<const std::int64_t> rows, int components) {
  return read_rows_impl<double>(loc, name, rows, components);
}

std::vector<std::int64_t> read_rows_int(hid_t loc, const std::string& name,
                                        std::span<const std::int64_t> rows, int components) {
  return read_rows_impl<std::int64_t>(loc, name, rows, components);
}

void append_row(hid_t loc, const std::string& name, std::span<const double> row) {
  append_row_impl<double>(loc, name, row);
}

void append_row(hid_t loc, const std::string& name, std::span<const std::int64_t> row) {
  append_row_impl<std::int64_t>(loc, name, row);
}

void resize_rows(hid_t loc, const std::string& name, std::int64_t rows) {
  H5Handle dset = open_dataset(loc, name);
  H5Handle space(H5Dget_space(dset.id()), H5Sclose);
  std::vector<hsize_t> dims = dataspace_dims(space.id());
  if (dims.empty() || rows < 0) throw std::invalid_argument(describe(loc, name) + ": cannot resize");
  dims[0] = static_cast<hsize_t>(rows);
  check_write(H5Dset_extent(dset.id(), dims.data()), loc, name, "resize table");
}

// ---------------------------------------------------------------------------------------------
void write_attribute(hid_t loc, const std::string& name, double value) {
  write_scalar_attribute(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}

void write_attribute(hid_t loc, const std::string& name, std::int64_t value) {
  write_scalar_attribute(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value);
}

void write_attribute(hid_t loc, const std::string& name, const std::string& value) {
  constexpr std::size_t kMaxAttribute = 60000;  // HDF5's compact attribute storage holds 64 KiB
  if (value.size() > kMaxAttribute)
    throw std::invalid_argument(describe(loc, "@" + name) +
                                ": string too long for an attribute; use write_string");
  H5Handle type = string_type(value.size());
  const char empty = '\0';
  write_scalar_attribute(loc, name, type.id(), type.id(), value.empty() ? &empty : value.data());
}

bool has_attribute(hid_t loc, const std::string& name) {
  silence_hdf5();
  const htri_t found = H5Aexists(loc, name.c_str());
  H5Eclear2(H5E_DEFAULT);
  return found > 0;
}

double read_attribute_double(hid_t loc, const std::string& name) {
  H5Handle attr = open_attribute(loc, name);
  H5Handle type(H5Aget_type(attr.id()), H5Tclose);
  const H5T_class_t klass = H5Tget_class(type.id());
  if (klass != H5T_FLOAT && klass != H5T_INTEGER)
    throw InputError(describe(loc, "@" + name) + ": not a number");
  H5Handle space(H5Aget_space(attr.id()), H5Sclose);
  if (H5Sget_simple_extent_npoints(space.id()) != 1)
    throw InputError(describe(loc, "@" + name) + ": not a scalar");
  double value = 0.0;
  if (H5Aread(attr.id(), H5T_NATIVE_DOUBLE, &value) < 0)
    fail_read(describe(loc, "@" + name) + ": cannot read attribute");
  return value;
}

std::int64_t read_attribute_int(hid_t loc, const std::string& name) {
  H5Handle attr = open_attribute(loc, name);
  H5Handle type(H5Aget_type(attr.id()), H5Tclose);
  if (H5Tget_class(type.id()) != H5T_INTEGER)
    throw InputError(describe(loc, "@" + name) + ": not an integer");
  H5Handle space(H5Aget_space(attr.id()), H5Sclose);
  if (H5Sget_simple_extent_npoints(space.id()) != 1)
    throw InputError(describe(loc, "@" + name) + ": not a scalar");
  std::int64_t value = 0;
  if (H5Aread(attr.id(), H5T_NATIVE_INT64, &value) < 0)
    fail_read(describe(loc, "@" + name) + ": cannot read attribute");
  return value;
}

std::string read_attribute_string(hid_t loc, const std::string& name) {
  H5Handle attr = open_attribute(loc, name);
  H5Handle type(H5Aget_type(attr.id()), H5Tclose);
  return read_text(
      type.id(), [&](hid_t mem, void* buffer) { return H5Aread(attr.id(), mem, buffer); },
      describe(loc, "@" + name));
}

std::vector<std::string> attribute_names(hid_t loc) {
  silence_hdf5();
  std::vector<std::string> names;
  hsize_t index = 0;
  if (H5Aiterate2(loc, H5_INDEX_NAME, H5_ITER_INC, &index, collect_attribute_name, &names) < 0)
    fail_read(describe(loc, "") + ": cannot list attributes");
  return names;
}

void write_string(hid_t loc, const std::string& name, const std::string& text) {
  silence_hdf5();
  FileComm comm(loc);
  if (exists(loc, name)) check_write(H5Ldelete(loc, name.c_str(), H5P_DEFAULT), loc, name, "replace");
  // Every rank must create the same type: agree on rank 0's length.
  std::uint64_t length = text.size();
  MPI_Bcast(&length, 1, MPI_UINT64_T, 0, comm.get());
  H5Handle type = string_type(length);
  H5Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  H5Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(lcpl.id(), 1);
  H5Handle dset(H5Dcreate2(loc, name.c_str(), type.id(), space.id(), lcpl.id(), H5P_DEFAULT, H5P_DEFAULT),
                H5Dclose);
  if (!dset.valid()) fail_write(describe(loc, name) + ": cannot create string dataset");
  H5Handle fspace(H5Dget_space(dset.id()), H5Sclose);
  H5Handle mspace(H5Screate(H5S_SCALAR), H5Sclose);
  if (comm.rank() != 0) {
    H5Sselect_none(fspace.id());
    H5Sselect_none(mspace.id());
  }
  std::string padded = comm.rank() == 0 ? text : std::string();
  padded.resize(std::max<std::size_t>(length, 1), '\0');
  H5Handle dxpl = collective_transfer(comm);
  check_write(H5Dwrite(dset.id(), type.id(), mspace.id(), fspace.id(), dxpl.id(), padded.data()), loc,
              name, "write string");
}

std::string read_string(hid_t loc, const std::string& name) {
  H5Handle dset = open_dataset(loc, name);
  H5Handle type(H5Dget_type(dset.id()), H5Tclose);
  return read_text(
      type.id(),
      [&](hid_t mem, void* buffer) { return H5Dread(dset.id(), mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer); },
      describe(loc, name));
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

void on_rank0(MPI_Comm comm, const std::function<void()>& action) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // status: 0 ok, 1 InputError, 2 any other failure
  int status = 0;
  std::string message;
  if (rank == 0) {
    try {
      action();
    } catch (const InputError& e) {
      status = 1;
      message = e.what();
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
  throw std::runtime_error(message);
}

}  // namespace percussion::io
