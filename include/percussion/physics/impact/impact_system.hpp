#pragma once
// One simultaneous-impact problem (notes 003 §2): the velocities of the dynamic bodies of a contact-graph component,
// their block-diagonal mass matrix M, and the active constraints' gradients n_i normalised so that n_iᵀM⁻¹n_i = 1.
// Every impact operator (Gauss–Seidel, Generalized Reflections, restitution, lineality removal) works on this.
// Storage is flat: a body is a block of 1 (1D chains), 2, 3 (balls) or 6 (3D rigid bodies: linear then angular)
// degrees of freedom; a constraint touches one or two bodies (a wall or a fixed body has no degrees of freedom).
#include <cstdint>
#include <span>
#include <vector>

namespace percussion::impact {

class ImpactSystem {
 public:
  // Appends a body with `dofs` degrees of freedom and its dofs × dofs mass block (row-major, symmetric positive
  // definite). Returns its index; bodies are numbered in the order they are added.
  int add_body(int dofs, std::span<const double> mass_block);
  // A ball or point mass: M block = mass × identity.
  int add_point_mass(int dofs, double mass);
  // A group of bodies moving as one block of any size (the anti-locking projection couples the bodies of a jammed
  // cluster, notes 003 Alg. F): like add_body without the limit of 6 degrees of freedom.
  int add_merged_body(int dofs, std::span<const double> mass_block);

  // Appends a constraint with raw gradient blocks g_a on body a and g_b on body b (b = -1: one-sided, a wall or a
  // fixed body). The gradient is normalised here (n = g / sqrt(gᵀM⁻¹g)); the factor is kept so impulses can be
  // reported in physical units. Constraints are numbered in the order they are added: the order the operators use
  // (lowest index first), which the caller makes a function of global ids. Returns its index.
  int add_constraint(int a, std::span<const double> g_a, int b = -1, std::span<const double> g_b = {});

  int bodies() const { return static_cast<int>(body_dofs_.size()); }
  int constraints() const { return static_cast<int>(end_a_.size()); }
  int dofs() const { return total_dofs_; }
  int body_dofs(int k) const { return body_dofs_[k]; }
  int body_offset(int k) const { return body_offset_[k]; }
  int end_a(int c) const { return end_a_[c]; }
  int end_b(int c) const { return end_b_[c]; }
  // Body k's mass block (row-major, body_dofs(k)² entries): for building a second system on the same bodies.
  std::span<const double> mass_block(int k) const {
    return {mass_.data() + block_offset_[k], static_cast<std::size_t>(body_dofs_[k] * body_dofs_[k])};
  }
  // gᵀM⁻¹g of the raw gradient: the physical impulse of multiplier λ along g is λ / sqrt(raw_metric).
  double raw_metric(int c) const { return raw_metric_[c]; }

  // n_cᵀv: negative when constraint c is violated (its bodies approach).
  double slope(int c, const double* v) const {
    const Ends& e = ends_[c];
    double s = 0.0;
    for (int i = 0; i < e.len_a; ++i) s += coef_[e.n_a + i] * v[e.off_a + i];
    for (int i = 0; i < e.len_b; ++i) s += coef_[e.n_b + i] * v[e.off_b + i];
    return s;
  }
  // v += λ M⁻¹n_c.
  void apply(int c, double lambda, double* v) const {
    const Ends& e = ends_[c];
    for (int i = 0; i < e.len_a; ++i) v[e.off_a + i] += lambda * coef_[e.w_a + i];
    for (int i = 0; i < e.len_b; ++i) v[e.off_b + i] += lambda * coef_[e.w_b + i];
  }
  // The normalised gradient n_c and its impulse direction M⁻¹n_c, as dense vectors over all degrees of freedom.
  std::vector<double> gradient(int c) const;
  std::vector<double> impulse_direction(int c) const;
  // The blocks of n_c and of M⁻¹n_c on end 0 (body a) or end 1 (body b; empty when one-sided).
  std::span<const double> gradient_block(int c, int end) const {
    const Ends& e = ends_[c];
    return end == 0 ? std::span<const double>(coef_.data() + e.n_a, e.len_a)
                    : std::span<const double>(coef_.data() + e.n_b, e.len_b);
  }
  std::span<const double> impulse_block(int c, int end) const {
    const Ends& e = ends_[c];
    return end == 0 ? std::span<const double>(coef_.data() + e.w_a, e.len_a)
                    : std::span<const double>(coef_.data() + e.w_b, e.len_b);
  }
  // Body k's inverse mass block (row-major, body_dofs(k)²).
  std::span<const double> inverse_mass_block(int k) const {
    return {inverse_mass_.data() + block_offset_[k], static_cast<std::size_t>(body_dofs_[k] * body_dofs_[k])};
  }
  // n_iᵀM⁻¹n_j (1 on the diagonal; 0 when i and j share no body).
  double coupling(int i, int j) const;

  // ‖v‖²_M = vᵀMv and ⟨v, w⟩_M.
  double energy_norm_squared(const double* v) const;
  double inner(const double* v, const double* w) const;
  // ‖v_k‖²_M restricted to body k (for updating the norm after a reflection touches two bodies only).
  double body_energy_squared(int k, const double* v) const;
  // v ← M⁻¹ f (block by block).
  void apply_inverse_mass(const double* f, double* v) const;

  // Constraints touching body k (after finish(): ascending), for the neighbours of a reflected constraint.
  std::span<const int> constraints_of(int k) const {
    return {adjacency_.data() + adjacency_start_[k], adjacency_.data() + adjacency_start_[k + 1]};
  }
  // Builds the body → constraints table; call after the last add_constraint, before an operator runs.
  void finish();

 private:
  int store_body(int dofs, std::span<const double> mass_block);
  struct Ends {
    int off_a = 0, len_a = 0, off_b = 0, len_b = 0;  // dof ranges of the two ends (len 0: no body)
    int n_a = 0, n_b = 0, w_a = 0, w_b = 0;           // offsets of n and M⁻¹n blocks in coef_
  };
  std::vector<int> body_dofs_, body_offset_, block_offset_;
  std::vector<double> mass_, inverse_mass_;  // row-major blocks, body k at block_offset_[k]
  int total_dofs_ = 0;
  std::vector<int> end_a_, end_b_;
  std::vector<Ends> ends_;
  std::vector<double> coef_, raw_metric_;
  std::vector<int> adjacency_start_, adjacency_;
};

}  // namespace percussion::impact
