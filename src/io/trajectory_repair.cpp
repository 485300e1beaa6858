// A trajectory that cannot be cut in place (a frame half-written when the disk filled or the run was killed, which
// HDF5 can no longer delete) is rewritten: the frames a restart keeps and their observable rows go into a new file
// that then replaces the old one.
#include <filesystem>
#include <string>
#include <vector>

#include "h5_internal.hpp"
#include "percussion/core/error.hpp"
#include "percussion/io/h5file.hpp"
#include "percussion/io/trajectory.hpp"

namespace percussion::io {
namespace {

namespace fs = std::filesystem;

// Copies one attribute of the source root to the target root, whatever its type (strings of variable length
// included: their buffers are read and written with the same type).
herr_t copy_attribute(hid_t source, const char* name, const H5A_info_t*, void* target) {
  H5Handle attr(H5Aopen(source, name, H5P_DEFAULT), H5Aclose);
  H5Handle type(H5Aget_type(attr.id()), H5Tclose);
  H5Handle space(H5Aget_space(attr.id()), H5Sclose);
  const hssize_t points = H5Sget_simple_extent_npoints(space.id());
  if (!attr.valid() || !type.valid() || points < 0) return -1;
  std::vector<unsigned char> buffer(H5Tget_size(type.id()) * static_cast<std::size_t>(points) + 1);
  if (H5Aread(attr.id(), type.id(), buffer.data()) < 0) return -1;
  H5Handle copy(H5Acreate2(*static_cast<hid_t*>(target), name, type.id(), space.id(), H5P_DEFAULT, H5P_DEFAULT),
                H5Aclose);
  const herr_t status = copy.valid() ? H5Awrite(copy.id(), type.id(), buffer.data()) : -1;
  if (H5Tis_variable_str(type.id()) > 0) H5Dvlen_reclaim(type.id(), space.id(), H5P_DEFAULT, buffer.data());
  return status;
}

void check(herr_t status, const std::string& what) {
  if (status < 0) detail::fail_write(what);
}

}  // namespace

// Rank 0 alone, with the file closed on every rank: copies the root attributes, every group but frames and
// observables, the first `kept` frames and `kept` rows of every observable table.
void rewrite_trajectory_prefix(const std::string& path, std::size_t kept) {
  detail::silence_hdf5();
  const std::string temp = path + ".rewrite.tmp";
  H5Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  H5Pset_file_locking(fapl.id(), false, true);
  H5Handle source(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.id()), H5Fclose);
  if (!source.valid()) detail::fail_read(path + ": not a readable HDF5 file, cannot continue it");
  try {
    H5Handle target(H5Fcreate(temp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.id()), H5Fclose);
    if (!target.valid()) detail::fail_write(temp + ": cannot create HDF5 file");
    hid_t target_id = target.id();
    check(H5Aiterate2(source.id(), H5_INDEX_NAME, H5_ITER_INC, nullptr, copy_attribute, &target_id),
          temp + ": cannot copy the trajectory's attributes");
    for (const std::string& name : members(source.id(), "/"))
      if (name != "frames" && name != "observables")
        check(H5Ocopy(source.id(), name.c_str(), target.id(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
              describe(target.id(), name) + ": cannot copy");
    H5Group::create(target.id(), "frames");
    for (std::size_t i = 0; i < kept; ++i) {
      const std::string frame = "frames/" + TrajectoryWriter::frame_name(static_cast<int>(i));
      check(H5Ocopy(source.id(), frame.c_str(), target.id(), frame.c_str(), H5P_DEFAULT, H5P_DEFAULT),
            describe(target.id(), frame) + ": cannot copy");
    }
    H5Group observables = H5Group::create(target.id(), "observables");
    for (const std::string& name : members(source.id(), "observables")) {
      const std::string table = "observables/" + name;
      check(H5Ocopy(source.id(), table.c_str(), target.id(), table.c_str(), H5P_DEFAULT, H5P_DEFAULT),
            describe(target.id(), table) + ": cannot copy");
      if (shape(observables.id(), name).at(0) > static_cast<std::int64_t>(kept))
        resize_rows(observables.id(), name, static_cast<std::int64_t>(kept));
    }
    check(H5Fflush(target.id(), H5F_SCOPE_GLOBAL), temp + ": cannot flush");
  } catch (...) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    throw;
  }
  source.reset();
  std::error_code ec;
  fs::rename(temp, path, ec);
  if (ec) throw OutputError(path + ": cannot replace it with its rewritten copy (" + ec.message() + ")");
}

}  // namespace percussion::io
