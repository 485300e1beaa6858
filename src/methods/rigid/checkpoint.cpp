// The rigid method's checkpoint: bodies' positions and velocities (rows = ids), step, time and totals, the scene.
#include <cmath>

#include "percussion/core/error.hpp"
#include "percussion/io/h5file.hpp"
#include "percussion/methods/rigid/rigid_method.hpp"

namespace percussion::rigid {

void RigidMethod::write_checkpoint(const std::string& path) {
  io::H5File file = io::H5File::create(comm_, path);
  const hid_t root = file.id();
  io::write_attribute(root, "kind", std::string("checkpoint"));
  io::write_attribute(root, "method", std::string("rigid"));
  io::write_attribute(root, "format_version", std::int64_t{1});
  io::write_attribute(root, "step", std::int64_t{step_});
  io::write_attribute(root, "time", time_);
  io::write_attribute(root, "bodies", bodies_);
  io::write_attribute(root, "reflections", reflections_);
  io::write_attribute(root, "impact_iterations", iterations_);
  io::write_attribute(root, "scene_path", scene_.path);
  io::write_string(root, "scene", scene_.source);
  {
    const io::H5Group group = io::H5Group::create(root, "bodies");
    items_.write_fields(group.id(), bodies_);
  }
  file.close();
}

void RigidMethod::read_checkpoint(const std::string& path) {
  io::H5File file = io::H5File::open_read(comm_, path);
  const hid_t root = file.id();
  const auto refuse = [&](const std::string& what) { throw InputError(path + ": " + what); };
  if (!io::has_attribute(root, "method") || io::read_attribute_string(root, "method") != "rigid")
    refuse("not a checkpoint of the rigid method");
  if (io::read_attribute_int(root, "bodies") != bodies_)
    refuse("holds " + std::to_string(io::read_attribute_int(root, "bodies")) + " bodies, the scene " + scene_.path +
           " has " + std::to_string(bodies_));
  const std::int64_t step = io::read_attribute_int(root, "step");
  if (step < 0) refuse("/@step: negative (" + std::to_string(step) + ")");
  for (const char* name : {"bodies/position", "bodies/velocity"}) {
    if (!io::exists(root, name)) refuse(std::string("/") + name + ": missing");
    if (io::shape(root, name) != std::vector<std::int64_t>{bodies_, 3})
      refuse(std::string("/") + name + ": expected " + std::to_string(bodies_) + " rows of 3");
  }
  {
    const io::H5Group group = io::H5Group::open(root, "bodies");
    items_.read_fields(group.id());
  }
  int finite = 1;
  for (std::size_t k = 0; k < items_.owned(); ++k)
    if (!position_[k].allFinite() || !velocity_[k].allFinite()) finite = 0;
  MPI_Allreduce(MPI_IN_PLACE, &finite, 1, MPI_INT, MPI_MIN, comm_);
  if (!finite) refuse("/bodies: a position or velocity is not finite");
  step_ = static_cast<long>(step);
  time_ = io::read_attribute_double(root, "time");
  reflections_ = io::read_attribute_int(root, "reflections");
  iterations_ = io::read_attribute_int(root, "impact_iterations");
  resolved_ = resolve_mode() && step_ >= 1;
  file.close();
}

}  // namespace percussion::rigid
