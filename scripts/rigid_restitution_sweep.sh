#!/usr/bin/env bash
# The 900-ball box (inputs/rigid/granular_box.json) run once per coefficient of restitution (energetic restitution,
# notes Alg. J2), and its kinetic energy against time plotted with one curve per coefficient: how fast a granular
# gas cools into a resting pile as impacts lose energy.
# Usage: scripts/rigid_restitution_sweep.sh [OUT_DIR]   (default out/rigid_restitution_sweep)
# Environment: BUILD_DIR (default build; percussion is built there unless PERCUSSION_NO_BUILD=1), RESTITUTIONS
# (default "1 0.9 0.7 0.5 0.3 0"), RANKS (default 2), END (simulated seconds, default the scene's 0.5),
# FRAME_INTERVAL (seconds between the frames that record the energy, default 0.0025).
# Writes OUT_DIR/c_<coefficient>/ (each run's outputs), OUT_DIR/kinetic_energy.png and OUT_DIR/kinetic_energy.csv.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/setup.sh
source "$root/scripts/setup.sh"
cd "$root"

build_dir="${BUILD_DIR:-build}"
out="${1:-out/rigid_restitution_sweep}"
restitutions="${RESTITUTIONS:-1 0.9 0.7 0.5 0.3 0}"
ranks="${RANKS:-2}"
python="$(percussion_python)"
[[ "${PERCUSSION_NO_BUILD:-0}" == 1 ]] || percussion_build "$build_dir" Release >/dev/null
mkdir -p "$out"

runs=()
for c in $restitutions; do
  scene="$out/granular_box_c$c.json"
  "$python" - inputs/rigid/granular_box.json "$scene" "$c" "${END:-}" "${FRAME_INTERVAL:-0.0025}" <<'PY'
import json, sys
scene = json.load(open(sys.argv[1]))
scene["output"]["frame_interval"] = float(sys.argv[5])
scene["impact"]["restitution"] = float(sys.argv[3])
scene["impact"]["restitution_model"] = "energetic"
scene.pop("checkpoint", None)
if sys.argv[4]:
    scene["time"]["end"] = float(sys.argv[4])
json.dump(scene, open(sys.argv[2], "w"), indent=1)
PY
  echo "== restitution $c on $ranks ranks"
  status=0
  percussion_mpirun -n "$ranks" "$build_dir/percussion" run "$scene" --out "$out/c_$c" --overwrite >"$out/c_$c.log" 2>&1 ||
    status=$?
  # A run that stops early (exit 3: a numerical failure, e.g. an impact program that did not converge) is plotted up
  # to its last frame and said so; one that wrote no trajectory ends the sweep.
  if (( status != 0 )); then
    echo "rigid_restitution_sweep: restitution $c stopped with exit $status: $(grep -m1 '^error' "$out/c_$c.log" || true)" >&2
    [[ -f "$out/c_$c/trajectory.h5" ]] || exit 1
  fi
  runs+=("$c" "$out/c_$c/trajectory.h5" "$status")
done

"$python" - "$out" "${runs[@]}" <<'PY'
import sys
import h5py
import matplotlib
matplotlib.use("Agg")  # files only; works without a display
import matplotlib.pyplot as plt

out, pairs = sys.argv[1], sys.argv[2:]
fig, ax = plt.subplots(figsize=(7, 4.5))
rows = []
for c, path, status in zip(pairs[0::3], pairs[1::3], pairs[2::3]):
    with h5py.File(path, "r") as f:
        t, kinetic = f["observables/time"][()], f["observables/kinetic"][()]
    stopped = f" (stopped at t = {t[-1]:.3g} s, exit {status})" if status != "0" else ""
    ax.plot(t, kinetic, label=f"restitution {c}{stopped}")
    rows += [(c, ti, ki) for ti, ki in zip(t, kinetic)]
    print(f"restitution {c}: kinetic energy {kinetic[0]:.4g} J at t = 0, {kinetic[-1]:.4g} J at t = {t[-1]:g} s")
ax.set_xlabel("time (s)")
ax.set_ylabel("kinetic energy (J)")
ax.set_yscale("log")
ax.set_title("granular_box: 900 balls under gravity", fontsize=11)
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(f"{out}/kinetic_energy.png", dpi=120)
with open(f"{out}/kinetic_energy.csv", "w") as f:
    f.write("restitution,time,kinetic\n")
    f.writelines(f"{c},{t!r},{k!r}\n" for c, t, k in rows)
print(f"wrote {out}/kinetic_energy.png and {out}/kinetic_energy.csv")
PY
