// Scene files: JSON -> validated Scene. The format is documented key by key in docs/scenes.md and docs/bdem.md.
#include "percussion/core/scene.hpp"

#include <cctype>
#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "percussion/core/error.hpp"
#include "percussion/core/json_checker.hpp"

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

// A body names its material, or gives its index in "materials".
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

// "-name value -flag ...": a token starting with a dash and a letter names an option; the token after it is
// its value unless it names one too ("-1" is a value).
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

}  // namespace

Scene parse_scene_text(const std::string& text, const std::string& path) {
  const nlohmann::json doc = parse_json_text(text, path);
  const JsonChecker root(doc, path);
  root.expect_object({"description", "method", "integrator", "materials", "bodies", "bonds", "contact", "obstacles",
                      "boundary_conditions", "gravity", "time", "implicit", "output", "checkpoint"});
  Scene s;
  s.path = path;
  s.source = text;
  root.string_or("description", "");  // free text for humans; kept only as part of `source`
  s.method = root.choice("method", {"bdem"}, "method");
  s.integrator = root.choice_or("integrator", s.integrator, {"explicit", "implicit"}, "integrator");

  for (const JsonChecker& c : root.array("materials", 1)) {
    Material m = parse_material(c);
    for (std::size_t i = 0; i < s.materials.size(); ++i)
      if (s.materials[i].name == m.name)
        c.fail_at("name", "duplicate material name '" + m.name + "' (also /materials/" + std::to_string(i) + ")");
    s.materials.push_back(std::move(m));
  }
  for (const JsonChecker& c : root.array("bodies", 1)) s.bodies.push_back(parse_body(c, s.materials));

  if (const auto c = root.optional_object("bonds", {"tolerance", "shear_length_scaled", "full_angle_bending",
                                                    "tensile_only"})) {
    s.bonds.tolerance = c->number_or("tolerance", s.bonds.tolerance, Range::closed_open(0.0, 0.5));
    s.bonds.shear_length_scaled = c->boolean_or("shear_length_scaled", s.bonds.shear_length_scaled);
    s.bonds.full_angle_bending = c->boolean_or("full_angle_bending", s.bonds.full_angle_bending);
    s.bonds.tensile_only = c->boolean_or("tensile_only", s.bonds.tensile_only);
  }
  if (const auto c = root.optional_object("contact", {"stiffness", "skin"})) {
    s.contact.stiffness = c->number_or("stiffness", s.contact.stiffness, Range::non_negative());
    s.contact.skin = c->number_or("skin", s.contact.skin, Range::non_negative());
  }
  for (const JsonChecker& c : root.optional_array("obstacles")) s.obstacles.push_back(parse_obstacle(c));
  for (const JsonChecker& c : root.optional_array("boundary_conditions"))
    s.boundary_conditions.push_back(parse_boundary_condition(c));
  s.gravity = root.vector3_or("gravity", s.gravity);

  const JsonChecker time = root.object("time", {"end", "step", "step_factor"});
  s.time.end = time.number("end", Range::positive());
  if (const auto step = time.find("step")) s.time.step = step->as_number(Range::positive());
  s.time.step_factor = time.number_or("step_factor", s.time.step_factor, Range::open_closed(0.0, 1.0));

  if (const auto c = root.optional_object("implicit", {"form", "optimizer", "tolerance", "max_iterations",
                                                       "step_cuts", "split_above_iterations",
                                                       "merge_below_iterations", "step_factor", "hessian",
                                                       "fracture_rounds",
                                                       "fracture_cut_ratio", "fracture_integrator", "explicit_window",
                                                       "fracture_transient", "fracture_transient_reach",
                                                       "reuse_preconditioner",
                                                       "hessian_lag_contraction",
                                                       "line_search_extrapolation", "line_search_contacts",
                                                       "contact_refresh", "contact_normal",
                                                       "active_set_rounds", "petsc_options"})) {
    s.implicit.form = c->choice_or("form", s.implicit.form, {"backward_euler", "midpoint", "bdf2"}, "form");
    s.implicit.optimizer = c->choice_or("optimizer", s.implicit.optimizer, {"newton", "gradient"}, "optimizer");
    s.implicit.tolerance = c->number_or("tolerance", s.implicit.tolerance, Range::positive());
    s.implicit.max_iterations =
        static_cast<int>(c->integer_or("max_iterations", s.implicit.max_iterations, Range::closed(1, 100000)));
    s.implicit.step_cuts = static_cast<int>(c->integer_or("step_cuts", s.implicit.step_cuts, Range::closed(0, 20)));
    s.implicit.split_above_iterations =
        c->number_or("split_above_iterations", s.implicit.split_above_iterations, Range::closed(0.0, 1e6));
    s.implicit.merge_below_iterations =
        c->number_or("merge_below_iterations", s.implicit.merge_below_iterations, Range::closed(0.0, 1e6));
    if (s.implicit.split_above_iterations > 0 && s.implicit.merge_below_iterations > s.implicit.split_above_iterations)
      c->fail_at("merge_below_iterations", "must not exceed split_above_iterations (" +
                                               JsonChecker::format_number(s.implicit.split_above_iterations) +
                                               "), got " + JsonChecker::format_number(s.implicit.merge_below_iterations));
    s.implicit.step_factor = c->number_or("step_factor", s.implicit.step_factor, Range::positive());
    s.implicit.hessian = c->choice_or("hessian", s.implicit.hessian, {"projected", "exact", "gauss_newton"}, "hessian");
    s.implicit.fracture_rounds =
        static_cast<int>(c->integer_or("fracture_rounds", s.implicit.fracture_rounds, Range::closed(1, 1000)));
    double& cut_ratio = s.implicit.fracture_cut_ratio;
    cut_ratio = c->number_or("fracture_cut_ratio", cut_ratio, Range::non_negative());
    if (cut_ratio > 0 && cut_ratio <= 1)
      c->fail_at("fracture_cut_ratio", "must be 0 (off) or above 1 (a stress ratio at which bonds already break), "
                                       "got " + JsonChecker::format_number(cut_ratio));
    s.implicit.fracture_integrator = c->choice_or("fracture_integrator", s.implicit.fracture_integrator,
                                                  {"implicit", "explicit"}, "fracture_integrator");
    if (s.implicit.fracture_integrator == "explicit" && s.implicit.form == "midpoint")
      c->fail_at("fracture_integrator", "\"explicit\" needs the backward_euler or bdf2 form (the midpoint form's "
                                        "predictor needs the gradient at the last step's midpoint, which an explicit "
                                        "interval does not have)");
    s.implicit.explicit_window =
        static_cast<int>(c->integer_or("explicit_window", s.implicit.explicit_window, Range::closed(0, 1000000)));
    s.implicit.fracture_transient =
        c->number_or("fracture_transient", s.implicit.fracture_transient, Range::closed(0.0, 1e6));
    s.implicit.fracture_transient_reach =
        c->number_or("fracture_transient_reach", s.implicit.fracture_transient_reach, Range::closed(0.0, 1e6));
    s.implicit.reuse_preconditioner = c->boolean_or("reuse_preconditioner", s.implicit.reuse_preconditioner);
    s.implicit.hessian_lag_contraction =
        c->number_or("hessian_lag_contraction", s.implicit.hessian_lag_contraction, Range::closed_open(0.0, 1.0));
    s.implicit.line_search_extrapolation =
        c->boolean_or("line_search_extrapolation", s.implicit.line_search_extrapolation);
    s.implicit.line_search_contacts = c->boolean_or("line_search_contacts", s.implicit.line_search_contacts);
    s.implicit.contact_refresh = c->boolean_or("contact_refresh", s.implicit.contact_refresh);
    s.implicit.contact_normal =
        c->choice_or("contact_normal", s.implicit.contact_normal, {"predicted", "current"}, "contact_normal");
    s.implicit.active_set_rounds =
        static_cast<int>(c->integer_or("active_set_rounds", s.implicit.active_set_rounds, Range::closed(0, 10)));
    s.implicit.petsc_options = parse_petsc_options(*c, "petsc_options");
  }

  s.output.frame_interval = root.object("output", {"frame_interval"}).number("frame_interval", Range::positive());

  if (const auto c = root.optional_object("checkpoint", {"every_steps", "every_minutes", "keep"})) {
    s.checkpoint.every_steps = c->integer_or("every_steps", s.checkpoint.every_steps, Range::non_negative());
    s.checkpoint.every_minutes = c->number_or("every_minutes", s.checkpoint.every_minutes, Range::non_negative());
    s.checkpoint.keep = static_cast<int>(c->integer_or("keep", s.checkpoint.keep, Range::closed(1, INT_MAX)));
  }
  return s;
}

Scene parse_scene_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError(path + ": cannot read file (it does not exist)");
  if (std::filesystem::is_directory(path, ec)) throw InputError(path + ": cannot read file (it is a directory)");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in || in.bad()) throw InputError(path + ": cannot read file");
  return parse_scene_text(text.str(), path);
}

}  // namespace percussion
