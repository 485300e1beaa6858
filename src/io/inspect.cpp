#include "percussion/io/inspect.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <sstream>
#include <tuple>
#include <utility>
#include <vector>

#include "percussion/core/error.hpp"
#include "percussion/io/h5file.hpp"
#include "percussion/io/trajectory.hpp"

namespace percussion::io {
namespace {

std::string join_path(const std::string& parent, const std::string& name) {
  return parent == "/" ? "/" + name : parent + "/" + name;
}

std::string shape_text(hid_t space) {
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank <= 0) return "";
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  std::string text = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) text += ',';
    text += std::to_string(dims[i]);
  }
  return text + "]";
}

std::string type_text(hid_t type) {
  const std::size_t bits = H5Tget_size(type) * 8;
  switch (H5Tget_class(type)) {
    case H5T_FLOAT:
      return "float" + std::to_string(bits);
    case H5T_INTEGER:
      return (H5Tget_sign(type) == H5T_SGN_NONE ? "uint" : "int") + std::to_string(bits);
    case H5T_STRING:
      return H5Tis_variable_str(type) > 0 ? "string" : "string(" + std::to_string(bits / 8) + " bytes)";
    case H5T_COMPOUND:
      return "compound";
    case H5T_ENUM:
      return "enum";
    default:
      return "other";
  }
}

std::string shorten(std::string text) {
  constexpr std::size_t kMax = 80;
  for (char& c : text)
    if (c == '\n' || c == '\t') c = ' ';
  if (text.size() > kMax) text = text.substr(0, kMax) + "...";
  return text;
}

std::string attribute_text(hid_t obj, const std::string& name) {
  H5Handle attr(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose);
  if (!attr.valid()) return "(unreadable)";
  H5Handle type(H5Aget_type(attr.id()), H5Tclose);
  H5Handle space(H5Aget_space(attr.id()), H5Sclose);
  const bool scalar = H5Sget_simple_extent_npoints(space.id()) == 1;
  const H5T_class_t klass = H5Tget_class(type.id());
  std::ostringstream out;
  out.precision(17);
  if (klass == H5T_STRING && scalar) {
    out << '"' << shorten(read_attribute_string(obj, name)) << '"';
  } else if (klass == H5T_INTEGER && scalar) {
    out << read_attribute_int(obj, name);
  } else if (klass == H5T_FLOAT && scalar) {
    out << read_attribute_double(obj, name);
  } else {
    out << type_text(type.id()) << shape_text(space.id());
  }
  return out.str();
}

void print_attributes(hid_t obj, const std::string& indent, std::ostream& out) {
  for (const std::string& name : attribute_names(obj))
    out << indent << "@" << name << " = " << attribute_text(obj, name) << "\n";
}

void print_tree(hid_t file, const std::string& path, const std::string& indent, std::ostream& out) {
  const std::vector<std::string> names = members(file, path);
  const bool frames = path == "/frames";
  for (std::size_t i = 0; i < names.size(); ++i) {
    // Frame groups all look alike: show the first and the last.
    if (frames && names.size() > 2 && i == 1) {
      out << indent << "... (" << names.size() - 2 << " more frame groups)\n";
      i = names.size() - 2;
      continue;
    }
    const std::string child = join_path(path, names[i]);
    H5Handle obj(H5Oopen(file, child.c_str(), H5P_DEFAULT), H5Oclose);
    if (!obj.valid()) {
      out << indent << names[i] << "  (dangling link)\n";
      continue;
    }
    switch (H5Iget_type(obj.id())) {
      case H5I_GROUP:
        out << indent << names[i] << "/\n";
        print_attributes(obj.id(), indent + "    ", out);
        print_tree(file, child, indent + "  ", out);
        break;
      case H5I_DATASET: {
        H5Handle type(H5Dget_type(obj.id()), H5Tclose);
        H5Handle space(H5Dget_space(obj.id()), H5Sclose);
        out << indent << names[i] << "  " << type_text(type.id()) << shape_text(space.id()) << "\n";
        print_attributes(obj.id(), indent + "    ", out);
        break;
      }
      default:
        out << indent << names[i] << "  (named datatype)\n";
    }
  }
}

std::vector<std::string> frame_names(hid_t file) {
  std::vector<std::string> names;
  if (!exists(file, "frames")) return names;
  for (const std::string& name : members(file, "frames"))
    if (is_frame_name(name)) names.push_back(name);
  std::sort(names.begin(), names.end(),
            [](const std::string& a, const std::string& b) { return std::stol(a) < std::stol(b); });
  return names;
}

