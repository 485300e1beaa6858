#!/usr/bin/env bash
# Scale consistency of bonded DEM fracture (paper §6.3, Table 2; notes 001 test T11): three-point bending at three
# resolutions, the same beam, supports and load. Prints each run's particles, the frame of the first broken bond
# (where the crack starts), the bonds broken by the end, seconds per frame and Newton iterations per step, and the
# spread of the first-fracture frames against the paper's 23/25/25 (532, 1.8K and 18K particles).
# Usage: scripts/bench/scale_consistency.sh [SCENE.json ...]
#   (default: inputs/bdem/three_point_bending_small.json, three_point_bending_mid.json, three_point_bending.json)
# Environment: BUILD_DIR (default build) is configured and built first unless PERCUSSION_BENCH_NO_BUILD=1;
# INTEGRATOR=explicit runs the copies explicitly at their own stable step (the 19K beam then took 17 minutes here);
# END=seconds shortens every run (the crack starts by 0.15 s; the 19K beam's last steps, where the supports crush
# and the crack bursts, take most of its run); KEEP=1 keeps the run directories. Each run appends a record to
# docs/benchmarks/scale_consistency.jsonl (scripts/bench/record.py; BENCH_RECORD=0 skips it).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=scripts/setup.sh
source "$root/scripts/setup.sh"
cd "$root"

build_dir="${BUILD_DIR:-build}"
percussion="$build_dir/percussion"
python="$(percussion_python)"
integrator="${INTEGRATOR:-implicit}"
if [[ "$integrator" != implicit && "$integrator" != explicit ]]; then
  echo "bench: INTEGRATOR must be implicit or explicit, got '$integrator'" >&2
  exit 2
fi

if (( $# > 0 )); then
  scenes=("$@")
else
  scenes=(inputs/bdem/three_point_bending_small.json inputs/bdem/three_point_bending_mid.json
          inputs/bdem/three_point_bending.json)
fi
for scene in "${scenes[@]}"; do
  if [[ ! -f "$scene" ]]; then
    echo "bench: scene $scene does not exist" >&2
    exit 2
  fi
done

percussion_bench_start scale "$build_dir"
load_before="$(cat /proc/loadavg)"

stems=()
for scene in "${scenes[@]}"; do
  stem="$(basename "$scene" .json)"
  stems+=("$stem")
  "$python" - "$scene" "$work/$stem.json" "$integrator" "${END:-}" <<'EOF'
import json, sys
src, dst, integrator, end = sys.argv[1:5]
with open(src) as f:
    scene = json.load(f)
scene["integrator"] = integrator
if integrator == "explicit":
    scene["time"].pop("step", None)  # its own stable step
if end:
    scene["time"]["end"] = float(end)
scene.pop("checkpoint", None)
with open(dst, "w") as f:
    json.dump(scene, f, indent=1)
EOF
  echo "bench: $stem ($integrator)" >&2
  if ! "$percussion" run "$work/$stem.json" --out "$work/$stem" --overwrite >"$work/$stem.log" 2>&1; then
    echo "bench: $stem failed; last lines of $work/$stem.log:" >&2
    tail -n 20 "$work/$stem.log" >&2
    exit 1
  fi
done

"$python" - "$work" "$integrator" "${stems[@]}" <<'EOF'
import json, os, sys
import h5py

work, integrator, stems = sys.argv[1], sys.argv[2], sys.argv[3:]
rows = []
for stem in stems:
    with open(os.path.join(work, stem, "summary.json")) as f:
        summary = json.load(f)
    with open(os.path.join(work, stem + ".json")) as f:
        frame = json.load(f)["output"]["frame_interval"]
    with h5py.File(os.path.join(work, stem, "trajectory.h5"), "r") as f:
        broken = f["observables"]["bonds_broken"][:]
        time = f["observables"]["time"][:]
        bonds = f["frames"][sorted(f["frames"].keys())[0]]["bonds"].shape[0]
    hits = [t for t, b in zip(time, broken) if b > 0]
    onset = round(hits[0] / frame) if hits else None
    frames = summary["simulated_time"] / frame
    counters = summary.get("counters", {})
    rows.append((stem, summary["particles"], bonds, onset, int(broken[-1]), summary["loop_seconds"] / frames,
                 counters.get("newton_per_step")))

print(f"\n{integrator}, 1 rank; first fracture = the frame of the first broken bond (the crack's start at the bottom of mid-span)")
print(f"{'scene':<28} {'particles':>9} {'bonds':>8} {'first fracture':>14} {'broken at end':>13} {'s/frame':>9} {'Newton/step':>11}")
for stem, n, bonds, onset, end, spf, newton in rows:
    newton_text = f"{newton:.2f}" if newton is not None else "-"
    onset_text = str(onset) if onset is not None else "none"
    print(f"{stem:<28} {n:>9} {bonds:>8} {onset_text:>14} {end:>13} {spf:>9.3g} {newton_text:>11}")
onsets = [r[3] for r in rows if r[3] is not None]
if len(onsets) > 1:
    mean = sum(onsets) / len(onsets)
    print(f"first-fracture frames {'/'.join(map(str, onsets))}: spread {max(onsets) - min(onsets)} frames, "
          f"{(max(onsets) - min(onsets)) / mean:.0%} of their mean (paper, Table 2: 23/25/25, 8 %; its FEM 6/13/29, "
          f"MPM 26/23/11)")
figures = {"integrator": integrator, "ranks": 1, "scenes": [
    {"scene": stem, "particles": n, "bonds": bonds, "first_fracture_frame": onset, "broken_at_end": end,
     "seconds_per_frame": spf, "newton_per_step": newton} for stem, n, bonds, onset, end, spf, newton in rows]}
with open(os.path.join(work, "figures.json"), "w") as f:
    json.dump(figures, f)
EOF
"$python" "$root/scripts/bench/record.py" scale_consistency "$work/figures.json" --load "$load_before" \
  --build-dir "$build_dir" --env INTEGRATOR END -- scripts/bench/scale_consistency.sh "$@"
echo "bench: run directories in $work$( [[ "${KEEP:-0}" == 1 ]] || echo ' (removed; KEEP=1 keeps them)')"
