// The asynchronous integrator's broad phase for spheres: pairs within 2η + skin of touching, found on a hash grid and
// kept until a sphere has moved skin/2 (a per-sphere expiry, rescheduled at its kicks like a certificate).
#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <utility>

#include "percussion/core/error.hpp"
#include "percussion/methods/avi/asynchronous_integrator.hpp"

namespace percussion::avi {

void AsynchronousIntegrator::find_sphere_pairs(double skin) {
  if (!(skin > 0 && std::isfinite(skin)) || started_)
    throw InputError("asynchronous contact: the broad phase needs a skin > 0, set before the run starts");
  skin_ = skin;
}

void AsynchronousIntegrator::rebuild_sphere_pairs() {
  ++counters_.rebuilds;
  const double within = 2 * settings_.layers.eta + skin_;  // gap below which two spheres are paired
  std::vector<int> spheres;
  double largest = 0;
  for (std::size_t i = 0; i < x_.size(); ++i)
    if (radius_[i] > 0) {
      spheres.push_back(static_cast<int>(i));
      largest = std::max(largest, radius_[i]);
    }
  const double cell = 2 * largest + within;
  const auto key = [&](const Vec3& x, int dx, int dy, int dz) {
    const auto c = [&](double v, int d) { return (static_cast<std::int64_t>(std::floor(v / cell)) + d) & 0x1fffff; };
    return (c(x.x(), dx) << 42) | (c(x.y(), dy) << 21) | c(x.z(), dz);
  };
  std::unordered_map<std::int64_t, std::vector<int>> grid;
  for (int i : spheres) grid[key(position(i), 0, 0, 0)].push_back(i);
  std::vector<std::pair<int, int>> wanted;
  for (int i : spheres) {
    const Vec3 xi = position(i);
    for (int dx = -1; dx <= 1; ++dx)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dz = -1; dz <= 1; ++dz) {
          const auto found = grid.find(key(xi, dx, dy, dz));
          if (found == grid.end()) continue;
          for (int j : found->second)
            if (j > i && (inverse_mass_[i] > 0 || inverse_mass_[j] > 0) &&
                (position(j) - xi).norm() - radius_[i] - radius_[j] < within)
              wanted.emplace_back(i, j);
        }
  }
  std::sort(wanted.begin(), wanted.end());
  // Found pairs out of reach and with no active layer go; the rest stay with their layers and clocks.
  for (std::size_t p = 0; p < pairs_.size(); ++p) {
    const Pair& pair = pairs_[p];
    if (pair.live && pair.found && pair.deepest == 0 &&
        !std::binary_search(wanted.begin(), wanted.end(), std::make_pair(pair.vertices[0], pair.vertices[1])))
      release(static_cast<int>(p));
  }
  for (const auto& [a, b] : wanted) {
    const auto& of_a = pairs_of_vertex_[a];
    const bool known = std::any_of(of_a.begin(), of_a.end(), [&](int p) {
      const Pair& q = pairs_[p];
      return q.type == PairType::Spheres && (q.vertices[0] == b || q.vertices[1] == b);
    });
    if (known) continue;
    Pair pair;
    pair.vertices = {a, b, 0, 0};
    pair.found = true;
    pair.reduced_mass = 1.0 / (inverse_mass_[a] + inverse_mass_[b]);
    int slot;
    if (free_slots_.empty()) {
      slot = static_cast<int>(pairs_.size());
      pairs_.push_back(pair);
    } else {
      slot = free_slots_.back();
      free_slots_.pop_back();
      // The slot's clocks keep their versions, so queued events of the pair it held stay stale.
      std::vector<LayerClock> clocks = std::move(pairs_[slot].clocks);
      for (std::size_t l = 0; l < clocks.size(); ++l) {
        clocks[l].step = settings_.layers.step(static_cast<std::int64_t>(l + 1), pair.reduced_mass, settings_.courant);
        clocks[l].origin = 0;
        clocks[l].last_tick = 0;
      }
      pairs_[slot] = pair;
      pairs_[slot].clocks = std::move(clocks);
    }
    pairs_of_vertex_[a].push_back(slot);
    pairs_of_vertex_[b].push_back(slot);
    if (started_) {
      certificates_.reset_size(pairs_.size());
      certify(slot);
    }
  }
  anchor_.resize(x_.size());
  skins_.reset_size(x_.size());
  for (int i : spheres) anchor_[i] = position(i);
  for (int i : spheres)
    if (inverse_mass_[i] > 0) schedule_skin(i);
}

void AsynchronousIntegrator::release(int slot) {
  Pair& pair = pairs_[slot];
  certificates_.erase(slot);
  for (LayerClock& clock : pair.clocks) ++clock.version;
  for (int k = 0; k < pair.count; ++k) std::erase(pairs_of_vertex_[pair.vertices[k]], slot);
  pair.live = false;
  free_slots_.push_back(slot);
}

// When the sphere, moving on at its velocity, is skin/2 from its anchor: |d + v τ| = skin/2.
void AsynchronousIntegrator::schedule_skin(int vertex) {
  const Vec3 d = position(vertex) - anchor_[vertex];
  const Vec3& v = v_[vertex];
  const double r = 0.5 * skin_, a = v.squaredNorm(), b = d.dot(v), c = d.squaredNorm() - r * r;
  if (c < 0 && a == 0) {
    skins_.erase(vertex);
    return;
  }
  double exit = c >= 0 ? 0.0 : (-b + std::sqrt(b * b - a * c)) / a;
  const double ulps = 64 * std::numeric_limits<double>::epsilon() * std::max(1.0, std::abs(now_));
  skins_.set({exit <= ulps ? now_ : now_ + (exit - ulps), EventKind::Skin, vertex, 0, 0, 0, {vertex, 0, 0, 0, 0}});
}

}  // namespace percussion::avi
