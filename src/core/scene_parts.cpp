// Scene building blocks shared by methods: materials, shapes, bodies, obstacles, boundary regions.
#include "percussion/core/scene_parts.hpp"

#include <cctype>
#include <sstream>

#include "percussion/core/error.hpp"

namespace percussion {

namespace {

std::string format_vector(const Eigen::Vector3d& v) {
  std::string out = "[";  // appended piecewise: `"[" + std::string&&` trips a GCC 12 -Wrestrict false positive
  for (int i = 0; i < 3; ++i) out.append(i ? ", " : "").append(JsonChecker::format_number(v[i]));
  return out + "]";
}

// Reads "min" and "max" of `c` and checks that they span a box of positive size.
void read_box(const JsonChecker& c, Eigen::Vector3d& min, Eigen::Vector3d& max) {
  min = c.vector3("min");
  max = c.vector3("max");
  if (!(max.array() > min.array()).all())
    c.fail_at("max", "must exceed min in every component, got min " + format_vector(min) + ", max " +
                         format_vector(max));
}

}  // namespace

Material parse_material(const JsonChecker& c) {
  c.expect_object({"name", "density", "youngs_modulus", "poisson_ratio", "tensile_strength", "shear_strength",
                   "friction", "rolling_friction", "restitution"});
  Material m;
  m.name = c.string("name");
  if (m.name.empty()) c.fail_at("name", "must not be empty");
  m.density = c.number("density", Range::positive());
  m.youngs_modulus = c.number("youngs_modulus", Range::positive());
  m.poisson_ratio = c.number_or("poisson_ratio", m.poisson_ratio, Range::closed_open(0.0, 0.5));
  m.tensile_strength = c.number("tensile_strength", Range::positive());
  m.shear_strength = c.number_or("shear_strength", m.tensile_strength, Range::positive());
  m.friction = c.number_or("friction", m.friction, Range::non_negative());
  m.rolling_friction = c.number_or("rolling_friction", m.rolling_friction, Range::non_negative());
  m.restitution = c.number_or("restitution", m.restitution, Range::open_closed(0.0, 1.0));
  return m;
}

int resolve_material(const JsonChecker& c, const std::vector<Material>& materials) {
  const nlohmann::json& v = c.value();
  if (v.is_string()) {
    const std::string name = v.get<std::string>();
    std::string defined;
    for (std::size_t i = 0; i < materials.size(); ++i) {
      if (materials[i].name == name) return static_cast<int>(i);
      defined += (i ? ", " : "") + materials[i].name;
    }
    c.fail("unknown material '" + name + "' (defined: " + defined + ")");
  }
  if (v.is_number()) {
    const long index = c.as_integer(Range::non_negative());
    if (index >= static_cast<long>(materials.size()))
      c.fail("material index " + std::to_string(index) + " out of range (" + std::to_string(materials.size()) +
             " defined)");
    return static_cast<int>(index);
  }
  c.fail("expected a material name or index, got " + JsonChecker::describe(v));
}

Generator parse_shape(const JsonChecker& c) {
  Generator g;
  const std::string type = c.choice("type", {"box", "cylinder", "sphere", "woven"}, "shape type");
  if (type == "box") {
    c.expect_object({"type", "min", "max"});
    g.shape = Generator::Shape::Box;
    read_box(c, g.min, g.max);
  } else if (type == "cylinder") {
    c.expect_object({"type", "base", "axis", "radius", "height"});
    g.shape = Generator::Shape::Cylinder;
    g.center = c.vector3("base");
    g.axis = c.direction_or("axis", g.axis);
    g.radius = c.number("radius", Range::positive());
    g.height = c.number("height", Range::positive());
  } else if (type == "woven") {
    c.expect_object({"type", "min", "size", "spacing"});
    g.shape = Generator::Shape::Woven;
    g.min = c.vector3("min");
    const JsonChecker size = c.at("size");
    const std::vector<JsonChecker> lengths = size.as_array();
    if (lengths.size() != 2)
      size.fail("expected an array of 2 numbers, got " + JsonChecker::describe(size.value()));
    g.size = Eigen::Vector2d(lengths[0].as_number(Range::positive()), lengths[1].as_number(Range::positive()));
    g.spacing = c.number("spacing", Range::positive());  // >= 4 particle radii, checked when generated
  } else {
    c.expect_object({"type", "center", "radius"});
    g.shape = Generator::Shape::Sphere;
    g.center = c.vector3("center");
    g.radius = c.number("radius", Range::positive());
  }
  return g;
}

Body parse_body(const JsonChecker& c, const std::vector<Material>& materials) {
  c.expect_object({"material", "shape", "particle_radius", "bonded", "velocity", "angular_velocity"});
  Body b;
  b.material = resolve_material(c.at("material"), materials);
  b.generator = parse_shape(c.at("shape"));
  b.generator.particle_radius = c.number("particle_radius", Range::positive());
  b.bonded = c.boolean_or("bonded", b.bonded);
  b.velocity = c.vector3_or("velocity", b.velocity);
  b.angular_velocity = c.vector3_or("angular_velocity", b.angular_velocity);
  return b;
}

Obstacle parse_obstacle(const JsonChecker& c) {
  Obstacle o;
  const std::string type = c.choice("type", {"plane", "box"}, "obstacle type");
  if (type == "plane") {
    c.expect_object({"type", "point", "normal", "friction", "rolling_friction", "restitution"});
    o.kind = Obstacle::Kind::Plane;
    o.point = c.vector3("point");
    o.normal = c.direction("normal");
  } else {
    c.expect_object({"type", "min", "max", "friction", "rolling_friction", "restitution"});
    o.kind = Obstacle::Kind::Box;
    read_box(c, o.min, o.max);
  }
  o.friction = c.number_or("friction", o.friction, Range::non_negative());
  o.rolling_friction = c.number_or("rolling_friction", o.rolling_friction, Range::non_negative());
  o.restitution = c.number_or("restitution", o.restitution, Range::open_closed(0.0, 1.0));
  return o;
}

// A token starting with a dash and a letter names an option; the token after it is its value unless it names
// one too ("-1" is a value).
std::vector<std::pair<std::string, std::string>> parse_petsc_options(const JsonChecker& c, const std::string& key) {
  std::vector<std::pair<std::string, std::string>> options;
  std::istringstream in(c.string_or(key, ""));
  auto is_name = [](const std::string& t) { return t.size() > 1 && t[0] == '-' && std::isalpha(static_cast<unsigned char>(t[1])); };
  for (std::string token; in >> token;) {
    if (is_name(token)) {
      options.emplace_back(token, "");
      continue;
    }
    if (options.empty() || !options.back().second.empty())
      c.fail_at(key, "expected PETSc options such as \"-bdem_pc_type gamg\", but \"" + token + "\" follows no option name");
    options.back().second = token;
  }
  return options;
}

BoundaryCondition parse_boundary_condition(const JsonChecker& c) {
  c.expect_object({"region", "velocity", "angular_velocity", "center"});
  BoundaryCondition bc;
  read_box(c.object("region", {"min", "max"}), bc.min, bc.max);
  bc.velocity = c.vector3_or("velocity", bc.velocity);
  bc.angular_velocity = c.vector3_or("angular_velocity", bc.angular_velocity);
  bc.center = c.vector3_or("center", 0.5 * (bc.min + bc.max));
  return bc;
}

std::vector<Material> parse_materials(const JsonChecker& root) {
  std::vector<Material> materials;
  for (const JsonChecker& c : root.array("materials", 1)) {
    Material m = parse_material(c);
    for (std::size_t i = 0; i < materials.size(); ++i)
      if (materials[i].name == m.name)
        c.fail_at("name", "duplicate material name '" + m.name + "' (also /materials/" + std::to_string(i) + ")");
    materials.push_back(std::move(m));
  }
  return materials;
}

}  // namespace percussion
