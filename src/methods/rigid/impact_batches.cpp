// Large components by independent-set batches: Jones–Plassmann colouring, then colour-by-colour Gauss–Seidel sweeps.
#include "percussion/methods/rigid/impact_batches.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <tuple>
#include <unordered_map>

#include "percussion/core/splitmix.hpp"
#include "percussion/methods/rigid/distributed_impact.hpp"
#include "percussion/parallel/exact_sum.hpp"
#include "percussion/parallel/exchange_plan.hpp"
#include "percussion/parallel/messages.hpp"

namespace percussion::rigid {

namespace {

constexpr int kTag = 7311;

// A contact's Jones–Plassmann priority: a hash of its ends' global ids, ties broken by the ids.
struct Key {
  std::uint64_t hash = 0;
  std::int64_t a = -1, b = -1;
  auto tie() const { return std::tie(hash, a, b); }
  bool operator<(const Key& o) const { return tie() < o.tie(); }
  bool operator==(const Key& o) const { return tie() == o.tie(); }
};

// What the owner of a body tells its ghost copies during the colouring: the highest uncoloured contact at the body
// and the colours (below 64) its coloured contacts took.
struct BodyColouring {
  Key best;
  std::uint64_t used = 0;
};

// One contact touching an owned moving body, as this rank sees it.
struct BatchContact {
  std::size_t index = 0;   // into the contacts
  std::int64_t sa = -1, sb = -1;  // local slots of the moving ends (-1: a wall or a fixed body)
  std::size_t comp = 0;
  bool designated = false;  // this rank speaks for it (owns end a, or b when a is fixed)
  double scale = 1.0;       // 1 / sqrt(nᵀM⁻¹n) of the raw gradient (−u on a, +u on b)
  Key key;
  std::int64_t colour = -1;
  double impulse = 0.0;  // kg m/s along the normal
};

struct Partial {  // a rank's share of a component, sent to its root after a sweep
  std::int64_t label, reflections;
  std::array<std::int64_t, parallel::ExactSum::kDigits> energy;  // Σ m |v|² of its owned bodies, exactly
};
struct Verdict {  // the root's answer to every contributor
  std::int64_t label, state;  // state: kGoOn, kDone, kCapped, kHandBack
  double scale, threshold;
};
enum : std::int64_t { kGoOn = 0, kDone = 1, kCapped = 2, kHandBack = 3 };

struct RootState {  // what the root of a component keeps between sweeps
  double norm0 = 0;
  std::int64_t reflections = 0, sweeps = 0, renormalisations = 0;
};

// Ghost values refreshed from their owners: the ghosts in `wanted`, asked once, then sent each exchange.
class GhostRefresh {
 public:
  GhostRefresh(MPI_Comm comm, const BallState& local, std::size_t owned, std::span<const int> ghost_owner,
               const std::vector<char>& wanted)
      : messages_(comm) {
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    std::vector<std::vector<std::int64_t>> ask(size);
    std::vector<std::vector<std::int32_t>> where(size);
    for (std::size_t g = 0; g < ghost_owner.size(); ++g) {
      if (!wanted[owned + g]) continue;
      ask[ghost_owner[g]].push_back(local.id[owned + g]);
      where[ghost_owner[g]].push_back(static_cast<std::int32_t>(owned + g));
    }
    std::vector<std::size_t> receive(size);
    for (int r = 0; r < size; ++r) {
      receive[r] = ask[r].size();
      for (std::int32_t s : where[r]) into_.push_back(s);
    }
    std::unordered_map<std::int64_t, std::int32_t> slot;
    for (std::size_t k = 0; k < owned; ++k) slot.emplace(local.id[k], static_cast<std::int32_t>(k));
    std::vector<int> counts;
    const std::vector<std::int64_t> asked = parallel::all_to_all(comm, ask, counts);
    std::vector<std::vector<std::int32_t>> send(size);
    for (int r = 0, at = 0; r < size; ++r)
      for (int i = 0; i < counts[r]; ++i) send[r].push_back(slot.at(asked[at++]));
    plan_.assign(std::move(send), std::move(receive), rank);
  }

