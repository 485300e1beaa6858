// A trajectory's named observables: /observables/<name>, one row per frame, the same names in every frame. Rank 0's
// list is taken and checked on every rank before a frame writes anything, so a bad frame throws everywhere alike.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "percussion/core/error.hpp"
#include "percussion/io/h5file.hpp"
#include "percussion/io/trajectory.hpp"

namespace percussion::io {
namespace {

// Columns of /observables that the writer fills itself.
constexpr const char* kReserved[] = {"step", "time", "wall_seconds", "newton_iterations", "krylov_iterations"};

bool reserved(const std::string& name) {
  return std::any_of(std::begin(kReserved), std::end(kReserved), [&](const char* r) { return name == r; });
}

// Rank 0's observables on every rank: names, kinds and values packed into one buffer.
std::vector<Observable> broadcast(MPI_Comm comm, std::span<const Observable> local) {
  std::vector<char> buffer;
  auto put = [&](const void* p, std::size_t n) {
    const char* c = static_cast<const char*>(p);
    buffer.insert(buffer.end(), c, c + n);
  };
  for (const Observable& o : local) {
    const std::uint64_t sizes[2] = {o.name.size(), o.value.size()};
    put(sizes, sizeof(sizes));
    put(o.name.data(), o.name.size());
    const char integer = o.integer ? 1 : 0;
    put(&integer, 1);
    put(o.value.data(), o.value.size() * sizeof(double));
  }
  std::uint64_t bytes = buffer.size();
  MPI_Bcast(&bytes, 1, MPI_UINT64_T, 0, comm);
  buffer.resize(bytes);
  MPI_Bcast(buffer.data(), static_cast<int>(bytes), MPI_CHAR, 0, comm);

  std::vector<Observable> out;
  std::size_t at = 0;
  auto get = [&](void* p, std::size_t n) {
    std::memcpy(p, buffer.data() + at, n);
    at += n;
  };
  while (at < buffer.size()) {
    std::uint64_t sizes[2];
    get(sizes, sizeof(sizes));
    Observable o;
    o.name.resize(sizes[0]);
    get(o.name.data(), sizes[0]);
    char integer = 0;
    get(&integer, 1);
    o.integer = integer != 0;
    o.value.resize(sizes[1]);
    get(o.value.data(), sizes[1] * sizeof(double));
    out.push_back(std::move(o));
  }
  return out;
}

std::string kind_text(int width, bool integer) {
  return std::string(integer ? "count" : "float") + (width == 1 ? " scalar" : " vector of " + std::to_string(width));
}

}  // namespace

std::vector<Observable> TrajectoryWriter::agreed_observables(long step, std::span<const Observable> local) {
  std::vector<Observable> values = broadcast(comm_, local);
  const std::string where = h5_path_ + ": frame at step " + std::to_string(step) + ": ";
  std::vector<Column> seen;
  for (const Observable& o : values) {
    if (o.name.empty() || o.name.find('/') != std::string::npos || o.name == "." || o.name == "..")
      throw std::invalid_argument(where + "observable name \"" + o.name + "\" is not usable as a dataset name");
    if (reserved(o.name))
      throw std::invalid_argument(where + "observable name \"" + o.name + "\" is reserved for the writer's own rows");
    if (o.value.size() != 1 && o.value.size() != 3)
      throw std::invalid_argument(where + "observable \"" + o.name + "\" has " + std::to_string(o.value.size()) +
                                  " numbers (1 for a scalar, 3 for a vector)");
    if (o.integer)
      for (double v : o.value)
        if (!std::isfinite(v) || v != std::round(v))
          throw std::invalid_argument(where + "count \"" + o.name + "\" is not an integer");
    seen.push_back({o.name, static_cast<int>(o.value.size()), o.integer});
  }
  std::sort(seen.begin(), seen.end(), [](const Column& a, const Column& b) { return a.name < b.name; });
  for (std::size_t i = 1; i < seen.size(); ++i)
    if (seen[i].name == seen[i - 1].name)
      throw std::invalid_argument(where + "observable \"" + seen[i].name + "\" is reported twice");
  if (!columns_fixed_) return values;

  // The names must be those of the earlier frames (or of the file being continued), each of the same kind.
  auto names = [](const std::vector<Column>& c) {
    std::string text;
    for (const Column& x : c) text += (text.empty() ? "" : ", ") + x.name;
    return text.empty() ? std::string("none") : text;
  };
  const std::string origin = columns_from_file_ ? "the trajectory being continued has" : "earlier frames have";
  for (const Column& c : columns_) {
    const auto it = std::find_if(seen.begin(), seen.end(), [&](const Column& s) { return s.name == c.name; });
    if (it == seen.end())
      throw std::invalid_argument(where + "observable \"" + c.name + "\" is missing (" + origin + ": " +
                                  names(columns_) + "; this frame has: " + names(seen) + ")");
    if (it->width != c.width || it->integer != c.integer)
      throw std::invalid_argument(where + "observable \"" + c.name + "\" is a " + kind_text(it->width, it->integer) +
                                  ", " + origin + " a " + kind_text(c.width, c.integer));
  }
  for (const Column& s : seen)
    if (std::none_of(columns_.begin(), columns_.end(), [&](const Column& c) { return c.name == s.name; }))
      throw std::invalid_argument(where + "observable \"" + s.name + "\" is new (" + origin + ": " +
                                  names(columns_) + "; a trajectory's observables are those of its first frame)");
  return values;
}

void TrajectoryWriter::load_columns(hid_t observables) {
  columns_.clear();
  columns_fixed_ = !frames_.empty();
  columns_from_file_ = columns_fixed_;
  for (const std::string& name : members(file_.id(), "observables"))
    if (!reserved(name)) {
      const std::vector<std::int64_t> dims = shape(observables, name);
      columns_.push_back({name, dims.size() > 1 ? static_cast<int>(dims[1]) : 1, holds_integers(observables, name)});
    }
  std::sort(columns_.begin(), columns_.end(), [](const Column& a, const Column& b) { return a.name < b.name; });
}

void TrajectoryWriter::append_observables(hid_t observables, const std::vector<Observable>& values) {
  if (!columns_fixed_) {
    // The first frame fixes the names; tables of another name left (empty) by a trimmed file go.
    for (const Column& c : columns_)
      if (std::none_of(values.begin(), values.end(), [&](const Observable& o) { return o.name == c.name; }))
        remove(observables, c.name);
    columns_.clear();
    for (const Observable& o : values) columns_.push_back({o.name, static_cast<int>(o.value.size()), o.integer});
    std::sort(columns_.begin(), columns_.end(), [](const Column& a, const Column& b) { return a.name < b.name; });
    columns_fixed_ = true;
    columns_from_file_ = false;
  }
  for (const Observable& o : values) {
    if (o.integer) {
      std::vector<std::int64_t> row;
      for (double v : o.value) row.push_back(std::llround(v));
      append_row(observables, o.name, row);
    } else {
      append_row(observables, o.name, std::span<const double>(o.value));
    }
  }
}

}  // namespace percussion::io
