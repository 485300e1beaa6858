#pragma once
// Parallel HDF5 primitives: files, groups, distributed tables, attributes and strings.
//
// Files are opened on an MPI communicator with the MPI-IO driver. Every function below that takes a
// location inside such a file is collective over that communicator: all ranks call it in the same
// order with the same names (HDF5 metadata changes must be identical everywhere). Tables are
// ROW = GLOBAL INDEX, so a file does not depend on the rank count that wrote it.
//
// Failures become exceptions naming the file and object: percussion::InputError when a file or
// object that should be read is missing or of the wrong kind, percussion::OutputError when writing fails,
// std::invalid_argument when the caller passes inconsistent sizes (detected collectively, so every
// rank throws). HDF5's own error-stack printing is switched off.
#include <hdf5.h>
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace percussion::io {

// Owns any HDF5 identifier and closes it with the matching H5?close.
class H5Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  H5Handle() = default;
  H5Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  H5Handle(const H5Handle&) = delete;
  H5Handle& operator=(const H5Handle&) = delete;
  H5Handle(H5Handle&& other) noexcept;
  H5Handle& operator=(H5Handle&& other) noexcept;
  ~H5Handle();
  hid_t id() const { return id_; }
  bool valid() const { return id_ >= 0; }
  void reset();

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

// Whether the tables a file gets (write_rows, write_blocks, append_row) carry HDF5's Fletcher32 checksum, in chunks:
// a block changed on disk then fails its read (InputError naming the dataset) instead of being used. Reading needs
// no flag: HDF5 checks every checksummed block it reads, and reads tables without one as before.
enum class Checksums : bool { off, on };

class H5File {
 public:
  // Truncates an existing file.
  static H5File create(MPI_Comm comm, const std::string& path, Checksums checksums = Checksums::off);
  static H5File open_read(MPI_Comm comm, const std::string& path);
  static H5File open_rw(MPI_Comm comm, const std::string& path, Checksums checksums = Checksums::off);

  H5File() = default;
  H5File(const H5File&) = delete;
  H5File& operator=(const H5File&) = delete;
  H5File(H5File&& other) noexcept;
  H5File& operator=(H5File&& other) noexcept;
  ~H5File();  // closes quietly; call close() to see errors

  hid_t id() const { return id_; }
  const std::string& path() const { return path_; }
  bool is_open() const { return id_ >= 0; }
  void flush();  // collective: everything written so far reaches the file, which is then complete on disk
  void close();  // collective
  // True once any write or close failed (a full disk): HDF5 may still hold a broken file, on which its clean-up at
  // MPI_Finalize crashes, so the program then ends without that clean-up.
  static bool write_failed();

 private:
  H5File(hid_t id, std::string path) : id_(id), path_(std::move(path)) {}
  hid_t id_ = H5I_INVALID_HID;
  std::string path_;
};

class H5Group {
 public:
  static H5Group create(hid_t loc, const std::string& name);  // intermediate groups are created too
  static H5Group open(hid_t loc, const std::string& name);    // InputError if absent
  hid_t id() const { return handle_.id(); }

 private:
  explicit H5Group(H5Handle handle) : handle_(std::move(handle)) {}
  H5Handle handle_;
};

// True if every component of `path` (relative to loc, or absolute) exists and resolves to an object.
bool exists(hid_t loc, const std::string& path);
// "file.h5:/group/name", for messages.
std::string describe(hid_t loc, const std::string& name);
// Shape of a dataset ({} for a scalar).
std::vector<std::int64_t> shape(hid_t loc, const std::string& name);
// Deletes the link `name` if it exists (space is not reclaimed by HDF5).
void remove(hid_t loc, const std::string& name);
// Names of the links in group `name` under loc, in name order.
std::vector<std::string> members(hid_t loc, const std::string& name);
// Makes `name` under loc another name of the existing object `target` (a hard link; target is relative to loc or
// absolute): data written once and found under both names, kept while either name is.
void link(hid_t loc, const std::string& target, const std::string& name);
// True if dataset `name` holds integers, false for floating point or any other type.
bool holds_integers(hid_t loc, const std::string& name);

// Global table [global_rows, components] ([global_rows] when components == 1). Each rank passes its
// rows in strictly ascending order (disjoint across ranks, possibly none) and rows.size()*components
// values, row-major. An existing dataset of the same shape and type is overwritten in place.
void write_rows(hid_t loc, const std::string& name, std::span<const std::int64_t> rows,
                std::int64_t global_rows, std::span<const double> data, int components);
void write_rows(hid_t loc, const std::string& name, std::span<const std::int64_t> rows,
                std::int64_t global_rows, std::span<const std::int64_t> data, int components);

// Variable-length lists: rank r's block of data.size()/components rows follows those of ranks < r.
void write_blocks(hid_t loc, const std::string& name, std::span<const std::int64_t> data,
                  int components);
void write_blocks(hid_t loc, const std::string& name, std::span<const double> data,
                  int components);

// Whole dataset on every rank; *components receives the row width (1 for 1-D).
std::vector<double> read_all_double(hid_t loc, const std::string& name, int* components = nullptr);
std::vector<std::int64_t> read_all_int(hid_t loc, const std::string& name,
                                       int* components = nullptr);
// Selected rows, in the order given (any order, repeats allowed); components must match the file.
std::vector<double> read_rows_double(hid_t loc, const std::string& name,
                                     std::span<const std::int64_t> rows, int components);
std::vector<std::int64_t> read_rows_int(hid_t loc, const std::string& name,
                                        std::span<const std::int64_t> rows, int components);

// Extensible tables with one row per event (observables): append one row of row.size() values,
// creating a chunked [0, components] dataset on first use. Rank 0's values are written.
void append_row(hid_t loc, const std::string& name, std::span<const double> row);
void append_row(hid_t loc, const std::string& name, std::span<const std::int64_t> row);
// Shrinks (or grows) an extensible table to `rows` rows.
void resize_rows(hid_t loc, const std::string& name, std::int64_t rows);

// Scalar attributes on a file, group or dataset; an existing one is replaced. Values must be equal
// on every rank. String attributes are limited to 60000 bytes; use write_string for longer text.
void write_attribute(hid_t loc, const std::string& name, double value);
void write_attribute(hid_t loc, const std::string& name, std::int64_t value);
void write_attribute(hid_t loc, const std::string& name, const std::string& value);
inline void write_attribute(hid_t loc, const std::string& name, int value) {
  write_attribute(loc, name, static_cast<std::int64_t>(value));
}
inline void write_attribute(hid_t loc, const std::string& name, const char* value) {
  write_attribute(loc, name, std::string(value));
}
bool has_attribute(hid_t loc, const std::string& name);
double read_attribute_double(hid_t loc, const std::string& name);  // float or integer attribute
std::int64_t read_attribute_int(hid_t loc, const std::string& name);
std::string read_attribute_string(hid_t loc, const std::string& name);
std::vector<std::string> attribute_names(hid_t loc);

// Scalar string dataset of any size (scene text, logs). Rank 0's text is written.
void write_string(hid_t loc, const std::string& name, const std::string& text);
std::string read_string(hid_t loc, const std::string& name);

// Runs `action` on rank 0 only (file-system work: directories, renames, text files). If it throws,
// every rank throws the same message; InputError stays InputError, and OutputError or a std::filesystem error
// becomes a collective OutputError. Collective.
void on_rank0(MPI_Comm comm, const std::function<void()>& action);

}  // namespace percussion::io
