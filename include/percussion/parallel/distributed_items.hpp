#pragma once
// Items distributed over ranks: the one container every method's particles, bodies or vertices live in.
//
// Each rank holds its owned items first, in ascending global id, then ghosts: copies of other ranks' items that
// it needs, either asked for explicitly (bond partners, element vertices) or within reach of its own items
// (ghost_search.hpp: items of different sizes, each with its own reach). Fields are registered by name with an
// element type (double, int, std::int64_t or a fixed-size Eigen vector): one contiguous std::vector per field, at
// a fixed address for the container's life, so a method keeps a plain reference to it and loops without any
// indirection. Exchanges move bytes of fields through one plan per direction (exchange_plan.hpp):
//   forward      owners' values into the ghost slots of every rank that holds them;
//   reverse_add  ghosts' values added into their owners' (in source-rank order: fixed for a partition);
//   migrate      owned items with every registered field to new owners (ids stay, slots are rebuilt).
// Sums that must not depend on the partition go through ordered_sum.hpp; checkpoints of the registered fields
// through write_fields / read_fields (item_checkpoint.cpp), as tables whose rows are global ids.
#include <hdf5.h>
#include <mpi.h>

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <vector>

#include "percussion/parallel/exchange_plan.hpp"
#include "percussion/parallel/messages.hpp"

namespace percussion::parallel {

// The scalar and the count of scalars of a field's element type, for checkpoints.
template <class T>
struct FieldTraits {
  using Scalar = T;
  static constexpr int width = 1;
};
template <class S, int N>
struct FieldTraits<Eigen::Matrix<S, N, 1>> {
  using Scalar = S;
  static constexpr int width = N;
};

// Element types that may travel as their bytes: plain data and Eigen's fixed-size vectors (an array of scalars
// whose copy constructor is user-provided, hence not trivially copyable in the language's sense).
template <class T>
inline constexpr bool kBytewise = std::is_trivially_copyable_v<T>;
template <class S, int N>
inline constexpr bool kBytewise<Eigen::Matrix<S, N, 1>> = std::is_trivially_copyable_v<S>;

class DistributedItems {
 public:
  struct Request { std::int64_t gid; int owner; };

  explicit DistributedItems(MPI_Comm comm);
  DistributedItems(const DistributedItems&) = delete;
  DistributedItems& operator=(const DistributedItems&) = delete;

  // Registers a field (names unique). Its vector has size() entries and keeps its address; `checkpointed` fields
  // are those write_fields writes and read_fields reads.
  template <class T>
  std::vector<T>& add_field(const std::string& name, bool checkpointed = true);
  // The field of that name; std::logic_error if there is none of that type.
  template <class T>
  std::vector<T>& field(const std::string& name);
  std::vector<std::string> field_names() const;

  // Sets the owned items (global ids strictly ascending) and drops the ghosts; every field gets gids.size()
  // entries, whose values the caller then fills. Not collective.
  void set_owned(std::vector<std::int64_t> gids);

  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  std::size_t owned() const { return owned_; }
  std::size_t ghosts() const { return gid_.size() - owned_; }
  std::size_t size() const { return gid_.size(); }
  const std::vector<std::int64_t>& gids() const { return gid_; }
  // The slot of an item held here (owned or ghost), or −1.
  std::int32_t slot(std::int64_t gid) const {
    const auto it = slot_of_.find(gid);
    return it == slot_of_.end() ? -1 : it->second;
  }
  // The rank that owns ghost k (slot owned() + k).
  int ghost_owner(std::size_t k) const { return ghost_owner_[k]; }

  // Collective. Ghosts: the items of `requests` (held by their owners) and every item within reach of one of this
  // rank's (reach: one per owned item, or one for all; positions: one per owned item). Ghost slots follow in
  // source-rank order and, within a source, ascending id. Every registered field is then forwarded.
  void build_ghosts(std::span<const Eigen::Vector3d> positions, std::span<const double> reach,
                    std::span<const Request> requests = {});
  // The owned slots some other rank holds as ghosts, ascending, each once (fixed between builds).
  std::vector<std::int32_t> sent_slots() const;

  // Collective over neighbours: the ghost slots of these arrays (registered fields or any per-item arrays, resized
  // to size()) receive their owners' values.
  template <class... T>
  void forward(std::vector<T>&... fields);
  void forward_all();
  // Collective over neighbours: each ghost's values are added into its owner's, from the lowest source rank up
  // and, within a source, in its slot order. The ghosts keep their values.
  template <class... T>
  void reverse_add(std::vector<T>&... fields);

  // Collective. Owned item i moves, with every registered field, to rank new_owner[i] (new_owner.size() ==
  // owned()). Afterwards the owned items are again in ascending id and there are no ghosts (build them again).
  void migrate(std::span<const int> new_owner);

  // Collective. Tables under loc named as the checkpointed fields ([global_rows, width], row = global id), written
  // from the owned items; read back for whichever items this rank owns (any partition of the writer's ids).
  void write_fields(hid_t loc, std::int64_t global_rows) const;
  void read_fields(hid_t loc);

  // For ordered_sum.hpp: the routes of the forward exchange.
  const ExchangePlan& forward_plan() const { return forward_; }
  Messages& messages() { return messages_; }

 private:
  struct FieldBase {
    std::string name;
    bool checkpointed = true;
    virtual ~FieldBase() = default;
    virtual const std::type_info& type() const = 0;
    virtual const void* address() const = 0;
    virtual std::size_t bytes() const = 0;  // per item
    virtual void resize(std::size_t n) = 0;
    virtual std::byte* pack(const std::vector<std::int32_t>& list, std::byte* out) const = 0;
    virtual const std::byte* unpack(std::size_t first, std::size_t n, const std::byte* in) = 0;
    virtual void select(const std::vector<std::int32_t>& order) = 0;  // values = values[order]
    virtual void write(hid_t loc, std::span<const std::int64_t> rows, std::int64_t global_rows) const = 0;
    virtual void read(hid_t loc, std::span<const std::int64_t> rows) = 0;
  };
  template <class T>
  struct Field;

  void unpack_forward(std::span<FieldBase* const> fields);
  void rebuild_slots();

  static constexpr int kForwardTag = 7101, kReverseTag = 7102, kMigrateTag = 7103;
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  std::size_t owned_ = 0;
  std::vector<std::int64_t> gid_;
  std::vector<int> ghost_owner_;
  std::unordered_map<std::int64_t, std::int32_t> slot_of_;
  std::vector<std::unique_ptr<FieldBase>> fields_;
  ExchangePlan forward_, reverse_;  // owned slots → ghosts; ghost slots → owners
  Messages messages_;
  std::vector<std::byte> sendbuf_, recvbuf_;
};

}  // namespace percussion::parallel

#include "percussion/parallel/distributed_items_impl.hpp"