void print_trajectory_summary(hid_t file, std::ostream& out) {
  if (has_attribute(file, "particles")) out << "  particles: " << read_attribute_int(file, "particles") << "\n";
  if (has_attribute(file, "mesh_vertices"))
    out << "  mesh: " << read_attribute_int(file, "mesh_vertices") << " vertices, "
        << read_attribute_int(file, "mesh_elements") << " elements of "
        << read_attribute_int(file, "mesh_nodes_per_element") << " nodes\n";
  if (has_attribute(file, "bodies"))
    out << "  bodies: " << read_attribute_int(file, "bodies") << " (" << read_attribute_int(file, "shapes")
        << " shapes)\n";
  const std::vector<std::string> frames = frame_names(file);
  out << "  frames: " << frames.size();
  if (frames.empty() || !exists(file, "observables/step")) {
    out << "\n";
    return;
  }
  const std::vector<std::int64_t> steps = read_all_int(file, "observables/step");
  const std::vector<double> times = read_all_double(file, "observables/time");
  if (steps.empty() || times.size() != steps.size()) {
    out << "\n";
    return;
  }
  out << " (steps " << steps.front() << " .. " << steps.back() << ", time " << times.front() << " .. "
      << times.back() << ")\n";
  const std::size_t last = steps.size() - 1;
  out << "  last observables (step " << steps[last] << ", time " << times[last] << "):\n";
  // Whatever the method reported, by name (counts without decimals), then the effort rows; a table without a row
  // for the last frame (effort rows a trajectory stopped writing) is left out.
  auto print_row = [&](const std::string& name) {
    const std::string full = "observables/" + name;
    int width = 1;
    std::ostringstream value;
    value.precision(out.precision());
    if (holds_integers(file, full)) {
      const std::vector<std::int64_t> v = read_all_int(file, full, &width);
      if (v.size() < (last + 1) * static_cast<std::size_t>(width)) return;
      for (int c = 0; c < width; ++c) value << (c ? ", " : "") << v[last * static_cast<std::size_t>(width) + c];
    } else {
      const std::vector<double> v = read_all_double(file, full, &width);
      if (v.size() < (last + 1) * static_cast<std::size_t>(width)) return;
      for (int c = 0; c < width; ++c) value << (c ? ", " : "") << v[last * static_cast<std::size_t>(width) + c];
    }
    out << "    " << name << " = " << (width > 1 ? "(" : "") << value.str() << (width > 1 ? ")" : "") << "\n";
  };
  const std::vector<std::string> effort{"wall_seconds", "newton_iterations", "krylov_iterations"};
  for (const std::string& name : members(file, "observables"))
    if (name != "step" && name != "time" && std::find(effort.begin(), effort.end(), name) == effort.end())
      print_row(name);
  for (const std::string& name : effort)
    if (exists(file, "observables/" + name)) print_row(name);
  const std::string last_frame = "frames/" + frames.back();
  if (exists(file, last_frame + "/bonds"))
    out << "  intact bonds in the last frame: " << shape(file, last_frame + "/bonds").at(0) << "\n";
}

// One kind's rows of the last frame.
struct KindRows {
  std::string kind;
  std::vector<double> position, velocity, quaternion;
};

struct LastFrame {
  long step = 0;
  std::vector<KindRows> kinds;
  std::vector<std::int64_t> bonds;
};

std::vector<double> read_width(hid_t group, const std::string& name, int width, const std::string& path) {
  int got = 0;
  std::vector<double> v = read_all_double(group, name, &got);
  if (got != width)
    throw InputError(path + ": " + name + " has " + std::to_string(got) + " components, expected " +
                     std::to_string(width));
  return v;
}

LastFrame read_last_frame(const std::string& path) {
  H5File file = H5File::open_read(MPI_COMM_SELF, path);
  const std::vector<std::string> frames = frame_names(file.id());
  if (frames.empty()) throw InputError(path + ": not a trajectory with frames");
  H5Group group = H5Group::open(file.id(), "frames/" + frames.back());
  LastFrame f;
  f.step = static_cast<long>(read_attribute_int(group.id(), "step"));
  // Particles are stored in the frame itself, the other kinds in their subgroups.
  for (const auto& [kind, sub, rotates] : {std::tuple{"particles", "", true}, std::tuple{"mesh", "mesh/", false},
                                           std::tuple{"bodies", "bodies/", true}}) {
    if (!exists(group.id(), std::string(sub) + "position")) continue;
    KindRows k{kind, read_width(group.id(), std::string(sub) + "position", 3, path),
               read_width(group.id(), std::string(sub) + "velocity", 3, path), {}};
    if (rotates) k.quaternion = read_width(group.id(), std::string(sub) + "quaternion", 4, path);
    f.kinds.push_back(std::move(k));
  }
  if (f.kinds.empty()) throw InputError(path + ": the last frame holds no particles, mesh or bodies");
  if (exists(group.id(), "bonds")) f.bonds = read_all_int(group.id(), "bonds");
  return f;
}

