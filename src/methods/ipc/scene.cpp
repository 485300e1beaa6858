// Reading and checking an IPC scene.
#include "percussion/methods/ipc/scene.hpp"

#include <cmath>
#include <filesystem>

#include "percussion/core/error.hpp"
#include "percussion/core/json_checker.hpp"

namespace percussion::ipc {

double ElasticMaterial::lame_lambda() const {
  return youngs_modulus * poisson_ratio / ((1.0 + poisson_ratio) * (1.0 - 2.0 * poisson_ratio));
}
double ElasticMaterial::lame_mu() const { return youngs_modulus / (2.0 * (1.0 + poisson_ratio)); }

namespace {

void read_region(const JsonChecker& c, int dim, Eigen::Vector3d& min, Eigen::Vector3d& max) {
  const JsonChecker r = c.object("region", {"min", "max"});
  min = r.vector("min", dim);
  max = r.vector("max", dim);
  for (int i = 0; i < dim; ++i)
    if (!(max[i] > min[i])) r.fail_at("max", "must exceed min in every component");
}

ElasticMaterial parse_elastic_material(const JsonChecker& c) {
  c.expect_object({"name", "model", "density", "youngs_modulus", "poisson_ratio", "damping"});
  ElasticMaterial m;
  m.name = c.string("name");
  if (m.name.empty()) c.fail_at("name", "must not be empty");
  m.model = c.choice_or("model", m.model, {"neo_hookean", "linear"}, "material model");
  m.density = c.number("density", Range::positive());
  m.youngs_modulus = c.number("youngs_modulus", Range::positive());
  m.poisson_ratio = c.number_or("poisson_ratio", m.poisson_ratio, Range{-1.0, 0.5, true, true});
  if (const auto d = c.optional_object("damping", {"shear", "bulk"})) {
    m.shear_damping = d->number_or("shear", 0.0, Range::non_negative());
    m.bulk_damping = d->number_or("bulk", 0.0, Range::non_negative());
  }
  return m;
}

int material_index(const JsonChecker& c, const std::vector<ElasticMaterial>& materials) {
  const std::string name = c.as_string();
  std::string defined;
  for (std::size_t i = 0; i < materials.size(); ++i) {
    if (materials[i].name == name) return static_cast<int>(i);
    defined += (i ? ", " : "") + materials[i].name;
  }
  c.fail("unknown material '" + name + "' (defined: " + defined + ")");
}

MeshSpec parse_mesh(const JsonChecker& c, int dim, const std::string& scene_path) {
  MeshSpec m;
  const std::string type = c.choice("type", {"box", "disk", "ball", "file"}, "mesh type");
  if (type == "file") {
    c.expect_object({"type", "path", "translation", "scale"});
    m.kind = MeshSpec::Kind::file;
    const std::filesystem::path given = c.string("path");
    const std::filesystem::path resolved =
        given.is_absolute() ? given : std::filesystem::path(scene_path).parent_path() / given;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(resolved, ec))
      c.fail_at("path", "no mesh file '" + resolved.string() + "'");
    m.file = resolved.string();
    m.translation = c.vector_or("translation", dim, m.translation);
    m.scale = c.number_or("scale", 1.0, Range::positive());
    return m;
  }
  if (type == "box") {
    c.expect_object({"type", "min", "max", "element_size"});
    m.kind = MeshSpec::Kind::box;
    m.min = c.vector("min", dim);
    m.max = c.vector("max", dim);
    for (int i = 0; i < dim; ++i)
      if (!(m.max[i] > m.min[i])) c.fail_at("max", "must exceed min in every component");
  } else {
    c.expect_object({"type", "center", "radius", "element_size"});
    if (type == "disk" && dim != 2) c.fail_at("type", "\"disk\" is a 2D mesh; a 3D scene takes \"ball\"");
    if (type == "ball" && dim != 3) c.fail_at("type", "\"ball\" is a 3D mesh; a 2D scene takes \"disk\"");
    m.kind = type == "disk" ? MeshSpec::Kind::disk : MeshSpec::Kind::ball;
    m.center = c.vector("center", dim);
    m.radius = c.number("radius", Range::positive());
  }
  m.element_size = c.number("element_size", Range::positive());
  const double extent = m.kind == MeshSpec::Kind::box ? (m.max - m.min).maxCoeff() : 2.0 * m.radius;
  const double cells = std::pow(extent / m.element_size, dim);
  if (cells > 1e9) c.fail_at("element_size", "gives about " + JsonChecker::format_number(cells) +
                                                 " elements per body; at most 1e9");
  return m;
}

ElasticBody parse_body(const JsonChecker& c, int dim, const std::vector<ElasticMaterial>& materials,
                       const std::string& scene_path) {
  c.expect_object({"material", "mesh", "order", "velocity", "angular_velocity"});
  ElasticBody b;
  b.material = material_index(c.at("material"), materials);
  b.mesh = parse_mesh(c.object("mesh", {"type", "min", "max", "center", "radius", "element_size", "path",
                                        "translation", "scale"}),
                      dim, scene_path);
  b.order = static_cast<int>(c.integer_or("order", 1, Range::closed(1, 2)));
  b.velocity = c.vector_or("velocity", dim, b.velocity);
  if (const auto w = c.find("angular_velocity")) {
    if (dim == 2) b.angular_velocity.z() = w->as_number();
    else b.angular_velocity = w->as_vector3();
  }
  b.pointer = c.pointer();
  return b;
}

}  // namespace

