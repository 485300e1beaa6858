// Components of the contact graph across ranks: gathered on the owner of their smallest body and resolved there, or,
// above the gather limit, resolved by batches where their bodies live (impact_batches.hpp).
#include "percussion/methods/rigid/distributed_impact.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <unordered_map>

#include "percussion/parallel/messages.hpp"
#include "percussion/parallel/owner_directory.hpp"

namespace percussion::rigid {

namespace {

struct BodyRecord {  // a body of a component, sent to its root
  std::int64_t label, id;
  double mass;
  double velocity[3];
  double position[3];
  std::int32_t fixed;
  double orientation[4], angular[3], half[3], radius;  // boxes (half 0: a ball)
};
struct ContactRecord {  // a contact, sent by the owner of its designated end
  std::int64_t label, a, b;
  double normal[3];
  double gap;
  double point[3];
  std::int64_t sub;
};
struct SizeRecord {  // a rank's share of a component's size, and the root's total
  std::int64_t label, bodies, contacts, one_sided;
};
struct VelocityRecord {
  std::int64_t id;
  double velocity[3], angular[3];
};

// A box's shape and spin travel with its record (a ball's stay 0).
void box_record(const BallState& local, std::size_t k, BodyRecord& b) {
  b.radius = local.radius[k];
  b.orientation[3] = 1.0;
  if (!local.is_box(k)) return;
  for (int d = 0; d < 4; ++d) b.orientation[d] = local.orientation[k][d];
  for (int d = 0; d < 3; ++d) {
    b.angular[d] = local.fixed[k] ? 0.0 : local.angular_velocity[k][d];
    b.half[d] = local.half_extents[k][d];
  }
}

std::int64_t find_root(std::vector<std::int64_t>& parent, std::int64_t x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

// Collective: the components, among those of this rank's owned bodies (`share`: what this rank holds of each, by
// label), with more moving bodies in total than `limit`. Their roots add up the shares and tell every holder.
std::map<std::int64_t, BatchComponent> large_components(MPI_Comm comm, std::span<const std::int64_t> owned_ids,
                                                        std::int64_t bodies,
                                                        const std::map<std::int64_t, BatchComponent>& share,
                                                        std::int64_t limit) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<std::int64_t> labels;
  for (const auto& [l, c] : share) labels.push_back(l);
  const std::vector<int> root = parallel::find_owners(comm, owned_ids, bodies, labels);
  std::vector<std::vector<SizeRecord>> up(size);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const BatchComponent& c = share.at(labels[i]);
    up[root[i]].push_back({labels[i], c.bodies, c.contacts, c.one_sided ? 1 : 0});
  }
  std::vector<int> counts;
  const std::vector<SizeRecord> got = parallel::all_to_all(comm, up, counts);
  std::map<std::int64_t, SizeRecord> total;
  for (const SizeRecord& r : got) {
    SizeRecord& t = total.try_emplace(r.label, SizeRecord{r.label, 0, 0, 0}).first->second;
    t.bodies += r.bodies;
    t.contacts += r.contacts;
    t.one_sided = std::max(t.one_sided, r.one_sided);
  }
  std::vector<std::vector<SizeRecord>> down(size);
  for (int r = 0, at = 0; r < size; ++r)
    for (int i = 0; i < counts[r]; ++i, ++at) down[r].push_back(total.at(got[at].label));
  std::map<std::int64_t, BatchComponent> out;
  for (const SizeRecord& r : parallel::all_to_all(comm, down, counts)) {
    if (r.bodies <= limit) continue;
    out[r.label] = BatchComponent{root[static_cast<std::size_t>(
                                      std::lower_bound(labels.begin(), labels.end(), r.label) - labels.begin())],
                                  r.bodies, r.contacts, r.one_sided != 0};
  }
  return out;
}

}  // namespace

