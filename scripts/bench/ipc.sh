#!/usr/bin/env bash
# IPC elastodynamics: the 3D drop_small scene at its own element size and at a finer one (REFINE × it), each on 1
# and 2 ranks for STEPS steps (the slab lands on the plane within the first ten): tetrahedra, Newton iterations
# per step, seconds per step, the shares of the time loop in assembly, contact, CCD and the linear solve (the
# summary's phases), and the 2-rank efficiency t1 / (2 t2) per mesh (goal: >= 0.8 on the finer mesh). Then
# `percussion ccd` on the generated query sets of scripts/bench/ccd.sh: mean microseconds per query (goal: under
# 10) and false negatives (goal: 0).
# Usage: scripts/bench/ipc.sh
# Environment: BUILD_DIR (default build; percussion and ccd_query_sets are built there unless
# PERCUSSION_BENCH_NO_BUILD=1), SCENE (default inputs/ipc/drop_small.json), STEPS (default 10), REFINE (default
# 0.7), COUNT (CCD queries per set, default 10000), KEEP=1 keeps the outputs. Appends a record to
# docs/benchmarks/ipc.jsonl (scripts/bench/record.py).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=scripts/setup.sh
source "$root/scripts/setup.sh"
cd "$root"

build_dir="${BUILD_DIR:-build}"
scene="${SCENE:-inputs/ipc/drop_small.json}"
steps="${STEPS:-10}"
refine="${REFINE:-0.7}"
python="$(percussion_python)"
work="$(mktemp -d "${TMPDIR:-/tmp}/percussion-ipc-bench.XXXXXX")"
[[ "${KEEP:-0}" == 1 ]] || trap 'rm -rf "$work"' EXIT
load_before="$(cat /proc/loadavg)"
echo "machine: $(nproc) cores, /proc/loadavg before the runs: $load_before"
if [[ "${PERCUSSION_BENCH_NO_BUILD:-0}" != 1 ]]; then
  [[ -f "$build_dir/CMakeCache.txt" ]] || cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >"$work/build.log" 2>&1
  cmake --build "$build_dir" -j"$(nproc)" --target percussion ccd_query_sets >>"$work/build.log" 2>&1 ||
    { echo "bench: the build failed; see $work/build.log" >&2; trap - EXIT; exit 1; }
fi
program="$build_dir/percussion"

# Scene copies: every generated mesh's element_size times the factor; one frame at the end and no checkpoints, so
# that the time loop is the solver's.
: > "$work/rows.jsonl"
for mesh in coarse fine; do
  factor=1
  [[ "$mesh" == fine ]] && factor="$refine"
  "$python" - "$scene" "$work/$mesh.json" "$factor" <<'PY'
import json, sys
source, target, factor = sys.argv[1], sys.argv[2], float(sys.argv[3])
s = json.load(open(source))
for body in s["bodies"]:
    if "element_size" in body["mesh"]:
        body["mesh"]["element_size"] *= factor
s["output"] = {"frame_interval": s["time"]["end"]}
s.pop("checkpoint", None)
json.dump(s, open(target, "w"), indent=1)
PY
  for ranks in 1 2; do
    out="$work/${mesh}_$ranks"
    percussion_mpirun -n "$ranks" "$program" run "$work/$mesh.json" --out "$out" --steps "$steps" >"$out.log" 2>&1 ||
      { echo "bench: $mesh mesh on $ranks ranks failed (log: $out.log)" >&2; tail -n 5 "$out.log" >&2; trap - EXIT; exit 1; }
    "$python" - "$out/summary.json" "$mesh" "$ranks" >>"$work/rows.jsonl" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
steps = max(s["steps_run"], 1)
loop = s["loop_seconds"]
c = s["counters"]
share = lambda phase: s["phases"][phase]["avg"] / loop if loop > 0 else 0.0
print(json.dumps({"mesh": sys.argv[2], "ranks": int(sys.argv[3]), "tetrahedra": s["elements"], "dofs": s["dofs"],
                  "steps": steps, "newton_per_step": c["newton_iterations"] / steps,
                  "krylov_per_newton": c["krylov_iterations"] / max(c["newton_iterations"], 1),
                  "seconds_per_step": loop / steps, "loop_seconds": loop,
                  "assembly": share("assembly"), "contact": share("contact"), "ccd": share("ccd"),
                  "linear_solve": share("linear solve"), "contacts_last_step": s["final"].get("contacts", 0),
                  "min_distance": s.get("min_distance"), "inverted_elements": s.get("inverted_elements"),
                  "intersections": s.get("intersections"), "fallbacks": c.get("linear_solver_fallbacks", 0)}))
