#!/usr/bin/env bash
# Two builds of percussion on the same scenes, interleaved: the time loop's seconds of each (the shortest of REPEAT
# runs), their ratio, and whether the last frames agree. For "the change leaves speed and trajectories alone".
#   scripts/bench/binaries.sh OLD_BINARY NEW_BINARY [SCENE...]
# Default scenes: the small explicit and implicit ones. Environment: REPEAT (default 3), NP (ranks, default 1),
# KEEP=1 keeps the runs. Writes a record to docs/benchmarks/binaries.jsonl (scripts/bench/record.py).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PERCUSSION_SKIP_INSTALL=${PERCUSSION_SKIP_INSTALL:-0} source "$root/scripts/setup.sh"
if (( $# < 2 )); then
  echo "usage: $0 OLD_BINARY NEW_BINARY [SCENE...]" >&2
  exit 2
fi
old="$(realpath "$1")" new="$(realpath "$2")"
shift 2
scenes=("$@")
if (( ${#scenes[@]} == 0 )); then
  scenes=("$root"/inputs/bdem/{drop_small,beam_snap_small,plate_drop_small,cloth_tear_small,beam_twist_small}.json)
fi
repeat=${REPEAT:-3} np=${NP:-1}
python="$(percussion_python)"
work="$(mktemp -d /tmp/percussion-binaries-bench.XXXXXX)"
[[ "${KEEP:-0}" == 1 ]] || trap 'rm -rf "$work"' EXIT
load_before="$(cat /proc/loadavg)"
echo "machine: $(nproc) cores, /proc/loadavg before the runs: $load_before"

for scene in "${scenes[@]}"; do
  stem="$(basename "$scene" .json)"
  for r in $(seq 1 "$repeat"); do
    for which in old new; do
      binary=$old
      [[ $which == new ]] && binary=$new
      percussion_mpirun -np "$np" "$binary" run "$scene" --out "$work/$stem.$which.$r" > "$work/$stem.$which.$r.log" 2>&1 ||
        { echo "bench: $which failed on $scene (log: $work/$stem.$which.$r.log)" >&2; trap - EXIT; exit 1; }
    done
  done
  "$new" compare "$work/$stem.old.1/trajectory.h5" "$work/$stem.new.1/trajectory.h5" --rtol 0 \
    > "$work/$stem.compare" 2>&1 || true
done

"$python" - "$work" "$repeat" "$work/figures.json" "${scenes[@]}" <<'PY'
import json, os, sys
work, repeat, figures_path, scenes = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
rows = []
print(f"{'scene':28s} {'old s':>9s} {'new s':>9s} {'new/old':>8s}  last frames")
for scene in scenes:
    stem = os.path.basename(scene)[:-5]
    def loop(which):
        return min(json.load(open(f"{work}/{stem}.{which}.{r}/summary.json"))["loop_seconds"] for r in range(1, repeat + 1))
    old, new = loop("old"), loop("new")
    same = open(f"{work}/{stem}.compare").read().strip().splitlines()[-1:] == ["equal (rtol 0)"]
    rows.append({"scene": stem, "old_loop_seconds": old, "new_loop_seconds": new, "ratio": new / old, "equal": same})
    print(f"{stem:28s} {old:9.3f} {new:9.3f} {new / old:8.3f}  {'equal' if same else 'DIFFERENT'}")
json.dump({"repeat": repeat, "scenes": rows}, open(figures_path, "w"))
PY
"$python" "$root/scripts/bench/record.py" binaries "$work/figures.json" --load "$load_before" \
  --build-dir "$(dirname "$new")" --env REPEAT NP -- scripts/bench/binaries.sh "$old" "$new" "${scenes[@]}"
