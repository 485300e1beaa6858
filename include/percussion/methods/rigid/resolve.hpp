#pragma once
// One impact resolution of every contact-graph component at one instant, with the scene's operator, restitution and
// friction; and the inelastic projection that keeps resting contacts at rest under a body force.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "percussion/methods/rigid/contacts.hpp"

namespace percussion::rigid {

struct InstantResult {
  bool terminated = true;
  std::string reason = "feasible";  // the first component that did not terminate says why
  std::int64_t components = 0, largest_component = 0, contacts = 0;
  std::int64_t iterations = 0, reflections = 0, renormalisations = 0;
  std::vector<double> impulses;     // per contact, physical units (kg m/s along the contact normal)
  std::vector<double> tangential;   // per contact, friction impulse along its first tangent (kg m/s)
  std::vector<char> implicit_equality;  // per contact: removed as an implicit equality (notes Alg. F)
  std::int64_t lineality_dimension = 0;
  double projection_energy_loss = 0;  // kinetic energy removed by the anti-locking projection
};

// Resolves the velocities of `balls` in place. Components are independent: their order does not matter, and each
// runs with its own tolerance scale and (for the random order) its own generator seeded from its smallest body.
InstantResult resolve_contacts(BallState& balls, int dimension, std::span<const Contact> contacts,
                               const Components& components, const ImpactSettings& settings);

// Projects the velocities of every component with a violated contact onto its feasible cone, perfectly
// inelastically (one contact QP): what a body force added against resting contacts is removed, nothing else.
// Returns false, with `why`, when a QP missed its residual by more than 0.1 × tolerance (feasibility needs no more).
bool project_onto_contacts(BallState& balls, int dimension, std::span<const Contact> contacts,
                           const Components& components, double tolerance, std::string& why);

}  // namespace percussion::rigid
