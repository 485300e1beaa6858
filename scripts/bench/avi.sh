#!/usr/bin/env bash
# Asynchronous variational contact on the notes' box of particles (000 §5.2): events per second, how many pair
# evaluations a synchronous penalty integrator at the run's smallest layer step would need per asynchronous one, the
# energy change (elastic, no gravity) and decay (e = 0.5 under gravity), and the broad phase against every pair.
# Usage: scripts/bench/avi.sh
# Environment: BUILD_DIR (default build; avi_box is built there unless PERCUSSION_BENCH_NO_BUILD=1), SPHERES (default
# 900), END (simulated seconds, default 0.5). Appends a record to docs/benchmarks/avi.jsonl (scripts/bench/record.py).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=scripts/setup.sh
source "$root/scripts/setup.sh"
cd "$root"
build_dir="${BUILD_DIR:-build}"
spheres="${SPHERES:-900}"
end="${END:-0.5}"
python="$(percussion_python)"
work="$(mktemp -d "${TMPDIR:-/tmp}/percussion-avi-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
load_before="$(cat /proc/loadavg)"
echo "machine: $(nproc) cores, /proc/loadavg before the runs: $load_before"
if [[ "${PERCUSSION_BENCH_NO_BUILD:-0}" != 1 ]]; then
  [[ -f "$build_dir/CMakeCache.txt" ]] || cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >"$work/build.log" 2>&1
  cmake --build "$build_dir" -j"$(nproc)" --target avi_box >>"$work/build.log" 2>&1 ||
    { echo "bench: the build failed; see $work/build.log" >&2; trap - EXIT; exit 1; }
fi
"$build_dir/tests/avi_box" "$spheres" "$end" >"$work/rows.jsonl"
"$python" - "$work/rows.jsonl" "$work/figures.json" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print(f"{'case':20s} {'spheres':>7s} {'events/s':>9s} {'layer ev':>9s} {'cert ev':>8s} {'rebuilds':>8s} {'pairs':>7s} "
      f"{'deepest':>7s} {'dE/E0':>9s} {'sync/async':>10s}")
for r in rows:
    if "events" not in r:
        continue
    print(f"{r['case']:20s} {r['spheres']:7d} {r['events_per_s']:9.3g} {r['layer_events']:9d} {r['certificate_events']:8d} "
          f"{r['rebuilds']:8d} {r['pairs']:7d} {r['deepest_layer']:7d} {r['energy_change']:9.2e} "
          f"{r['synchronous_per_asynchronous']:10.3g}")
last = rows[-1]
print(f"broad phase vs every pair ({last['spheres']} spheres): {last['speedup']:.2f}x faster, positions differ by "
      f"{last['max_position_difference']:.2e} of the box")
json.dump({"rows": rows}, open(sys.argv[2], "w"))
PY
"$python" "$root/scripts/bench/record.py" avi "$work/figures.json" --load "$load_before" \
  --build-dir "$build_dir" --env SPHERES END -- scripts/bench/avi.sh "$@"