PY
  done
done

# CCD: scripts/bench/ccd.sh's generated sets and table, its figures kept in this bench's record.
PERCUSSION_BENCH_NO_BUILD=1 BENCH_RECORD=0 BUILD_DIR="$build_dir" bash "$root/scripts/bench/ccd.sh" >"$work/ccd.log" 2>&1 ||
  { echo "bench: scripts/bench/ccd.sh failed (log: $work/ccd.log)" >&2; cat "$work/ccd.log" >&2; trap - EXIT; exit 1; }

"$python" - "$work/rows.jsonl" "$work/ccd.log" "$work/figures.json" "$scene" "$refine" <<'PY'
import json, re, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
ccd_log = open(sys.argv[2]).read()
print(f"{'mesh':6s} {'ranks':>5s} {'tets':>7s} {'Newton/step':>11s} {'Krylov/Newton':>13s} {'s/step':>8s} "
      f"{'assembly':>8s} {'contact':>8s} {'CCD':>8s} {'solve':>8s} {'contacts':>8s} {'min dist':>9s} {'fallbacks':>9s}")
for r in rows:
    print(f"{r['mesh']:6s} {r['ranks']:5d} {r['tetrahedra']:7d} {r['newton_per_step']:11.2f} "
          f"{r['krylov_per_newton']:13.1f} {r['seconds_per_step']:8.4f} {r['assembly']:8.1%} {r['contact']:8.1%} "
          f"{r['ccd']:8.1%} {r['linear_solve']:8.1%} {r['contacts_last_step']:8d} {r['min_distance']:9.3g} "
          f"{int(r['fallbacks']):9d}")
efficiency = {}
for mesh in ("coarse", "fine"):
    t = {r["ranks"]: r["seconds_per_step"] for r in rows if r["mesh"] == mesh}
    efficiency[mesh] = t[1] / (2 * t[2]) if t.get(2) else 0.0
    tets = next(r["tetrahedra"] for r in rows if r["mesh"] == mesh)
    print(f"2-rank efficiency t1/(2 t2), {mesh} mesh ({tets} tetrahedra): {efficiency[mesh]:.2f}")
bad = [r for r in rows if r["inverted_elements"] or r["intersections"]]
if bad:
    print(f"WARNING: inverted elements or intersections in {len(bad)} runs")
print()
table = ccd_log[ccd_log.index("set "):] if "set " in ccd_log else ccd_log
print(table.rstrip())
m = re.search(r"all: (\d+) queries, mean ([0-9.]+) us per query \(([0-9.]+) us CPU; random sets ([0-9.]+) us CPU\), "
              r"false negatives (\d+), false positives (\d+)", ccd_log)
ccd = {"queries": int(m[1]), "mean_us": float(m[2]), "mean_cpu_us": float(m[3]), "random_mean_cpu_us": float(m[4]),
       "false_negatives": int(m[5]), "false_positives": int(m[6])}
print()
met = lambda ok: "met" if ok else "NOT met"
print(f"goal: 2-rank efficiency >= 0.8 on the finer mesh: {efficiency['fine']:.2f} ({met(efficiency['fine'] >= 0.8)})")
print(f"goal: CCD < 10 us per query with 0 false negatives: {ccd['mean_us']:.3f} us ({ccd['mean_cpu_us']:.3f} us CPU), "
      f"{ccd['false_negatives']} false negatives ({met(ccd['mean_us'] < 10 and ccd['false_negatives'] == 0)})")
json.dump({"scene": sys.argv[4], "refine": float(sys.argv[5]), "rows": rows, "efficiency_2_ranks": efficiency,
           "ccd": ccd}, open(sys.argv[3], "w"))
PY
"$python" "$root/scripts/bench/record.py" ipc "$work/figures.json" --load "$load_before" \
  --build-dir "$build_dir" --env SCENE STEPS REFINE COUNT -- scripts/bench/ipc.sh "$@"
