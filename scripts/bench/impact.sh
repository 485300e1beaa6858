#!/usr/bin/env bash
# One impact resolution of dense ball packs (square lattices of touching balls, random velocities), 2D and 3D, 10^3,
# 10^4 and 10^5 balls, free and confined between two walls, with each operator: iterations, reflections, seconds of
# the resolution (the "impact" phase; contact finding is reported apart), reflections per second (goal: 1e7 per core
# on the 10^5 packs). Then the silo_small scene stepped in time on 1 and 2 ranks: seconds per step, the 2-rank
# efficiency t1 / (2 t2) (goal 0.8) and contacts per step. The free Gauss-Seidel (lowest_index) packs also run on 2
# ranks, gathered and by independent-set batches (impact.gather_limit 0), and by batches on 1 rank.
# Usage: scripts/bench/impact.sh
# Environment: BUILD_DIR (default build; percussion is built there unless PERCUSSION_BENCH_NO_BUILD=1), SIZES
# (default "1000 10000 100000"), OPERATORS (default "gauss_seidel:lowest_index gauss_seidel:most_violated
# gauss_seidel:random generalized_reflections"), GR_MAX (default 10000: larger packs skip Generalized Reflections,
# whose QP per iteration spans the whole violated set), CONFINED_MAX (default 10000: larger packs run free only; a
# square lattice between two walls is jammed row by row, and its lineality program grows fast), SILO_STEPS (default 200), KEEP=1 keeps the outputs. Appends a record to
# docs/benchmarks/impact.jsonl (scripts/bench/record.py).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=scripts/setup.sh
source "$root/scripts/setup.sh"
cd "$root"

build_dir="${BUILD_DIR:-build}"
sizes="${SIZES:-1000 10000 100000}"
operators="${OPERATORS:-gauss_seidel:lowest_index gauss_seidel:most_violated gauss_seidel:random generalized_reflections}"
gr_max="${GR_MAX:-10000}"
confined_max="${CONFINED_MAX:-10000}"
silo_steps="${SILO_STEPS:-200}"
python="$(percussion_python)"
work="$(mktemp -d "${TMPDIR:-/tmp}/percussion-impact-bench.XXXXXX")"
[[ "${KEEP:-0}" == 1 ]] || trap 'rm -rf "$work"' EXIT
load_before="$(cat /proc/loadavg)"
echo "machine: $(nproc) cores, /proc/loadavg before the runs: $load_before"
if [[ "${PERCUSSION_BENCH_NO_BUILD:-0}" != 1 ]]; then
  [[ -f "$build_dir/CMakeCache.txt" ]] || cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >"$work/build.log" 2>&1
  cmake --build "$build_dir" -j"$(nproc)" --target percussion >>"$work/build.log" 2>&1 ||
    { echo "bench: the build failed; see $work/build.log" >&2; trap - EXIT; exit 1; }
fi
program="$build_dir/percussion"

: > "$work/rows.jsonl"
for dim in 2 3; do
  for n in $sizes; do
    for confined in 0 1; do
      [[ "$confined" == 1 && "$n" -gt "$confined_max" ]] && continue
      for op in $operators; do
        [[ "$op" == generalized_reflections* && "$n" -gt "$gr_max" ]] && continue
        name="d${dim}_n${n}_c${confined}_${op/:/_}"
        "$python" - "$work/$name.json" "$dim" "$n" "$confined" "$op" <<'PY'
import json, sys
path, dim, n, confined, op = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1", sys.argv[5]
side = round(n ** (1.0 / dim))
r = 0.5
lo, hi = [0.0] * dim, [side * 2 * r] * dim
scene = {"method": "rigid", "mode": "resolve", "dimension": dim,
         "bodies": [{"type": "ball_lattice", "min": lo, "max": hi, "radius": r, "jitter": 1.0, "seed": 7}],
         "impact": {"operator": op.split(":")[0], "order": op.split(":")[1] if ":" in op else "lowest_index",
                    "seed": 3}}
if confined:
    e = [1.0] + [0.0] * (dim - 1)
    scene["walls"] = [{"point": lo, "normal": e}, {"point": hi, "normal": [-x for x in e]}]
json.dump(scene, open(path, "w"))
PY
        out="$work/$name"
        "$program" run "$work/$name.json" --out "$out" >"$out.log" 2>&1 || status=$?
        "$python" - "$out" "$dim" "$n" "$confined" "$op" "${status:-0}" >>"$work/rows.jsonl" <<'PY'
import json, sys, os
out, dim, n, confined, op, status = sys.argv[1:7]
s = json.load(open(os.path.join(out, "summary.json")))
r = json.load(open(os.path.join(out, "resolution.json"))) if os.path.exists(os.path.join(out, "resolution.json")) else {}
sec = s["phases"]["impact"]["avg"]
refl = r.get("reflections", 0)
print(json.dumps({"dim": int(dim), "balls": s["sizes"]["bodies"], "confined": confined == "1", "operator": op,
                  "exit": int(status), "terminated": r.get("terminated", False), "iterations": r.get("iterations", 0),
                  "reflections": refl, "seconds": sec, "contact_seconds": s["phases"]["contacts"]["avg"],
                  "reflections_per_second": refl / sec if sec > 0 else 0,
                  "energy_error": abs(r.get("energy_after", 0) - r.get("energy_before", 0)) / max(r.get("energy_before", 1), 1e-300)}))
PY
        unset status
      done
    done
  done
