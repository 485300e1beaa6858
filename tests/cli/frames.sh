# Frames and checkpoints fall by simulated time: each at the first step at or after a multiple of its interval
# (counted from time 0, so a restart meets the same times), the end of the scene gets a frame, --steps stops early.
source "$(dirname "$0")/../support/cli_common.sh"
PERCUSSION_SKIP_INSTALL=1 source "$PERCUSSION_SOURCE_DIR/scripts/setup.sh"
python=$(percussion_python)
# A step of 7e-5 s against frames every 5e-4 s (7.14 steps) and checkpoints every 1e-3 s (14.3 steps).
sed -e 's/"time": { "end": 0.1, "step_factor": 0.2 }/"time": { "end": 0.003, "step": 7e-5 }/' \
    -e 's/"frame_interval": 0.005/"frame_interval": 5e-4/' \
    -e 's/"checkpoint": { "every_steps": 500, "keep": 3 }/"checkpoint": { "every_time": 1e-3, "keep": 10 }/' \
    "$INPUTS/bdem/drop_small.json" > "$SCRATCH/s.json"
grep -q '"every_time": 1e-3' "$SCRATCH/s.json" || fail "scene edit"

expect_exit 0 "$PERCUSSION" run "$SCRATCH/s.json" --out "$SCRATCH/full"
expect_exit 0 "$PERCUSSION" run "$SCRATCH/s.json" --out "$SCRATCH/part" --steps 20
expect_exit 0 "$PERCUSSION" run "$SCRATCH/s.json" --out "$SCRATCH/part" --restart "$SCRATCH/part"
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/full/trajectory.h5" "$SCRATCH/part/trajectory.h5" --rtol 0

"$python" - "$SCRATCH" <<'PY' || fail "frame and checkpoint steps (above)"
import json, math, os, sys
import h5py

scratch = sys.argv[1]
dt = 7e-5
def first_step_at(t):
    return math.ceil(t / dt - 1e-9)
frames = sorted({first_step_at(k * 5e-4) for k in range(7)})  # the last one is the end, 0.003 s
assert frames == [0, 8, 15, 22, 29, 36, 43], frames
for run in ("full", "part"):
    with h5py.File(f"{scratch}/{run}/trajectory.h5", "r") as f:
        steps = list(f["observables/step"][()])
        times = list(f["observables/time"][()])
    assert steps == frames, (run, steps, frames)
    assert all(abs(t - s * dt) < 1e-15 for s, t in zip(steps, times)), (run, times)
full = sorted(int(n[5:-3]) for n in os.listdir(f"{scratch}/full/checkpoints") if n.startswith("ckpt_"))
assert full == [15, 29, 43], full  # every 1e-3 s, and the end
part = sorted(int(n[5:-3]) for n in os.listdir(f"{scratch}/part/checkpoints") if n.startswith("ckpt_"))
assert part == [15, 20, 29, 43], part  # --steps 20 leaves its own
summary = json.load(open(f"{scratch}/full/summary.json"))
assert summary["exit"] == "end time" and summary["steps"] == 43, summary["exit"]
assert summary["sizes"] == {"bonds": 8097, "particles": 1529}, summary["sizes"]
assert summary["final"]["bonds_broken"] >= 0 and len(summary["final"]["momentum"]) == 3
print("frames", frames, "checkpoints", full)
PY
