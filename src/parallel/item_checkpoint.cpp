// Checkpoints of a DistributedItems' registered fields: tables whose rows are global ids, so a file written on
// one rank count reads back on any other.
#include <algorithm>

#include "percussion/core/error.hpp"
#include "percussion/io/h5file.hpp"
#include "percussion/parallel/distributed_items.hpp"

namespace percussion::parallel {

void DistributedItems::write_fields(hid_t loc, std::int64_t global_rows) const {
  const std::span<const std::int64_t> rows(gid_.data(), owned_);
  for (const auto& f : fields_)
    if (f->checkpointed) f->write(loc, rows, global_rows);
}

void DistributedItems::read_fields(hid_t loc) {
  const std::span<const std::int64_t> rows(gid_.data(), owned_);
  for (const auto& f : fields_) {
    if (!f->checkpointed) continue;
    if (!io::exists(loc, f->name)) throw InputError(io::describe(loc, f->name) + ": missing");
    f->read(loc, rows);
  }
  gid_.resize(owned_);  // reading replaces the owned values; ghosts must be built again
  ghost_owner_.clear();
  for (const auto& f : fields_) f->resize(owned_);
  forward_.assign(std::vector<std::vector<std::int32_t>>(size_), std::vector<std::size_t>(size_, 0), rank_);
  reverse_ = forward_;
  rebuild_slots();
}

}  // namespace percussion::parallel