InstantResult solve_components(MPI_Comm comm, BallState& local, std::size_t owned, std::span<const int> ghost_owner,
                               std::int64_t bodies, std::span<const Contact> contacts, const ComponentSolver& solve,
                               GatheredContacts* gathered, const BatchSettings* batches) {
  if (gathered) *gathered = GatheredContacts{};
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const std::size_t n_local = local.size();
  std::unordered_map<std::int64_t, std::int64_t> slot;
  slot.reserve(n_local * 2);
  for (std::size_t k = 0; k < n_local; ++k) slot.emplace(local.global_id(k), static_cast<std::int64_t>(k));
  const auto slot_of = [&](std::int64_t id) -> std::int64_t {
    if (id >= bodies) return -1;  // a wall
    const auto it = slot.find(id);
    return it == slot.end() ? -1 : it->second;
  };
  const auto dynamic = [&](std::int64_t s) { return s >= 0 && !local.fixed[s]; };
  // The contacts this rank speaks for: those whose designated end (a, or b when a is fixed) it owns.
  std::vector<std::int64_t> mine;
  std::vector<std::pair<std::int64_t, std::int64_t>> links;  // slots of contacts with an owned dynamic end
  for (std::size_t i = 0; i < contacts.size(); ++i) {
    const std::int64_t sa = slot_of(contacts[i].a), sb = slot_of(contacts[i].b);
    const std::int64_t designated = dynamic(sa) ? sa : sb;
    if (designated >= 0 && designated < static_cast<std::int64_t>(owned)) mine.push_back(static_cast<std::int64_t>(i));
    const bool touches_owned = (sa >= 0 && sa < static_cast<std::int64_t>(owned)) ||
                               (sb >= 0 && sb < static_cast<std::int64_t>(owned));
    if (touches_owned && dynamic(sa) && dynamic(sb)) links.emplace_back(sa, sb);
  }

  // Labels: the smallest body id of each component, spread until no rank lowers one. Every contact between an owned
  // body and a ghost is also found by the ghost's owner (ghost reach is symmetric), so forwarding owned labels to
  // the ghost copies suffices.
  std::vector<std::int64_t> label(n_local, -1);
  std::vector<char> in_contact(n_local, 0);
  for (std::int64_t i : mine) {
    const std::int64_t sa = slot_of(contacts[i].a), sb = slot_of(contacts[i].b);
    if (dynamic(sa)) in_contact[sa] = 1;
    if (dynamic(sb)) in_contact[sb] = 1;
  }
  for (const auto& [a, b] : links) in_contact[a] = in_contact[b] = 1;
  for (std::size_t k = 0; k < n_local; ++k)
    if (dynamic(static_cast<std::int64_t>(k))) label[k] = local.global_id(k);
  std::vector<std::int64_t> parent(n_local);
  const std::vector<std::int64_t> owned_ids(local.id.begin(), local.id.begin() + static_cast<std::ptrdiff_t>(owned));
  const std::vector<std::int64_t> ghost_ids(local.id.begin() + static_cast<std::ptrdiff_t>(owned), local.id.end());
  for (;;) {
    std::iota(parent.begin(), parent.end(), 0);
    for (const auto& [a, b] : links) {
      const std::int64_t x = find_root(parent, a), y = find_root(parent, b);
      if (x != y) parent[std::max(x, y)] = std::min(x, y);
    }
    std::vector<std::int64_t> lowest(n_local, -1);
    for (std::size_t k = 0; k < n_local; ++k) {
      if (label[k] < 0) continue;
      const std::int64_t r = find_root(parent, static_cast<std::int64_t>(k));
      lowest[r] = lowest[r] < 0 ? label[k] : std::min(lowest[r], label[k]);
    }
    int changed = 0;
    for (std::size_t k = 0; k < owned; ++k) {
      if (label[k] < 0) continue;
      const std::int64_t l = lowest[find_root(parent, static_cast<std::int64_t>(k))];
      if (l < label[k]) label[k] = l, changed = 1;
    }
    MPI_Allreduce(MPI_IN_PLACE, &changed, 1, MPI_INT, MPI_MAX, comm);
    if (!changed) break;
    // Refresh the ghosts' labels from their owners.
    const std::span<const int> owners = ghost_owner;
    std::vector<std::vector<std::int64_t>> ask(size);
    for (std::size_t g = 0; g < ghost_ids.size(); ++g) ask[owners[g]].push_back(ghost_ids[g]);
    std::vector<int> counts;
    const std::vector<std::int64_t> asked = parallel::all_to_all(comm, ask, counts);
    std::vector<std::vector<std::int64_t>> answer(size);
    for (int r = 0, at = 0; r < size; ++r)
      for (int i = 0; i < counts[r]; ++i, ++at) answer[r].push_back(label[slot_of(asked[at])]);
    const std::vector<std::int64_t> answers = parallel::all_to_all(comm, answer, counts);
    std::vector<int> at(size, 0), start(size + 1, 0);
    for (int r = 0; r < size; ++r) start[r + 1] = start[r] + counts[r];
    for (std::size_t g = 0; g < ghost_ids.size(); ++g) {
      const int r = owners[g];
      label[owned + g] = answers[start[r] + at[r]++];
    }
  }

  // Components larger than the gather limit are resolved by batches where their bodies live; the rest, and any
  // the batches hand back, are gathered whole on the owner of their label.
  const auto contact_label = [&](std::int64_t i) {
    const std::int64_t sa = slot_of(contacts[i].a);
    return label[dynamic(sa) ? sa : slot_of(contacts[i].b)];
  };
  std::map<std::int64_t, BatchComponent> batched;
  BatchOutcome by_batches;
  std::int64_t touching = 0;  // moving bodies in contact, everywhere: no component is larger
  if (batches && batches->gather_limit >= 0) {
    for (std::size_t k = 0; k < owned; ++k) touching += label[k] >= 0 && in_contact[k];
    MPI_Allreduce(MPI_IN_PLACE, &touching, 1, MPI_INT64_T, MPI_SUM, comm);
  }
  if (batches && batches->gather_limit >= 0 && touching > batches->gather_limit) {
    std::map<std::int64_t, BatchComponent> share;
    for (std::size_t k = 0; k < owned; ++k)
      if (label[k] >= 0 && in_contact[k]) ++share[label[k]].bodies;
    for (std::int64_t i : mine) {
      BatchComponent& c = share[contact_label(i)];
      ++c.contacts;
      c.one_sided = c.one_sided || !dynamic(slot_of(contacts[i].a)) || !dynamic(slot_of(contacts[i].b));
    }
    batched = large_components(comm, owned_ids, bodies, share, batches->gather_limit);
    std::int64_t any = static_cast<std::int64_t>(batched.size());
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT64_T, MPI_MAX, comm);
    if (any > 0)
      by_batches =
          resolve_by_batches(comm, local, owned, ghost_owner, bodies, contacts, label, batched, *batches, gathered);
    for (std::int64_t l : by_batches.handed_back) batched.erase(l);
  }
  const auto is_gathered = [&](std::int64_t l) { return batched.empty() || !batched.count(l); };

  std::vector<std::int64_t> labels_needed;
  for (std::size_t k = 0; k < owned; ++k)
    if (label[k] >= 0 && in_contact[k] && is_gathered(label[k])) labels_needed.push_back(label[k]);
  std::vector<std::int64_t> mine_gathered;
  for (std::int64_t i : mine)
    if (is_gathered(contact_label(i))) mine_gathered.push_back(i), labels_needed.push_back(contact_label(i));
  mine.swap(mine_gathered);
  const std::vector<int> root_of = parallel::find_owners(comm, owned_ids, bodies, labels_needed);
  std::vector<std::vector<BodyRecord>> body_out(size);
  std::vector<std::vector<ContactRecord>> contact_out(size);
  std::size_t q = 0;
  for (std::size_t k = 0; k < owned; ++k) {
    if (label[k] < 0 || !in_contact[k] || !is_gathered(label[k])) continue;
    BodyRecord b{label[k], local.global_id(k), local.mass[k], {}, {}, 0, {}, {}, {}, 0.0};
    for (int d = 0; d < 3; ++d) b.velocity[d] = local.velocity[k][d], b.position[d] = local.position[k][d];
    box_record(local, k, b);
    body_out[root_of[q++]].push_back(b);
  }
  for (std::int64_t i : mine) {
    const Contact& c = contacts[i];
    const std::int64_t sa = slot_of(c.a);
    const std::int64_t l = label[dynamic(sa) ? sa : slot_of(c.b)];
    ContactRecord r{l, c.a, c.b, {c.normal[0], c.normal[1], c.normal[2]}, c.gap, {c.point[0], c.point[1], c.point[2]},
                    c.sub};
    const int root = root_of[q++];
    contact_out[root].push_back(r);
    // A fixed end travels with the contact as a body of the component (its velocity stays 0).
    const std::int64_t fixed_end = !dynamic(sa) ? sa : (c.b < bodies && !dynamic(slot_of(c.b)) ? slot_of(c.b) : -1);
    if (fixed_end >= 0) {
      BodyRecord b{l, local.global_id(fixed_end), local.mass[fixed_end], {0, 0, 0}, {}, 1, {}, {}, {}, 0.0};
      for (int d = 0; d < 3; ++d) b.position[d] = local.position[fixed_end][d];
      box_record(local, static_cast<std::size_t>(fixed_end), b);
      body_out[root].push_back(b);
    }
  }
  std::vector<int> body_counts, contact_counts;
  std::vector<BodyRecord> got_bodies = parallel::all_to_all(comm, body_out, body_counts);
  std::vector<ContactRecord> got_contacts = parallel::all_to_all(comm, contact_out, contact_counts);
  std::vector<int> source(got_bodies.size());
  for (int r = 0, at = 0; r < size; ++r)
    for (int i = 0; i < body_counts[r]; ++i) source[at++] = r;

  // As one rank would hold them: bodies by id (a fixed body touched by several contacts once), contacts by (a, b).
  std::vector<std::size_t> order(got_bodies.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return got_bodies[x].id < got_bodies[y].id; });
  BallState batch;
  std::vector<int> batch_source;
  std::unordered_map<std::int64_t, std::int64_t> batch_slot;
  for (std::size_t o : order) {
    const BodyRecord& b = got_bodies[o];
    if (batch_slot.count(b.id)) continue;
    batch_slot.emplace(b.id, static_cast<std::int64_t>(batch.size()));
    batch.position.emplace_back(b.position[0], b.position[1], b.position[2]);
    batch.velocity.emplace_back(b.velocity[0], b.velocity[1], b.velocity[2]);
    batch.mass.push_back(b.mass);
    batch.radius.push_back(0.0);
    batch.fixed.push_back(static_cast<char>(b.fixed));
    batch.id.push_back(b.id);
    batch.radius.back() = b.radius;
    batch.orientation.emplace_back(b.orientation[0], b.orientation[1], b.orientation[2], b.orientation[3]);
    batch.angular_velocity.emplace_back(b.angular[0], b.angular[1], b.angular[2]);
    batch.half_extents.emplace_back(b.half[0], b.half[1], b.half[2]);
    batch_source.push_back(source[o]);
  }
  std::sort(got_contacts.begin(), got_contacts.end(), [](const ContactRecord& x, const ContactRecord& y) {
    return x.a != y.a ? x.a < y.a : x.b != y.b ? x.b < y.b : x.sub < y.sub;
  });
  const std::int64_t nb = static_cast<std::int64_t>(batch.size());
  std::vector<Contact> batch_contacts;
  for (const ContactRecord& r : got_contacts) {
    Contact c;
    c.a = batch_slot.at(r.a);
    c.b = r.b < bodies ? batch_slot.at(r.b) : nb + (r.b - bodies);
    c.normal = Eigen::Vector3d(r.normal[0], r.normal[1], r.normal[2]);
    c.gap = r.gap;
    c.point = Eigen::Vector3d(r.point[0], r.point[1], r.point[2]);
    c.sub = static_cast<int>(r.sub);
    batch_contacts.push_back(c);
  }
  const Components components = contact_components(batch, batch_contacts);
  InstantResult result = solve(batch, batch_contacts, components);
  if (gathered) {
    for (const ContactRecord& r : got_contacts)
      gathered->contacts.push_back({r.a, r.b, Eigen::Vector3d(r.normal[0], r.normal[1], r.normal[2]), r.gap,
                                    Eigen::Vector3d(r.point[0], r.point[1], r.point[2]), static_cast<int>(r.sub)});
    gathered->impulses.insert(gathered->impulses.end(), result.impulses.begin(), result.impulses.end());
    gathered->implicit_equality.insert(gathered->implicit_equality.end(), result.implicit_equality.begin(),
                                       result.implicit_equality.end());
  }

  // New velocities back to their owners.
  std::vector<std::vector<VelocityRecord>> back(size);
  for (std::int64_t k = 0; k < nb; ++k) {
    if (batch.fixed[k]) continue;
    const Eigen::Vector3d& w = batch.angular_velocity[k];
    back[batch_source[k]].push_back(
        {batch.id[k], {batch.velocity[k][0], batch.velocity[k][1], batch.velocity[k][2]}, {w[0], w[1], w[2]}});
  }
  std::vector<int> counts;
  for (const VelocityRecord& v : parallel::all_to_all(comm, back, counts)) {
    const std::int64_t s = slot_of(v.id);
    local.velocity[s] = Eigen::Vector3d(v.velocity[0], v.velocity[1], v.velocity[2]);
    if (local.is_box(static_cast<std::size_t>(s)))
      local.angular_velocity[s] = Eigen::Vector3d(v.angular[0], v.angular[1], v.angular[2]);
  }

  // Totals over ranks; the reason of the failed component with the smallest body.
  const InstantResult& by = by_batches.result;
  result.components += by.components;
  result.iterations += by.iterations;
  result.reflections += by.reflections;
  result.renormalisations += by.renormalisations;
  result.largest_component = std::max(result.largest_component, by.largest_component);
  if (!by.terminated && result.terminated) result.terminated = false, result.reason = by.reason;
  std::int64_t sums[6] = {result.components, result.iterations, result.reflections, result.renormalisations,
                          result.lineality_dimension,
                          static_cast<std::int64_t>(batch_contacts.size()) + by.contacts};
  MPI_Allreduce(MPI_IN_PLACE, sums, 6, MPI_INT64_T, MPI_SUM, comm);
  std::int64_t largest = result.largest_component;
  MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_INT64_T, MPI_MAX, comm);
  double loss = result.projection_energy_loss;
  MPI_Allreduce(MPI_IN_PLACE, &loss, 1, MPI_DOUBLE, MPI_SUM, comm);
  int ok = result.terminated ? 1 : 0, all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
  InstantResult total;
  total.components = sums[0];
  total.iterations = sums[1];
  total.reflections = sums[2];
  total.renormalisations = sums[3];
  total.lineality_dimension = sums[4];
  total.contacts = sums[5];
  total.largest_component = largest;
  total.projection_energy_loss = loss;
  total.terminated = all_ok != 0;
  if (!total.terminated) {
    int first = ok ? size : rank;
    MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm);
    int length = rank == first ? static_cast<int>(result.reason.size()) : 0;
    MPI_Bcast(&length, 1, MPI_INT, first, comm);
    total.reason = rank == first ? result.reason : std::string(static_cast<std::size_t>(length), ' ');
    MPI_Bcast(total.reason.data(), length, MPI_CHAR, first, comm);
  }
  return total;
}

}  // namespace percussion::rigid