// max_i |a_i - b_i| / max_i |a_i| over rows of `width`; with `sign_free`, b_i and -b_i are equal.
double max_relative(const std::vector<double>& a, const std::vector<double>& b, std::size_t width,
                    bool sign_free) {
  double diff_max = 0.0;
  double ref_max = 0.0;
  for (std::size_t i = 0; i + width <= a.size(); i += width) {
    double ref = 0.0, minus = 0.0, plus = 0.0;
    for (std::size_t c = 0; c < width; ++c) {
      ref += a[i + c] * a[i + c];
      minus += (a[i + c] - b[i + c]) * (a[i + c] - b[i + c]);
      plus += (a[i + c] + b[i + c]) * (a[i + c] + b[i + c]);
    }
    diff_max = std::max(diff_max, std::sqrt(sign_free ? std::min(minus, plus) : minus));
    ref_max = std::max(ref_max, std::sqrt(ref));
  }
  return ref_max > 0.0 ? diff_max / ref_max : diff_max;
}

std::vector<std::pair<std::int64_t, std::int64_t>> bond_set(const std::vector<std::int64_t>& bonds) {
  std::vector<std::pair<std::int64_t, std::int64_t>> set;
  for (std::size_t k = 0; k + 1 < bonds.size(); k += 2)
    set.emplace_back(std::min(bonds[k], bonds[k + 1]), std::max(bonds[k], bonds[k + 1]));
  std::sort(set.begin(), set.end());
  return set;
}

}  // namespace

void print_info(const std::string& path, std::ostream& out) {
  H5File file = H5File::open_read(MPI_COMM_SELF, path);
  const hid_t root = file.id();
  const std::string kind = has_attribute(root, "kind") ? read_attribute_string(root, "kind") : "";
  if (kind == "trajectory") {
    out << path << ": Percussion trajectory\n";
    print_trajectory_summary(root, out);
  } else if (kind == "checkpoint") {
    out << path << ": Percussion checkpoint\n";
    for (const std::string& name : attribute_names(root))
      if (name != "kind") out << "  " << name << ": " << attribute_text(root, name) << "\n";
  } else {
    out << path << ": HDF5 file (no Percussion kind attribute)\n";
  }
  out << "contents:\n/\n";
  print_attributes(root, "    ", out);
  print_tree(root, "/", "  ", out);
}

CompareResult compare_last_frames(const std::string& a, const std::string& b) {
  const LastFrame fa = read_last_frame(a);
  const LastFrame fb = read_last_frame(b);
  CompareResult r;
  r.step_a = fa.step;
  r.step_b = fb.step;
  auto describe = [](const LastFrame& f) {
    std::string s;
    for (const KindRows& k : f.kinds) s += (s.empty() ? "" : ", ") + std::to_string(k.position.size() / 3) + " " + k.kind;
    return s;
  };
  bool same_shape = fa.kinds.size() == fb.kinds.size();
  for (std::size_t i = 0; same_shape && i < fa.kinds.size(); ++i)
    same_shape = fa.kinds[i].kind == fb.kinds[i].kind && fa.kinds[i].position.size() == fb.kinds[i].position.size();
  if (!same_shape) throw InputError(a + " and " + b + ": different contents (" + describe(fa) + " vs " + describe(fb) + ")");
  for (std::size_t i = 0; i < fa.kinds.size(); ++i) {
    const KindRows &ka = fa.kinds[i], &kb = fb.kinds[i];
    KindDifference d{ka.kind, static_cast<std::int64_t>(ka.position.size() / 3),
                     max_relative(ka.position, kb.position, 3, false), max_relative(ka.velocity, kb.velocity, 3, false)};
    if (!ka.quaternion.empty()) d.quaternion = max_relative(ka.quaternion, kb.quaternion, 4, true);
    r.max_rel_position = std::max(r.max_rel_position, d.position);
    r.max_rel_velocity = std::max(r.max_rel_velocity, d.velocity);
    r.max_rel_quaternion = std::max(r.max_rel_quaternion, d.quaternion);
    r.kinds.push_back(d);
  }
  const auto set_a = bond_set(fa.bonds);
  const auto set_b = bond_set(fb.bonds);
  r.bonds_a = static_cast<std::int64_t>(set_a.size());
  r.bonds_b = static_cast<std::int64_t>(set_b.size());
  std::vector<std::pair<std::int64_t, std::int64_t>> only;
  std::set_symmetric_difference(set_a.begin(), set_a.end(), set_b.begin(), set_b.end(),
                                std::back_inserter(only));
  r.bonds_only_in_one = static_cast<std::int64_t>(only.size());
  return r;
}

}  // namespace percussion::io