IpcScene parse_scene(const Scene& common) {
  common.expect_keys({"dimension", "integrator", "materials", "bodies", "obstacles", "boundary_conditions", "loads",
                      "gravity", "contact", "newton"});
  IpcScene s;
  static_cast<Scene&>(s) = common;
  const JsonChecker root = s.root();
  root.choice("method", {"ipc"}, "method");
  s.dimension = static_cast<int>(root.integer_or("dimension", 3, Range::closed(2, 3)));
  const int dim = s.dimension;
  s.integrator = root.choice_or("integrator", s.integrator, {"static", "bdf1", "bdf2"}, "integrator");
  if (s.integrator != "static") {
    common.require_time_stepping();
    const JsonChecker time = root.at("time");
    if (!time.has("step")) time.fail("an IPC scene that steps in time needs \"step\" (s)");
    s.time_step = *s.time.step;
  }
  s.gravity = root.vector_or("gravity", dim, s.gravity);

  for (const JsonChecker& c : root.array("materials", 1)) {
    ElasticMaterial m = parse_elastic_material(c);
    for (std::size_t i = 0; i < s.materials.size(); ++i)
      if (s.materials[i].name == m.name)
        c.fail_at("name", "duplicate material name '" + m.name + "' (also /materials/" + std::to_string(i) + ")");
    s.materials.push_back(std::move(m));
  }
  for (const JsonChecker& c : root.array("bodies", 1)) s.bodies.push_back(parse_body(c, dim, s.materials, s.path));
  for (const JsonChecker& c : root.optional_array("obstacles")) {
    c.expect_object({"type", "point", "normal"});
    c.choice("type", {"plane"}, "obstacle type");
    Plane p;
    p.point = c.vector("point", dim);
    const Eigen::Vector3d n = c.vector("normal", dim);
    if (!(n.stableNorm() > 0)) c.fail_at("normal", "must not be zero");
    p.normal = n / n.stableNorm();
    s.planes.push_back(p);
  }
  for (const JsonChecker& c : root.optional_array("boundary_conditions")) {
    c.expect_object({"region", "velocity"});
    PrescribedRegion r;
    read_region(c, dim, r.min, r.max);
    r.velocity = c.vector_or("velocity", dim, r.velocity);
    s.prescribed.push_back(r);
  }
  for (const JsonChecker& c : root.optional_array("loads")) {
    c.expect_object({"region", "traction"});
    SurfaceLoad l;
    read_region(c, dim, l.min, l.max);
    l.traction = c.vector("traction", dim);
    s.loads.push_back(l);
  }
  if (const auto c = root.optional_object("contact", {"dhat", "barrier_stiffness", "friction", "friction_velocity",
                                                      "self_contact"})) {
    if (c->has("dhat")) s.contact.dhat = c->number("dhat", Range::positive());
    if (c->has("barrier_stiffness")) s.contact.barrier_stiffness = c->number("barrier_stiffness", Range::positive());
    s.contact.friction = c->number_or("friction", s.contact.friction, Range::non_negative());
    s.contact.friction_velocity =
        c->number_or("friction_velocity", s.contact.friction_velocity, Range::positive());
    s.contact.self_contact = c->boolean_or("self_contact", s.contact.self_contact);
  }
  if (const auto c = root.optional_object("newton", {"tolerance", "max_iterations", "petsc_options"})) {
    if (c->has("tolerance")) s.newton.tolerance = c->number("tolerance", Range::positive());
    s.newton.max_iterations = c->integer_or("max_iterations", s.newton.max_iterations, Range::closed(1, 100000));
    s.newton.petsc_options = parse_petsc_options(*c, "petsc_options");
  }
  return s;
}

}  // namespace percussion::ipc
