#!/usr/bin/env bash
# What the implicit Newton iteration's options save, as benchmark figures: each row runs one shipped scene with an
# option on and off (the tests in tests/mpi/mpi_implicit_newton.cpp and mpi_implicit_fracture.cpp assert that both
# reach the same minimisers or physics; how much one saves is measured here) and prints the counter it saves in each
# run and their ratio (on / off).
# Usage: scripts/bench/newton_settings.sh [NAME ...]   (default: every row; names as printed)
# Environment: BUILD_DIR (default build; the percussion binary is taken from there, PERCUSSION=path overrides),
# RANKS=N (default 1) runs each on N MPI ranks, KEEP=1 keeps the run directories.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=scripts/setup.sh
source "$root/scripts/setup.sh"
cd "$root"

percussion="${PERCUSSION:-${BUILD_DIR:-build}/percussion}"
ranks="${RANKS:-1}"
python="$(percussion_python)"
work="$(mktemp -d "${TMPDIR:-/tmp}/newton_settings.XXXXXX")"
[[ "${KEEP:-0}" == 1 ]] || trap 'rm -rf "$work"' EXIT

# Rows: name | scene | steps (0: to the end) | counter | JSON merged into both runs | JSON merged into the "off" run.
# The "on" run is the scene with the shared changes; "off" turns the option off on top of them.
rows=(
  'active_set_rounds|plate_drop_small.json|0|newton_iterations|{"implicit":{"form":"bdf2","step_factor":20,"tolerance":1e-8,"active_set_rounds":1}}|{"implicit":{"active_set_rounds":0}}'
  'contact_refresh|plate_drop_small.json|0|hessian_assemblies|{"implicit":{"form":"bdf2","step_factor":20,"tolerance":1e-8,"active_set_rounds":0}}|{"implicit":{"contact_refresh":false}}'
  'contact_refresh_newton|plate_drop_small.json|0|newton_iterations|{"implicit":{"form":"bdf2","step_factor":20,"tolerance":1e-8,"active_set_rounds":0}}|{"implicit":{"contact_refresh":false}}'
  'lagged_hessian|three_point_bending_small.json|14|hessian_assemblies|{"implicit":{"tolerance":1e-8}}|{"implicit":{"hessian_lag_contraction":0,"contact_refresh":false}}'
  'line_search_extrapolation|drop_small.json|8|newton_iterations|{"integrator":"implicit","implicit":{"contact_normal":"current"}}|{"implicit":{"line_search_extrapolation":false}}'
  'line_search_contacts|drop_small.json|8|line_search_trials_per_newton|{"integrator":"implicit","implicit":{"split_above_iterations":0}}|{"implicit":{"line_search_contacts":false}}'
  'predicted_normals|drop_small.json|8|newton_iterations|{"integrator":"implicit","implicit":{"split_above_iterations":0}}|{"implicit":{"contact_normal":"current"}}'
  'iteration_splits|drop_small.json|0|newton_iterations|{"integrator":"implicit"}|{"implicit":{"split_above_iterations":0}}'
)

# scene_with SCENE PATCH OUT: the scene with PATCH merged in (objects key by key), written to OUT.
scene_with() {
  "$python" - "$1" "$2" "$3" <<'PY'
import json, sys
def merge(a, b):
    for k, v in b.items():
        a[k] = merge(a.get(k, {}), v) if isinstance(v, dict) and isinstance(a.get(k), dict) else v
    return a
scene = json.load(open(sys.argv[1]))
json.dump(merge(scene, json.loads(sys.argv[2])), open(sys.argv[3], "w"), indent=1)
PY
}

# counter DIR NAME: a counter of a run's summary.json (line_search_trials_per_newton: trials per Newton iteration).
counter() {
  "$python" - "$1/summary.json" "$2" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])).get("counters", {})
name = sys.argv[2]
if name == "line_search_trials_per_newton":
    print(c["line_search_trials"] / c["newton_iterations"])
else:
    print(c[name])
PY
}

load_before="$(cat /proc/loadavg)"
: > "$work/figures.tsv"
printf '%-26s %-32s %-30s %12s %12s %7s\n' row scene counter on off ratio
for row in "${rows[@]}"; do
  IFS='|' read -r name scene steps what shared off <<<"$row"
  if (( $# > 0 )) && [[ " $* " != *" $name "* ]]; then continue; fi
  scene_with "inputs/bdem/$scene" "$shared" "$work/$name.on.json"
  scene_with "$work/$name.on.json" "$off" "$work/$name.off.json"
  step_args=()
  (( steps > 0 )) && step_args=(--steps "$steps")
  for side in on off; do
    percussion_mpirun -n "$ranks" "$percussion" run "$work/$name.$side.json" --out "$work/$name.$side" \
      "${step_args[@]}" >"$work/$name.$side.log" 2>&1 || { echo "$name ($side) failed: $work/$name.$side.log" >&2; exit 1; }
  done
  a="$(counter "$work/$name.on" "$what")"
  b="$(counter "$work/$name.off" "$what")"
  printf '%-26s %-32s %-30s %12.4g %12.4g %7.3f\n' "$name" "$scene" "$what" "$a" "$b" "$("$python" -c "print($a / $b)")"
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$scene" "$what" "$a" "$b" >> "$work/figures.tsv"
done

"$python" - "$work/figures.tsv" "$work/figures.json" "$ranks" <<'PY'
import json, sys
rows = []
for line in open(sys.argv[1]):
    name, scene, counter, on, off = line.rstrip("\n").split("\t")
    rows.append({"row": name, "scene": scene, "counter": counter, "on": float(on), "off": float(off),
                 "ratio": float(on) / float(off)})
json.dump({"ranks": int(sys.argv[3]), "rows": rows}, open(sys.argv[2], "w"))
PY
"$python" "$root/scripts/bench/record.py" newton_settings "$work/figures.json" --load "$load_before" \
  --build-dir "$(dirname "$percussion")" --env RANKS -- scripts/bench/newton_settings.sh "$@"