done

# The free 2D and 3D packs on 2 ranks, each component gathered on one rank (the default gather_limit) or resolved by
# independent-set batches where its bodies live (gather_limit 0), against the batches on 1 rank.
: > "$work/ranks.jsonl"
for dim in 2 3; do
  for n in $sizes; do
    base="$work/d${dim}_n${n}_c0_gauss_seidel_lowest_index"
    [[ -f "$base.json" ]] || continue  # OPERATORS without gauss_seidel:lowest_index
    for mode in gather:2 batches:1 batches:2; do
      name="${base}_${mode/:/_}"
      "$python" - "$base.json" "$name.json" "${mode%%:*}" <<'PY'
import json, sys
scene = json.load(open(sys.argv[1]))
if sys.argv[3] == "batches":
    scene["impact"]["gather_limit"] = 0
json.dump(scene, open(sys.argv[2], "w"))
PY
      percussion_mpirun -n "${mode##*:}" "$program" run "$name.json" --out "$name" >"$name.log" 2>&1 || status=$?
      "$python" - "$name" "$dim" "$n" "${mode%%:*}" "${mode##*:}" "${status:-0}" >>"$work/ranks.jsonl" <<'PY'
import json, sys, os
out, dim, n, mode, ranks, status = sys.argv[1:7]
s = json.load(open(os.path.join(out, "summary.json")))
r = json.load(open(os.path.join(out, "resolution.json")))
print(json.dumps({"dim": int(dim), "balls": s["sizes"]["bodies"], "mode": mode, "ranks": int(ranks),
                  "exit": int(status), "terminated": r["terminated"], "iterations": r["iterations"],
                  "reflections": r["reflections"], "seconds": s["phases"]["impact"]["avg"],
                  "energy_error": abs(r["energy_after"] - r["energy_before"]) / max(r["energy_before"], 1e-300)}))
PY
      unset status
    done
  done
done

silo="$work/silo"
"$program" run inputs/rigid/silo_small.json --out "$silo" --steps "$silo_steps" >"$silo.log" 2>&1 ||
  { echo "bench: silo_small failed (log: $silo.log)" >&2; trap - EXIT; exit 1; }
percussion_mpirun -n 2 "$program" run inputs/rigid/silo_small.json --out "$silo.2" --steps "$silo_steps" \
  >"$silo.2.log" 2>&1 || { echo "bench: silo_small on 2 ranks failed (log: $silo.2.log)" >&2; trap - EXIT; exit 1; }

"$python" - "$work/rows.jsonl" "$silo/summary.json" "$work/figures.json" "$silo.2/summary.json" "$work/ranks.jsonl" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
ranks = [json.loads(line) for line in open(sys.argv[5])]
print(f"{'dim':>3s} {'balls':>7s} {'walls':>5s} {'operator':30s} {'done':>4s} {'iter':>7s} {'reflections':>11s} "
      f"{'seconds':>8s} {'refl/s':>9s} {'|dE|/E':>8s}")
for r in rows:
    print(f"{r['dim']:3d} {r['balls']:7d} {'yes' if r['confined'] else 'no':>5s} {r['operator']:30s} "
          f"{'yes' if r['terminated'] else 'NO':>4s} {r['iterations']:7d} {r['reflections']:11d} {r['seconds']:8.3f} "
          f"{r['reflections_per_second']:9.3g} {r['energy_error']:8.1e}")
print(f"{'dim':>3s} {'balls':>7s} {'mode':8s} {'ranks':>5s} {'done':>4s} {'sweeps/passes':>13s} {'reflections':>11s} "
      f"{'seconds':>8s} {'|dE|/E':>8s}")
for r in ranks:
    print(f"{r['dim']:3d} {r['balls']:7d} {r['mode']:8s} {r['ranks']:5d} {'yes' if r['terminated'] else 'NO':>4s} "
          f"{r['iterations']:13d} {r['reflections']:11d} {r['seconds']:8.3f} {r['energy_error']:8.1e}")
s = json.load(open(sys.argv[2]))
steps = max(s["steps_run"], 1)
two = json.load(open(sys.argv[4]))
silo = {"balls": s["sizes"]["bodies"], "steps": steps, "seconds_per_step": s["loop_seconds"] / steps,
        "seconds_per_step_2_ranks": two["loop_seconds"] / steps,
        "efficiency_2_ranks": s["loop_seconds"] / (2 * two["loop_seconds"]),
        "contacts_last_step": s["final"]["contacts"], "reflections": s["final"]["reflections"]}
print(f"silo_small: {silo['balls']} balls, {silo['seconds_per_step']:.4f} s per step over {steps} steps on 1 rank, "
      f"{silo['seconds_per_step_2_ranks']:.4f} on 2 (efficiency {silo['efficiency_2_ranks']:.2f}), "
      f"{silo['contacts_last_step']} contacts at the last step")
big = [r for r in rows if r["balls"] >= 90000 and r["reflections"] > 0]
json.dump({"rows": rows, "ranks": ranks, "silo_small": silo,
           "best_reflections_per_second_1e5": max((r["reflections_per_second"] for r in big), default=0)},
          open(sys.argv[3], "w"))
PY
"$python" "$root/scripts/bench/record.py" impact "$work/figures.json" --load "$load_before" \
  --build-dir "$build_dir" --env SIZES OPERATORS GR_MAX CONFINED_MAX SILO_STEPS -- scripts/bench/impact.sh "$@"
