#pragma once
// Template bodies of distributed_items.hpp: typed fields and the typed exchanges.
#include <cstring>
#include <type_traits>

#include "percussion/io/h5file.hpp"

namespace percussion::parallel {

template <class T>
struct DistributedItems::Field final : FieldBase {
  static_assert(kBytewise<T>, "fields travel as bytes");
  using Scalar = typename FieldTraits<T>::Scalar;
  static constexpr int kWidth = FieldTraits<T>::width;
  std::vector<T> values;

  const std::type_info& type() const override { return typeid(T); }
  const void* address() const override { return &values; }
  std::size_t bytes() const override { return sizeof(T); }
  void resize(std::size_t n) override { values.resize(n); }
  std::byte* pack(const std::vector<std::int32_t>& list, std::byte* out) const override {
    return pack::put(list, values.data(), out);
  }
  const std::byte* unpack(std::size_t first, std::size_t n, const std::byte* in) override {
    return pack::take(n, values.data() + first, in);
  }
  void select(const std::vector<std::int32_t>& order) override {
    std::vector<T> picked(order.size());
    for (std::size_t k = 0; k < order.size(); ++k) picked[k] = values[static_cast<std::size_t>(order[k])];
    values.swap(picked);
  }
  // Doubles as doubles, integers as 64-bit integers.
  void write(hid_t loc, std::span<const std::int64_t> rows, std::int64_t global_rows) const override {
    const std::size_t n = rows.size() * kWidth;
    if constexpr (std::is_floating_point_v<Scalar>) {
      const auto* s = reinterpret_cast<const double*>(values.data());
      io::write_rows(loc, name, rows, global_rows, std::span<const double>(s, n), kWidth);
    } else {
      const auto* s = reinterpret_cast<const Scalar*>(values.data());
      const std::vector<std::int64_t> wide(s, s + n);
      io::write_rows(loc, name, rows, global_rows, std::span<const std::int64_t>(wide), kWidth);
    }
  }
  void read(hid_t loc, std::span<const std::int64_t> rows) override {
    values.resize(rows.size());
    auto* s = reinterpret_cast<Scalar*>(values.data());
    if constexpr (std::is_floating_point_v<Scalar>) {
      const std::vector<double> in = io::read_rows_double(loc, name, rows, kWidth);
      std::copy(in.begin(), in.end(), s);
    } else {
      const std::vector<std::int64_t> in = io::read_rows_int(loc, name, rows, kWidth);
      for (std::size_t k = 0; k < in.size(); ++k) s[k] = static_cast<Scalar>(in[k]);
    }
  }
};

template <class T>
std::vector<T>& DistributedItems::add_field(const std::string& name, bool checkpointed) {
  for (const auto& f : fields_)
    if (f->name == name) throw std::logic_error("items: field '" + name + "' registered twice");
  auto f = std::make_unique<Field<T>>();
  f->name = name;
  f->checkpointed = checkpointed;
  f->values.resize(size());
  std::vector<T>& values = f->values;
  fields_.push_back(std::move(f));
  return values;
}

template <class T>
std::vector<T>& DistributedItems::field(const std::string& name) {
  for (const auto& f : fields_)
    if (f->name == name) {
      if (f->type() != typeid(T)) throw std::logic_error("items: field '" + name + "' has another type");
      return static_cast<Field<T>&>(*f).values;
    }
  throw std::logic_error("items: no field '" + name + "'");
}

template <class... T>
void DistributedItems::forward(std::vector<T>&... fields) {
  static_assert((kBytewise<T> && ...), "fields travel as bytes");
  (fields.resize(size()), ...);
  const std::size_t bytes = (sizeof(T) + ... + 0);
  recvbuf_.resize(forward_.received() * bytes);
  forward_.run(
      messages_, kForwardTag, bytes,
      [&](const std::vector<std::int32_t>& list, std::byte* out) {
        ((out = pack::put(list, fields.data(), out)), ...);
      },
      recvbuf_.data(), sendbuf_);
  const std::byte* in = recvbuf_.data();
  for (int r : forward_.neighbours()) {
    const std::size_t n = forward_.received_from(r), first = owned_ + forward_.receive_offset(r);
    if (n > 0) ((in = pack::take(n, fields.data() + first, in)), ...);
  }
}

template <class... T>
void DistributedItems::reverse_add(std::vector<T>&... fields) {
  (fields.resize(size()), ...);
  const std::size_t bytes = (sizeof(T) + ... + 0);
  recvbuf_.resize(reverse_.received() * bytes);
  reverse_.run(
      messages_, kReverseTag, bytes,
      [&](const std::vector<std::int32_t>& list, std::byte* out) {
        ((out = pack::put(list, fields.data(), out)), ...);
      },
      recvbuf_.data(), sendbuf_);
  const std::byte* in = recvbuf_.data();
  const auto add = [&](const std::vector<std::int32_t>& list, auto* data) {
    using V = std::remove_pointer_t<decltype(data)>;
    for (std::int32_t i : list) {
      V value;
      std::memcpy(static_cast<void*>(&value), in, sizeof(V));
      data[i] += value;
      in += sizeof(V);
    }
  };
  // Our ghosts on rank r are, in order, the owned slots we send r forward.
  for (int r : reverse_.neighbours())
    if (reverse_.received_from(r) > 0) (add(forward_.sent_to(r), fields.data()), ...);
}

}  // namespace percussion::parallel
