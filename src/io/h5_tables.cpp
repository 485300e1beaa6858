// Distributed tables: rows selected by global index and written or read collectively, blocks in rank order, and
// extensible one-row-per-event tables.
#include <algorithm>
#include <array>
#include <stdexcept>
#include <utility>

#include "h5_internal.hpp"
#include "percussion/core/error.hpp"
#include "percussion/io/h5file.hpp"

namespace percussion::io {
using namespace detail;
namespace {

struct Run {
  hsize_t start;
  hsize_t count;
};

// In a file with checksums, tables are stored in chunks that carry HDF5's Fletcher32 checksum. A chunk holds one rank's share of the rows, at least kMinChunkRows and at most
// kMaxChunkBytes: the collective write of a filtered table filters each chunk on one rank.
constexpr hsize_t kMinChunkRows = 1024;
constexpr hsize_t kMaxChunkBytes = hsize_t{1} << 20;
constexpr hsize_t kAppendChunkRows = 256;

void set_checksummed_chunks(hid_t dcpl, std::vector<hsize_t> chunk) {
  H5Pset_chunk(dcpl, static_cast<int>(chunk.size()), chunk.data());
  H5Pset_fletcher32(dcpl);
}

std::vector<hsize_t> table_chunk(const FileComm& comm, std::int64_t rows, int components) {
  int size = 1;
  MPI_Comm_size(comm.get(), &size);
  const auto n = static_cast<hsize_t>(rows);
  const hsize_t share = (n + static_cast<hsize_t>(size) - 1) / static_cast<hsize_t>(size);
  const hsize_t most = std::max<hsize_t>(1, kMaxChunkBytes / (8 * static_cast<hsize_t>(components)));
  return table_dims(static_cast<std::int64_t>(std::min({n, std::max(share, kMinChunkRows), most})), components);
}

// Opens `name` if it already has this shape and type, else (re)creates it (contiguous, or checksummed chunks).
H5Handle table_dataset(const FileComm& comm, hid_t loc, const std::string& name, hid_t file_type, std::int64_t rows,
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
  if (rows > 0 && comm.checksums()) set_checksummed_chunks(dcpl.id(), table_chunk(comm, rows, components));
  H5Handle dset(H5Dcreate2(loc, name.c_str(), file_type, space.id(), lcpl.id(), dcpl.id(), H5P_DEFAULT),
                H5Dclose);
  if (!dset.valid()) fail_write(describe(loc, name) + ": cannot create dataset", loc);
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

// Rows of `components` values, shaped as the table is: HDF5 maps a selection onto chunks block by block when memory
// and file have the same rank, but element by element otherwise.
H5Handle memory_space(std::size_t values, int components) {
  const std::vector<hsize_t> dims =
      table_dims(static_cast<std::int64_t>(std::max<std::size_t>(values / static_cast<std::size_t>(components), 1)),
                 components);
  H5Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
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
  H5Handle dset = table_dataset(comm, loc, name, Types<T>::file(), global_rows, components);
  if (global_rows == 0) return;  // nothing to write (HDF5 rejects transfers to empty datasets)
  H5Handle extent(H5Dget_space(dset.id()), H5Sclose);
  H5Handle fspace = select_runs(extent.id(), runs, components);
  H5Handle mspace = memory_space(values, components);
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
  settle_read(comm, H5Dread(dset.id(), Types<T>::memory(), H5S_ALL, H5S_ALL, dxpl.id(), out.data()),
              describe(loc, name) + ": cannot read dataset");
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
  H5Handle mspace = memory_space(unique_values.size(), components);
  T dummy{};
  H5Handle dxpl = collective_transfer(comm);
  settle_read(comm,
              H5Dread(dset.id(), Types<T>::memory(), mspace.id(), fspace.id(), dxpl.id(),
                      unique_values.empty() ? &dummy : unique_values.data()),
              describe(loc, name) + ": cannot read rows");
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
    if (comm.checksums()) {
      set_checksummed_chunks(dcpl.id(), chunk);
    } else {
      H5Pset_chunk(dcpl.id(), static_cast<int>(chunk.size()), chunk.data());
    }
    H5Pset_fill_time(dcpl.id(), H5D_FILL_TIME_NEVER);
    dset = H5Handle(H5Dcreate2(loc, name.c_str(), Types<T>::file(), space.id(), lcpl.id(), dcpl.id(),
                               H5P_DEFAULT),
                    H5Dclose);
    if (!dset.valid()) fail_write(describe(loc, name) + ": cannot create table", loc);
  }
  const hsize_t n = rows_and_width(dset.id()).first;
  std::vector<hsize_t> dims = table_dims(static_cast<std::int64_t>(n) + 1, components);
  check_write(H5Dset_extent(dset.id(), dims.data()), loc, name, "extend table");
  H5Handle extent(H5Dget_space(dset.id()), H5Sclose);
  std::vector<Run> runs;
  if (comm.rank() == 0) runs.push_back({n, 1});
  H5Handle fspace = select_runs(extent.id(), runs, components);
  H5Handle mspace = memory_space(runs.empty() ? 0 : row.size(), components);
  H5Handle dxpl = collective_transfer(comm);
  check_write(H5Dwrite(dset.id(), Types<T>::memory(), mspace.id(), fspace.id(), dxpl.id(), row.data()),
              loc, name, "append row");
}

}  // namespace

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

}  // namespace percussion::io
