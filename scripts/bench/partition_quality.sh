#!/usr/bin/env bash
# The distributed partitioner (partition_distributed: PETSc's MatPartitioning, PT-Scotch by default) against serial
# METIS on the same graphs (about 200k vertices each: two lattices and the particles of the shipped plate_drop scene
# joined by bonds and touching neighbours; rows spread over the ranks as contiguous slices by id): the edge
# cut of both, their ratio (the goal is at most 1.2), max/mean part size of both, and the partitioner's seconds, at
# each part count (= ranks, oversubscribed). Each count runs twice: "same" says both runs gave the same parts.
# Usage: scripts/bench/partition_quality.sh [PETSc options...]   (e.g. -partition_mat_partitioning_ptscotch_strategy
# balance; they are passed to every run and named in the record)
# Environment: BUILD_DIR (default build; the partition_quality target is built there unless
# PERCUSSION_BENCH_NO_BUILD=1), PARTS (default "2 3 4 6 8"), GRAPHS (default
# "hcp 60 60 56;cubic 58 58 58;scene inputs/bdem/plate_drop.json"; each is partition_quality's arguments),
# KEEP=1 keeps the outputs. Appends a record to docs/benchmarks/partition_quality.jsonl (scripts/bench/record.py).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=scripts/setup.sh
source "$root/scripts/setup.sh"
cd "$root"

build_dir="${BUILD_DIR:-build}"
parts="${PARTS:-2 3 4 6 8}"
graphs="${GRAPHS:-hcp 60 60 56;cubic 58 58 58;scene inputs/bdem/plate_drop.json}"
python="$(percussion_python)"
work="$(mktemp -d "${TMPDIR:-/tmp}/percussion-partition-bench.XXXXXX")"
[[ "${KEEP:-0}" == 1 ]] || trap 'rm -rf "$work"' EXIT
load_before="$(cat /proc/loadavg)"
echo "machine: $(nproc) cores, /proc/loadavg before the runs: $load_before"
if [[ "${PERCUSSION_BENCH_NO_BUILD:-0}" != 1 ]]; then
  if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
    cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >"$work/build.log" 2>&1
  fi
  cmake --build "$build_dir" -j"$(nproc)" --target partition_quality >>"$work/build.log" 2>&1 ||
    { echo "bench: the build failed; last lines of $work/build.log:" >&2; tail -n 40 "$work/build.log" >&2; trap - EXIT; exit 1; }
fi
program="$build_dir/tests/partition_quality"
[[ -x "$program" ]] || { echo "bench: $program not found (set BUILD_DIR, or drop PERCUSSION_BENCH_NO_BUILD)" >&2; exit 1; }

: > "$work/rows.jsonl"
IFS=';' read -r -a graph_list <<<"$graphs"
for i in "${!graph_list[@]}"; do
  read -r -a g <<<"${graph_list[$i]}"
  for p in $parts; do
    for run in 1 2; do
      out="$work/graph$i.$p.$run"
      percussion_mpirun -n "$p" "$program" "${g[@]}" "$@" >"$out.json" 2>"$out.log" ||
        { echo "bench: ${graph_list[$i]} on $p ranks failed (log: $out.log)" >&2; trap - EXIT; exit 1; }
    done
    "$python" - "$work/graph$i.$p.1.json" "$work/graph$i.$p.2.json" >>"$work/rows.jsonl" <<'PY'
import json, sys
a, b = (json.load(open(path)) for path in sys.argv[1:3])
a["same"] = a.pop("parts_hash") == b["parts_hash"]
a["seconds"] = min(a["seconds"], b["seconds"])
a.pop("metis_seconds")
print(json.dumps(a))
PY
  done
done

"$python" - "$work/rows.jsonl" "$work/figures.json" "$*" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print(f"{'graph':18s} {'parts':>5s} {'cut':>8s} {'METIS cut':>9s} {'ratio':>6s} {'max/mean':>8s} "
      f"{'METIS max/mean':>14s} {'seconds':>7s}  same")
for r in rows:
    print(f"{r['graph']:18s} {r['parts']:5d} {r['cut']:8d} {r['metis_cut']:9d} {r['ratio']:6.3f} "
          f"{r['max_over_mean']:8.4f} {r['metis_max_over_mean']:14.4f} {r['seconds']:7.2f}  {'yes' if r['same'] else 'NO'}")
print(f"worst ratio {max(r['ratio'] for r in rows):.3f}, worst max/mean {max(r['max_over_mean'] for r in rows):.4f}, "
      f"every count the same twice: {'yes' if all(r['same'] for r in rows) else 'NO'}")
json.dump({"options": sys.argv[3], "rows": rows, "worst_ratio": max(r["ratio"] for r in rows),
           "worst_max_over_mean": max(r["max_over_mean"] for r in rows),
           "repeatable": all(r["same"] for r in rows)}, open(sys.argv[2], "w"))
PY
"$python" "$root/scripts/bench/record.py" partition_quality "$work/figures.json" --load "$load_before" \
  --build-dir "$build_dir" --env PARTS GRAPHS -- scripts/bench/partition_quality.sh "$@"
