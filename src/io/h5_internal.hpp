#pragma once
// What the h5_*.cpp files of src/io share and the public header keeps out of sight: HDF5 error handling, the
// communicator of each open file, type traits, and row selections.
#include <hdf5.h>
#include <mpi.h>

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "percussion/core/error.hpp"
#include "percussion/io/h5file.hpp"

namespace percussion::io::detail {

class FileComm;

// HDF5 prints its error stack to stderr by default; we turn failures into exceptions instead.
void silence_hdf5();
// The deepest message on HDF5's error stack (the actual cause), then clears the stack.
std::string hdf5_reason();
[[noreturn]] void fail_read(const std::string& what);
// After a collective read: if it failed on any rank (a block failing its checksum fails only on the ranks that read
// it), every rank throws the InputError of the first rank that failed, so none goes on alone into the next
// collective call.
void settle_read(const FileComm& comm, herr_t status, const std::string& what);
// An OutputError with HDF5's (or the system's) reason. With `loc` in a file shared by several ranks (MPI-IO) the
// program ends instead, with exit code 4 on every rank (see abort_if_shared).
[[noreturn]] void fail_write(const std::string& what, hid_t loc = H5I_INVALID_HID);
// Ends every rank (MPI_Abort, code 4) after a failed write into a shared file; returns for a one-rank file.
void abort_if_shared(hid_t loc, const std::string& message);
void check_write(herr_t status, hid_t loc, const std::string& name, const char* action);

// The communicator of the file holding `loc` and whether its tables get checksums, as H5File opened it (every file
// here is opened through H5File).
class FileComm {
 public:
  explicit FileComm(hid_t loc);
  MPI_Comm get() const { return comm_; }
  bool mpio() const { return mpio_; }
  bool checksums() const { return checksums_; }
  int rank() const {
    int r = 0;
    MPI_Comm_rank(comm_, &r);
    return r;
  }

 private:
  MPI_Comm comm_ = MPI_COMM_SELF;
  bool mpio_ = false;
  bool checksums_ = false;
};

// Collective transfers on MPI-IO files; plain POSIX ones on a one-rank run's files.
H5Handle collective_transfer(const FileComm& comm);

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

std::vector<hsize_t> table_dims(std::int64_t rows, int components);
std::vector<hsize_t> dataspace_dims(hid_t space);
H5Handle open_dataset(hid_t loc, const std::string& name);  // InputError if absent or not a dataset
// Rows and row width of a dataset: [n] -> (n, 1), [n, c] -> (n, c), [n, a, b] -> (n, a*b), scalar -> (1, 1).
std::pair<hsize_t, int> rows_and_width(hid_t dset);

template <class T>
void check_class(hid_t dset, hid_t loc, const std::string& name) {
  H5Handle type(H5Dget_type(dset), H5Tclose);
  if (H5Tget_class(type.id()) != Types<T>::klass)
    throw InputError(describe(loc, name) + ": expected " + Types<T>::kind + " data");
}

}  // namespace percussion::io::detail