  // Collective over neighbours: values[s] of owned slots into the wanted ghost slots.
  template <class T>
  void forward(std::vector<T>& values) {
    received_.resize(plan_.received() * sizeof(T));
    plan_.run(
        messages_, kTag, sizeof(T),
        [&](const std::vector<std::int32_t>& list, std::byte* out) { parallel::pack::put(list, values.data(), out); },
        received_.data(), sendbuf_);
    for (std::size_t i = 0; i < into_.size(); ++i)
      std::memcpy(static_cast<void*>(&values[into_[i]]), received_.data() + i * sizeof(T), sizeof(T));
  }

 private:
  parallel::Messages messages_;
  parallel::ExchangePlan plan_;
  std::vector<std::int32_t> into_;  // arrival i goes to this ghost slot
  std::vector<std::byte> received_, sendbuf_;
};

}  // namespace

BatchOutcome resolve_by_batches(MPI_Comm comm, BallState& local, std::size_t owned, std::span<const int> ghost_owner,
                                std::int64_t bodies, std::span<const Contact> contacts,
                                std::span<const std::int64_t> label,
                                const std::map<std::int64_t, BatchComponent>& components,
                                const BatchSettings& settings, GatheredContacts* gathered) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  BatchOutcome out;
  const std::size_t n_local = local.size();
  std::unordered_map<std::int64_t, std::int64_t> slot;
  slot.reserve(n_local * 2);
  for (std::size_t k = 0; k < n_local; ++k) slot.emplace(local.global_id(k), static_cast<std::int64_t>(k));
  const auto moving_slot = [&](std::int64_t id) -> std::int64_t {
    if (id >= bodies) return -1;
    const std::int64_t s = slot.at(id);
    return local.fixed[s] ? -1 : s;
  };
  std::vector<std::int64_t> comp_label;
  std::unordered_map<std::int64_t, std::size_t> comp_of;
  for (const auto& [l, c] : components) {
    comp_of.emplace(l, comp_label.size());
    comp_label.push_back(l);
  }
  const std::size_t n_comps = comp_label.size();
  const auto comp_of_slot = [&](std::int64_t s) -> std::int64_t {
    if (s < 0 || label[s] < 0) return -1;
    const auto it = comp_of.find(label[s]);
    return it == comp_of.end() ? -1 : static_cast<std::int64_t>(it->second);
  };

  // The contacts of these components that touch an owned moving body: every such contact is found here.
  std::vector<BatchContact> mine;
  std::vector<char> wanted(n_local, 0);
  for (std::size_t i = 0; i < contacts.size(); ++i) {
    const Contact& c = contacts[i];
    BatchContact b;
    b.index = i;
    b.sa = moving_slot(c.a);
    b.sb = moving_slot(c.b);
    const std::int64_t lead = b.sa >= 0 ? b.sa : b.sb;
    const std::int64_t comp = comp_of_slot(lead);
    if (comp < 0) continue;
    const bool touches_owned = (b.sa >= 0 && b.sa < static_cast<std::int64_t>(owned)) ||
                               (b.sb >= 0 && b.sb < static_cast<std::int64_t>(owned));
    if (!touches_owned) continue;
    b.comp = static_cast<std::size_t>(comp);
    b.designated = lead < static_cast<std::int64_t>(owned);
    double k = 0;
    if (b.sa >= 0) k += 1.0 / local.mass[b.sa];
    if (b.sb >= 0) k += 1.0 / local.mass[b.sb];
    b.scale = 1.0 / std::sqrt(k);
    b.key = {splitmix64(splitmix64(static_cast<std::uint64_t>(c.a)) ^ static_cast<std::uint64_t>(c.b)), c.a, c.b};
    for (const std::int64_t s : {b.sa, b.sb})
      if (s >= 0) wanted[s] = 1;
    mine.push_back(b);
  }
  GhostRefresh refresh(comm, local, owned, ghost_owner, wanted);

