#pragma once
// Helpers shared by the io tests: ranks, a scratch directory every rank agrees on, a synthetic particle system
// written by interleaved owners, and a minimal XML reader to check the .xdmf files.
#include <gtest/gtest.h>
#include <mpi.h>
#include <stdlib.h>

#include <array>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "percussion/core/error.hpp"
#include "percussion/io/h5file.hpp"
#include "percussion/io/trajectory.hpp"
#include "mpi_world.hpp"

namespace percussion::test {

namespace fs = std::filesystem;
using namespace percussion::io;

// A fresh directory per test: rank 0 makes it, everyone gets its name, rank 0 removes it.
class TempDir {
 public:
  TempDir() {
    char name[64] = "/tmp/percussion_io_XXXXXX";
    if (world_rank() == 0 && mkdtemp(name) == nullptr) std::abort();
    MPI_Bcast(name, sizeof(name), MPI_CHAR, 0, MPI_COMM_WORLD);
    path_ = name;
  }
  ~TempDir() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) fs::remove_all(path_);
  }
  std::string operator/(const std::string& name) const { return (fs::path(path_) / name).string(); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Rows owned by this rank when ownership is interleaved (gid % size), the worst case for selections.
inline std::vector<std::int64_t> interleaved_rows(std::int64_t n) {
  std::vector<std::int64_t> rows;
  for (std::int64_t g = world_rank(); g < n; g += world_size()) rows.push_back(g);
  return rows;
}

inline double field_value(std::int64_t g, int c, int frame) { return 0.5 * g + 0.125 * c - 3.0 * frame + 0.0625; }

template <class F>
bool throws_input_error_naming(F&& f, const std::string& text) {
  try {
    f();
  } catch (const percussion::InputError& e) {
    return std::string(e.what()).find(text) != std::string::npos;
  }
  return false;
}


// ---------------------------------------------------------------------------------------------
// One frame of a synthetic N-particle system; rank-local fields for interleaved ownership.
struct SyntheticFrame {
  std::vector<std::int64_t> id, bonds;
  std::vector<double> position, quaternion, velocity, angular_velocity, radius;
  FrameFields fields() const {
    return {id, position, quaternion, velocity, angular_velocity, radius, bonds};
  }
};

// Bonds (g, g+1) for g < n-1, plus (g, g+2) for even g; frame 1 loses every bond with g % 5 == 0.
inline bool bond_intact(std::int64_t g, int frame) { return frame == 0 || g % 5 != 0; }

inline SyntheticFrame make_frame(std::int64_t n, int frame) {
  SyntheticFrame f;
  f.id = interleaved_rows(n);
  for (std::int64_t g : f.id) {
    for (int c = 0; c < 3; ++c) {
      f.position.push_back(field_value(g, c, frame));
      f.velocity.push_back(field_value(g, c, frame) * 0.5 + 1);
      f.angular_velocity.push_back(-field_value(g, c, frame));
    }
    const double a = 0.01 * g + 0.1 * frame;
    const std::array<double, 4> q{std::sin(a) * 0.6, std::sin(a) * 0.8, 0.0, std::cos(a)};
    f.quaternion.insert(f.quaternion.end(), q.begin(), q.end());
    f.radius.push_back(0.01 + 1e-4 * g);
    if (g + 1 < n && bond_intact(g, frame)) f.bonds.insert(f.bonds.end(), {g, g + 1});
    if (g % 2 == 0 && g + 2 < n && bond_intact(g, frame)) f.bonds.insert(f.bonds.end(), {g, g + 2});
  }
  return f;
}

inline std::set<std::pair<std::int64_t, std::int64_t>> expected_bonds(std::int64_t n, int frame) {
  std::set<std::pair<std::int64_t, std::int64_t>> s;
  for (std::int64_t g = 0; g < n; ++g) {
    if (g + 1 < n && bond_intact(g, frame)) s.insert({g, g + 1});
    if (g % 2 == 0 && g + 2 < n && bond_intact(g, frame)) s.insert({g, g + 2});
  }
  return s;
}

// A particle method's observables, as the bonded DEM reports them (bonds_broken and contacts as counts).
struct FrameObservables {
  long step = 0;
  double time = 0.0;
  double kinetic = 0.0;
  double potential = 0.0;
  double total = 0.0;
  std::array<double, 3> momentum{};
  std::array<double, 3> angular_momentum{};
  long bonds_broken = 0;
  long contacts = 0;
};

inline void write_fixed(TrajectoryWriter& w, const FrameObservables& o, const FrameFields& fields) {
  ObservableSet set;
  set.set("kinetic", o.kinetic);
  set.set("potential", o.potential);
  set.set("total", o.total);
  set.set("momentum", o.momentum);
  set.set("angular_momentum", o.angular_momentum);
  set.set_count("bonds_broken", o.bonds_broken);
  set.set_count("contacts", o.contacts);
  FrameContent content;
  content.particles = &fields;
  w.write_frame(o.step, o.time, set, content);
}

inline FrameObservables make_observables(long step, int frame) {
  FrameObservables o;
  o.step = step;
  o.time = 1e-3 * step;
  o.kinetic = 1.25 + frame;
  o.potential = -0.5 * frame;
  o.total = o.kinetic + o.potential;
  o.momentum = {0.1 * frame, 0.2, 0.3};
  o.angular_momentum = {-1.0, 0.0, 2.0 * frame};
  o.bonds_broken = 3 * frame;
  o.contacts = 11 + frame;
  return o;
}

// Frame group `index` holds make_frame(n, frame) written by interleaved owners.
inline void check_frame(hid_t file, int index, int frame, std::int64_t n) {
  const std::string g = "frames/" + TrajectoryWriter::frame_name(index);
  H5Group group = H5Group::open(file, g);
  int c = 0;
  const std::vector<double> pos = read_all_double(group.id(), "position", &c);
  ASSERT_EQ(c, 3);
  const std::vector<double> vel = read_all_double(group.id(), "velocity");
  const std::vector<double> omega = read_all_double(group.id(), "angular_velocity");
  const std::vector<double> quat = read_all_double(group.id(), "quaternion", &c);
  ASSERT_EQ(c, 4);
  const std::vector<double> radius = read_all_double(group.id(), "radius");
  const std::vector<std::int64_t> id = read_all_int(group.id(), "id");
  ASSERT_EQ(pos.size(), static_cast<std::size_t>(3 * n));
  ASSERT_EQ(id.size(), static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(id[i], i);
    for (int k = 0; k < 3; ++k) {
      ASSERT_EQ(pos[3 * i + k], field_value(i, k, frame));
      ASSERT_EQ(vel[3 * i + k], field_value(i, k, frame) * 0.5 + 1);
      ASSERT_EQ(omega[3 * i + k], -field_value(i, k, frame));
    }
    const double a = 0.01 * i + 0.1 * frame;
    ASSERT_EQ(quat[4 * i + 0], std::sin(a) * 0.6);
    ASSERT_EQ(quat[4 * i + 3], std::cos(a));
    ASSERT_EQ(radius[i], 0.01 + 1e-4 * i);
  }
  const std::vector<std::int64_t> bonds = read_all_int(group.id(), "bonds", &c);
  ASSERT_EQ(c, 2);
  std::set<std::pair<std::int64_t, std::int64_t>> got;
  for (std::size_t k = 0; k < bonds.size(); k += 2) got.insert({bonds[k], bonds[k + 1]});
  EXPECT_EQ(got.size(), bonds.size() / 2);  // no duplicates
  EXPECT_EQ(got, expected_bonds(n, frame));
}


// ----- a minimal XML reader, enough to check the .xdmf is well formed and says the right things
struct XmlNode {
  std::string name;
  std::map<std::string, std::string> attributes;
  std::vector<XmlNode> children;
  std::string text;
};

class XmlReader {
 public:
  explicit XmlReader(std::string text) : s_(std::move(text)) {}
  XmlNode document() {
    skip_prolog();
    XmlNode root = element();
    skip_space();
    if (pos_ != s_.size()) throw std::runtime_error("content after the root element");
    return root;
  }

 private:
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  void skip_prolog() {
    for (;;) {
      skip_space();
      if (s_.compare(pos_, 2, "<?") == 0) {
        pos_ = s_.find("?>", pos_);
        if (pos_ == std::string::npos) throw std::runtime_error("unterminated <?");
        pos_ += 2;
      } else if (s_.compare(pos_, 2, "<!") == 0) {
        pos_ = s_.find('>', pos_);
        if (pos_ == std::string::npos) throw std::runtime_error("unterminated <!");
        pos_ += 1;
      } else {
        return;
      }
    }
  }
  std::string name() {
    const std::size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    if (pos_ == start) throw std::runtime_error("expected a name at " + std::to_string(pos_));
    return s_.substr(start, pos_ - start);
  }
  XmlNode element() {
    if (s_[pos_] != '<') throw std::runtime_error("expected <");
    ++pos_;
    XmlNode node;
    node.name = name();
    for (;;) {
      skip_space();
      if (s_.compare(pos_, 2, "/>") == 0) {
        pos_ += 2;
        return node;
      }
      if (s_[pos_] == '>') {
        ++pos_;
        break;
      }
      const std::string key = name();
      if (s_[pos_] != '=' || s_[pos_ + 1] != '"') throw std::runtime_error("bad attribute " + key);
      const std::size_t end = s_.find('"', pos_ + 2);
      if (!node.attributes.emplace(key, s_.substr(pos_ + 2, end - pos_ - 2)).second)
        throw std::runtime_error("duplicate attribute " + key);
      pos_ = end + 1;
    }
    for (;;) {
      const std::size_t lt = s_.find('<', pos_);
      if (lt == std::string::npos) throw std::runtime_error("unclosed <" + node.name + ">");
      node.text += s_.substr(pos_, lt - pos_);
      pos_ = lt;
      if (s_.compare(pos_, 2, "</") == 0) {
        pos_ += 2;
        if (name() != node.name || s_[pos_] != '>') throw std::runtime_error("mismatched </" + node.name + ">");
        ++pos_;
        node.text.erase(0, node.text.find_first_not_of(" \n"));
        node.text.erase(node.text.find_last_not_of(" \n") + 1);
        return node;
      }
      node.children.push_back(element());
    }
  }
  std::string s_;
  std::size_t pos_ = 0;
};

inline std::vector<const XmlNode*> children_named(const XmlNode& node, const std::string& name) {
  std::vector<const XmlNode*> out;
  for (const XmlNode& c : node.children)
    if (c.name == name) out.push_back(&c);
  return out;
}

// Every DataItem names an existing dataset of trajectory.h5 whose shape equals its Dimensions.
inline void check_data_items(const XmlNode& node, hid_t file, int* count) {
  if (node.name == "DataItem") {
    ++*count;
    EXPECT_EQ(node.attributes.at("Format"), "HDF");
    const std::string prefix = "trajectory.h5:";
    ASSERT_EQ(node.text.compare(0, prefix.size(), prefix), 0) << node.text;
    const std::string dataset = node.text.substr(prefix.size());
    ASSERT_TRUE(exists(file, dataset)) << dataset;
    std::string dims;
    for (std::int64_t d : shape(file, dataset)) dims += (dims.empty() ? "" : " ") + std::to_string(d);
    EXPECT_EQ(node.attributes.at("Dimensions"), dims) << dataset;
  }
  for (const XmlNode& c : node.children) check_data_items(c, file, count);
}

}  // namespace percussion::test
