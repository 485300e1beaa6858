# Each frame's effort rows (wall seconds, Newton and Krylov iterations since the previous frame) add up to the
# run's totals, continue across a restart on a frame with the same counts, and plot_observables.py draws them.
source "$(dirname "$0")/../support/cli_common.sh"
PERCUSSION_SKIP_INSTALL=1 source "$PERCUSSION_SOURCE_DIR/scripts/setup.sh"
python=$(percussion_python)
scene=$INPUTS/bdem/cloth_tear_small.json  # implicit: frames at steps 3, 6, ..., 21, 23 (every 2.86 steps); tears from step 15 on
sed 's/"integrator": "implicit"/"integrator": "explicit"/' "$scene" > "$SCRATCH/explicit.json"

"$PERCUSSION" run "$scene" --out "$SCRATCH/full" --steps 23 > "$SCRATCH/log.full" 2>&1
"$PERCUSSION" run "$scene" --out "$SCRATCH/half" --steps 12 > "$SCRATCH/log.half" 2>&1
"$PERCUSSION" run "$scene" --out "$SCRATCH/half" --restart "$SCRATCH/half" --steps 23 > "$SCRATCH/log.rest" 2>&1
"$PERCUSSION" run "$SCRATCH/explicit.json" --out "$SCRATCH/explicit" --steps 300 > "$SCRATCH/log.explicit" 2>&1

"$python" - "$SCRATCH" <<'PY' || fail "effort rows (above)"
import json, sys
import h5py
import numpy as np

scratch = sys.argv[1]

def rows(run):
    with h5py.File(f"{scratch}/{run}/trajectory.h5", "r") as f:
        o = f["observables"]
        return {name: o[name][()] for name in o}, len(f["frames"])

def check(ok, what):
    if not ok:
        print(f"FAIL: {what}", file=sys.stderr)
        sys.exit(1)

full, frames = rows("full")
summary = json.load(open(f"{scratch}/full/summary.json"))
for name in ("wall_seconds", "newton_iterations", "krylov_iterations"):
    check(full[name].shape == (frames,), f"{name} has {full[name].shape} rows for {frames} frames")
for name in ("newton_iterations", "krylov_iterations"):
    check(full[name][0] == 0, f"the initial frame's {name} is {full[name][0]}")
    check(full[name].sum() == summary["counters"][name],
          f"{name}: rows sum to {full[name].sum()}, the summary says {summary['counters'][name]}")
check((full["newton_iterations"][1:] >= 2).all(), f"a frame of 2-3 steps with fewer Newton iterations: {full['newton_iterations']}")
wall = full["wall_seconds"]
check((wall >= 0).all() and wall.sum() <= summary["loop_seconds"] + 0.05,
      f"wall rows {wall} against the loop's {summary['loop_seconds']} s")

half, half_frames = rows("half")
check(half_frames == frames, f"restarted: {half_frames} frames, uninterrupted {frames}")
for name in ("newton_iterations", "krylov_iterations"):
    check(np.array_equal(half[name], full[name]), f"restarted {name} {half[name]} against {full[name]}")

explicit, explicit_frames = rows("explicit")
check(explicit["wall_seconds"].shape == (explicit_frames,), "explicit run without a wall row per frame")
check("newton_iterations" not in explicit, "explicit run with Newton iteration rows")
PY

expect_exit 0 "$python" "$PERCUSSION_SOURCE_DIR/scripts/plot_observables.py" "$SCRATCH/full/trajectory.h5" \
  -o "$SCRATCH/full.png"
[ -s "$SCRATCH/full.png" ] || fail "plot_observables.py wrote no PNG"
expect_exit 0 "$python" "$PERCUSSION_SOURCE_DIR/scripts/plot_observables.py" "$SCRATCH/explicit/trajectory.h5" \
  -o "$SCRATCH/explicit.png"
# Both integrators' runs on one figure; a label count that does not match the trajectories is refused.
expect_exit 0 "$python" "$PERCUSSION_SOURCE_DIR/scripts/plot_observables.py" "$SCRATCH/full/trajectory.h5" \
  "$SCRATCH/explicit/trajectory.h5" -l implicit -l explicit -o "$SCRATCH/both.png"
[ -s "$SCRATCH/both.png" ] || fail "plot_observables.py wrote no PNG for two runs"
expect_exit 2 "$python" "$PERCUSSION_SOURCE_DIR/scripts/plot_observables.py" "$SCRATCH/full/trajectory.h5" \
  "$SCRATCH/explicit/trajectory.h5" -l implicit -o "$SCRATCH/bad.png"
[[ "$OUT" == *"1 --label for 2 trajectories"* ]] || fail "mismatched labels: $OUT"
[ ! -e "$SCRATCH/bad.png" ] || fail "a refused plot wrote its PNG"