  // Jones–Plassmann: a contact takes a colour in the round where it outranks every uncoloured contact at its moving
  // bodies; the smallest colour none of its coloured neighbours has (64 and above: one fresh colour per round).
  std::vector<BodyColouring> at(n_local);
  for (std::int64_t round = 0;; ++round) {
    for (std::size_t k = 0; k < owned; ++k) at[k] = BodyColouring{};
    std::int64_t left = 0;
    for (const BatchContact& c : mine)
      for (const std::int64_t s : {c.sa, c.sb}) {
        if (s < 0 || s >= static_cast<std::int64_t>(owned)) continue;
        if (c.colour < 0) at[s].best = std::max(at[s].best, c.key);
        else if (c.colour < 64) at[s].used |= std::uint64_t{1} << c.colour;
      }
    refresh.forward(at);
    for (BatchContact& c : mine) {
      if (c.colour >= 0) continue;
      bool top = true;
      std::uint64_t used = 0;
      for (const std::int64_t s : {c.sa, c.sb}) {
        if (s < 0) continue;
        top = top && at[s].best == c.key;
        used |= at[s].used;
      }
      if (!top) {
        ++left;
        continue;
      }
      c.colour = ~used != 0 ? std::countr_zero(~used) : 64 + round;
    }
    MPI_Allreduce(MPI_IN_PLACE, &left, 1, MPI_INT64_T, MPI_SUM, comm);
    if (left == 0) break;
  }
  std::int64_t colours = 0;
  for (const BatchContact& c : mine) colours = std::max(colours, c.colour + 1);
  MPI_Allreduce(MPI_IN_PLACE, &colours, 1, MPI_INT64_T, MPI_MAX, comm);
  std::vector<std::int64_t> in_use(static_cast<std::size_t>(colours), 0);
  for (const BatchContact& c : mine) in_use[c.colour] = 1;
  MPI_Allreduce(MPI_IN_PLACE, in_use.data(), static_cast<int>(colours), MPI_INT64_T, MPI_MAX, comm);
  std::stable_sort(mine.begin(), mine.end(), [](const BatchContact& x, const BatchContact& y) {
    return x.colour < y.colour;
  });

  // Per-component reductions at the roots, exact so that every rank count gets the same norms.
  const std::vector<Eigen::Vector3d> arriving = local.velocity;
  std::vector<std::int64_t> comp_at(n_local, -1);  // the batched component of each moving local body
  for (std::size_t k = 0; k < n_local; ++k)
    if (!local.fixed[k]) comp_at[k] = comp_of_slot(static_cast<std::int64_t>(k));
  std::vector<std::int64_t> state(n_comps, kGoOn), swept(n_comps, 0);
  std::vector<double> threshold(n_comps, 0.0);
  std::map<std::int64_t, RootState> roots;
  const bool elastic = settings.restitution >= 1.0;
  const auto verdicts = [&](bool first) {
    std::vector<parallel::ExactSum> energy(n_comps);
    for (std::size_t k = 0; k < owned; ++k) {
      const std::int64_t comp = comp_at[k];
      if (comp >= 0 && state[comp] == kGoOn) energy[comp].add(local.mass[k] * local.velocity[k].squaredNorm());
    }
    std::vector<std::vector<Partial>> up(size);
    for (std::size_t c = 0; c < n_comps; ++c) {
      if (state[c] != kGoOn) continue;
      Partial p{comp_label[c], swept[c], {}};
      energy[c].normalise();
      p.energy = energy[c].digits();
      up[components.at(comp_label[c]).root].push_back(p);
    }
    std::vector<int> counts;
    const std::vector<Partial> got = parallel::all_to_all(comm, up, counts);
    std::map<std::int64_t, std::pair<parallel::ExactSum, std::int64_t>> total;
    for (const Partial& p : got) {
      parallel::ExactSum s;
      s.digits() = p.energy;
      auto& [e, r] = total[p.label];
      e.add(s);
      r += p.reflections;
    }
    std::vector<std::vector<Verdict>> down(size);
    std::map<std::int64_t, Verdict> verdict;
    for (auto& [l, t] : total) {
      const BatchComponent& bc = components.at(l);
      RootState& root = roots[l];
      const double norm = std::sqrt(t.first.value());
      Verdict v{l, kGoOn, 1.0, 0.0};
      if (first) {
        root.norm0 = norm;
      } else {
        ++root.sweeps;
        root.reflections += t.second;
        if (t.second == 0) v.state = kDone;
        else if (elastic && settings.resolve.renormalise && norm > 0) v.scale = root.norm0 / norm, ++root.renormalisations;
        const std::int64_t budget = std::min(settings.resolve.max_reflections, 1000 * bc.contacts + 10000);
        if (v.state == kGoOn && settings.hand_back && bc.one_sided && root.reflections >= budget) v.state = kHandBack;
        else if (v.state == kGoOn && root.reflections >= settings.resolve.max_reflections) v.state = kCapped;
      }
      v.threshold = -settings.resolve.tolerance * (elastic ? root.norm0 : norm * v.scale);
      verdict[l] = v;
    }
    for (int r = 0, at_rank = 0; r < size; ++r)
      for (int i = 0; i < counts[r]; ++i, ++at_rank) down[r].push_back(verdict.at(got[at_rank].label));
    const std::vector<Verdict> told = parallel::all_to_all(comm, down, counts);
    std::vector<double> scale(n_comps, 1.0);
    std::vector<char> restore(n_comps, 0);
    for (const Verdict& v : told) {
      const std::size_t c = comp_of.at(v.label);
      swept[c] = 0;
      state[c] = v.state;
      threshold[c] = v.threshold;
      scale[c] = v.scale;
      restore[c] = v.state == kHandBack;
      if (restore[c]) out.handed_back.push_back(v.label);
    }
    for (std::size_t k = 0; k < n_local; ++k) {  // owned bodies and their ghost copies alike
      if (comp_at[k] < 0) continue;
      if (restore[comp_at[k]]) local.velocity[k] = arriving[k];
      else if (scale[comp_at[k]] != 1.0) local.velocity[k] *= scale[comp_at[k]];
    }
  };

