// The bonded-DEM scene sections, checked key by key (docs/bdem.md).
#include "percussion/methods/bdem/scene.hpp"

#include <cstdint>
#include <cstdio>

#include "percussion/core/error.hpp"
#include "percussion/core/json_checker.hpp"

namespace percussion::bdem {

BdemScene parse_scene(const Scene& common) {
  common.expect_keys({"integrator", "materials", "bodies", "bonds", "contact", "obstacles", "boundary_conditions",
                      "gravity", "implicit"});
  common.require_time_stepping();
  BdemScene s;
  static_cast<Scene&>(s) = common;
  const JsonChecker root = s.root();
  root.choice("method", {"bdem"}, "method");
  s.integrator = root.choice_or("integrator", s.integrator, {"explicit", "implicit"}, "integrator");
  s.materials = parse_materials(root);
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

  return s;
}

BdemScene parse_scene_text(const std::string& text, const std::string& path) {
  return parse_scene(percussion::parse_scene_text(text, path));
}

BdemScene parse_scene_file(const std::string& path) { return parse_scene(percussion::parse_scene_file(path)); }

std::string scene_fingerprint(const Scene& scene) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a, 64 bits
  for (const char* key : {"materials", "bodies", "bonds", "contact", "obstacles", "boundary_conditions", "gravity"}) {
    const auto it = scene.document.find(key);
    const std::string text = std::string(key) + "=" + (it == scene.document.end() ? "null" : it->dump()) + ";";
    for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

}  // namespace percussion::bdem
