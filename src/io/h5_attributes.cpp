// Scalar attributes and string datasets (scene text, logs).
#include <algorithm>
#include <stdexcept>

#include "h5_internal.hpp"
#include "percussion/core/error.hpp"
#include "percussion/io/h5file.hpp"

namespace percussion::io {
using namespace detail;
namespace {

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
  if (!attr.valid()) fail_write(describe(loc, "@" + name) + ": cannot create attribute", loc);
  check_write(H5Awrite(attr.id(), mem_type, value), loc, "@" + name, "write attribute");
}

herr_t collect_attribute_name(hid_t, const char* name, const H5A_info_t*, void* data) {
  static_cast<std::vector<std::string>*>(data)->emplace_back(name);
  return 0;
}

}  // namespace

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
  if (!dset.valid()) fail_write(describe(loc, name) + ": cannot create string dataset", loc);
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

}  // namespace percussion::io