  // Sweeps: each colour's violated contacts reflected from the velocities before that colour, owned ends updated on
  // every rank that holds them (the same arithmetic on the same numbers), then the ghosts refreshed.
  verdicts(true);
  const double restitution = std::min(settings.restitution, 1.0);
  for (;;) {
    std::int64_t active = 0;
    for (std::size_t c = 0; c < n_comps; ++c) active += state[c] == kGoOn;
    MPI_Allreduce(MPI_IN_PLACE, &active, 1, MPI_INT64_T, MPI_MAX, comm);
    if (active == 0) break;
    std::size_t i = 0;
    for (std::int64_t colour = 0; colour < colours; ++colour) {
      if (!in_use[colour]) continue;
      for (; i < mine.size() && mine[i].colour == colour; ++i) {
        BatchContact& b = mine[i];
        if (state[b.comp] != kGoOn) continue;
        const Eigen::Vector3d& u = contacts[b.index].normal;
        double s = 0;
        if (b.sa >= 0) s -= u.dot(local.velocity[b.sa]);
        if (b.sb >= 0) s += u.dot(local.velocity[b.sb]);
        s *= b.scale;
        if (!(s < threshold[b.comp])) continue;
        const double lambda = -(1.0 + restitution) * s * b.scale;  // physical impulse
        if (b.sa >= 0 && b.sa < static_cast<std::int64_t>(owned))
          local.velocity[b.sa] -= (lambda / local.mass[b.sa]) * u;
        if (b.sb >= 0 && b.sb < static_cast<std::int64_t>(owned))
          local.velocity[b.sb] += (lambda / local.mass[b.sb]) * u;
        if (b.designated) b.impulse += lambda, ++swept[b.comp];
      }
      refresh.forward(local.velocity);
    }
    verdicts(false);
  }

  // This rank's share of the totals: sweeps and failures at the roots, reflections and contacts where designated.
  InstantResult& r = out.result;
  std::vector<char> handed(n_comps, 0);
  for (std::size_t c = 0; c < n_comps; ++c) handed[c] = state[c] == kHandBack;
  for (const auto& [l, root] : roots) {
    if (handed[comp_of.at(l)]) continue;
    const BatchComponent& bc = components.at(l);
    ++r.components;
    r.iterations += root.sweeps;
    r.renormalisations += root.renormalisations;
    r.largest_component = std::max(r.largest_component, bc.bodies);
    if (state[comp_of.at(l)] == kCapped && r.terminated) {
      r.terminated = false;
      r.reason = "component of body " + std::to_string(l) + " (" + std::to_string(bc.bodies) + " bodies, " +
                 std::to_string(bc.contacts) + " contacts, by batches): diagnostic cap of " +
                 std::to_string(settings.resolve.max_reflections) +
                 " reflections reached with constraints still violated";
    }
  }
  for (const BatchContact& b : mine) {
    if (!b.designated || handed[b.comp]) continue;
    ++r.contacts;
    if (gathered) {
      gathered->contacts.push_back(contacts[b.index]);
      gathered->impulses.push_back(b.impulse);
      gathered->implicit_equality.push_back(0);
    }
  }
  for (const auto& [l, root] : roots)
    if (!handed[comp_of.at(l)]) r.reflections += root.reflections;
  return out;
}

}  // namespace percussion::rigid
