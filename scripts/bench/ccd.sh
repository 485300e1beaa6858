#!/usr/bin/env bash
# Continuous collision detection on generated CCD-Query-IO sets with exact answers (random, near-touching,
# parallel, constructed; vertex-face and edge-edge): `percussion ccd` on each, its mean microseconds per query
# (wall clock and process CPU time), false negatives (goal 0) and false positives. Goal: under 10 us per query.
# Usage: scripts/bench/ccd.sh
# Environment: BUILD_DIR (default build; percussion and ccd_query_sets are built there unless
# PERCUSSION_BENCH_NO_BUILD=1), COUNT (queries per set, default 10000), SEED (default 1), MIN_DISTANCE (default 0),
# KEEP=1 keeps the files. Appends a record to docs/benchmarks/ccd.jsonl (scripts/bench/record.py).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=scripts/setup.sh
source "$root/scripts/setup.sh"
cd "$root"

build_dir="${BUILD_DIR:-build}"
count="${COUNT:-10000}"
seed="${SEED:-1}"
min_distance="${MIN_DISTANCE:-0}"
python="$(percussion_python)"
work="$(mktemp -d "${TMPDIR:-/tmp}/percussion-ccd-bench.XXXXXX")"
[[ "${KEEP:-0}" == 1 ]] || trap 'rm -rf "$work"' EXIT
load_before="$(cat /proc/loadavg)"
echo "machine: $(nproc) cores, /proc/loadavg before the runs: $load_before"
if [[ "${PERCUSSION_BENCH_NO_BUILD:-0}" != 1 ]]; then
  [[ -f "$build_dir/CMakeCache.txt" ]] || cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >"$work/build.log" 2>&1
  cmake --build "$build_dir" -j"$(nproc)" --target percussion ccd_query_sets >>"$work/build.log" 2>&1 ||
    { echo "bench: the build failed; see $work/build.log" >&2; trap - EXIT; exit 1; }
fi
program="$build_dir/percussion"

"$build_dir/tests/ccd_query_sets" "$work" "$count" "$seed" | tee "$work/sets.log"
: > "$work/rows.jsonl"
for set in random near parallel constructed; do
  for type in vertex-face edge-edge; do
    file="$work/${set}_$([[ "$type" == vertex-face ]] && echo vf || echo ee).csv"
    "$program" ccd "$file" --type "$type" --min-distance "$min_distance" >"$work/out.txt" ||
      { echo "bench: percussion ccd failed on $file" >&2; trap - EXIT; exit 1; }
    tail -n 1 "$work/out.txt" | "$python" -c '
import json, re, sys
m = re.match(r"summary: (\d+) queries, false negatives (\d+), false positives (\d+), mean ([0-9.]+) us per query "
             r"\(([0-9.]+) us CPU\)", sys.stdin.read())
q, fn, fp, us, cpu = int(m[1]), int(m[2]), int(m[3]), float(m[4]), float(m[5])
print(json.dumps({"set": sys.argv[1], "type": sys.argv[2], "queries": q, "false_negatives": fn,
                  "false_positives": fp, "mean_us": us, "mean_cpu_us": cpu}))' "$set" "$type" >>"$work/rows.jsonl"
  done
done

"$python" - "$work/rows.jsonl" "$work/figures.json" "$min_distance" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print(f"{'set':12s} {'type':12s} {'queries':>8s} {'false neg':>9s} {'false pos':>9s} {'us/query':>9s} {'CPU us':>9s}")
for r in rows:
    print(f"{r['set']:12s} {r['type']:12s} {r['queries']:8d} {r['false_negatives']:9d} {r['false_positives']:9d} "
          f"{r['mean_us']:9.3f} {r['mean_cpu_us']:9.3f}")
total = sum(r["queries"] for r in rows)
mean = sum(r["mean_us"] * r["queries"] for r in rows) / max(total, 1)
cpu = sum(r["mean_cpu_us"] * r["queries"] for r in rows) / max(total, 1)
random = [r for r in rows if r["set"] == "random"]
random_cpu = sum(r["mean_cpu_us"] * r["queries"] for r in random) / max(sum(r["queries"] for r in random), 1)
fn = sum(r["false_negatives"] for r in rows)
print(f"all: {total} queries, mean {mean:.3f} us per query ({cpu:.3f} us CPU; random sets {random_cpu:.3f} us CPU), "
      f"false negatives {fn}, false positives {sum(r['false_positives'] for r in rows)}")
json.dump({"rows": rows, "min_distance": float(sys.argv[3]), "mean_us": mean, "mean_cpu_us": cpu,
           "random_mean_cpu_us": random_cpu, "false_negatives": fn}, open(sys.argv[2], "w"))
PY
"$python" "$root/scripts/bench/record.py" ccd "$work/figures.json" --load "$load_before" \
  --build-dir "$build_dir" --env COUNT SEED MIN_DISTANCE -- scripts/bench/ccd.sh "$@"
