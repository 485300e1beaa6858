# Boxes in the rigid method: the box pile gives the same trajectory bit for bit on 1 and 3 ranks and after a restart
# on another rank count; a box resting on a wall stays at rest for 10^4 steps; a free box keeps its angular
# momentum while it tumbles; one resolution of a cube landing flat
# and of a box-and-ball collision keeps energy and momenta; bad boxes are refused with exit 2.
source "$(dirname "$0")/../support/cli_common.sh"
PY=/usr/bin/python3
json_get() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
edit() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); $3; json.dump(d, open(sys.argv[2],'w'))" "$1" "$2"; }

edit "$INPUTS/rigid/box_pile.json" "$SCRATCH/pile.json" "d['time']['end']=0.2; d['output']['frame_interval']=0.05"
expect_exit 0 "$PERCUSSION" run "$SCRATCH/pile.json" --out "$SCRATCH/pile1"
expect_exit 0 "$MPIEXEC" -n 3 "$PERCUSSION" run "$SCRATCH/pile.json" --out "$SCRATCH/pile3"
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/pile1/trajectory.h5" "$SCRATCH/pile3/trajectory.h5" --rtol 0
[ "$(json_get "$SCRATCH/pile1/summary.json" "d['final']['reflections'] > 0")" = True ] ||
  fail "no impacts in the pile: $(cat "$SCRATCH/pile1/summary.json")"
# Stopped on 3 ranks, continued on 2: orientations and spins come back from the checkpoint.
expect_exit 0 "$MPIEXEC" -n 3 "$PERCUSSION" run "$SCRATCH/pile.json" --out "$SCRATCH/split" --steps 170
expect_exit 0 "$MPIEXEC" -n 2 "$PERCUSSION" run "$SCRATCH/pile.json" --out "$SCRATCH/split" --restart "$SCRATCH/split"
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/pile1/trajectory.h5" "$SCRATCH/split/trajectory.h5" --rtol 0
"$PY" - "$SCRATCH/pile1/trajectory.h5" <<'PYEOF' || fail "the pile's frames"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
first, last = (f["frames"][k] for k in (sorted(f["frames"])[0], sorted(f["frames"])[-1]))
q0, q1 = first["quaternion"][:], last["quaternion"][:]
assert np.allclose(np.linalg.norm(q1, axis=1), 1, atol=1e-12), q1
assert np.abs(q1 - q0).max() > 0.01, "no box turned"
assert np.abs(last["angular_velocity"][:]).max() > 0, "no box spins"
PYEOF

# A box resting flat on a wall under gravity stays at rest for 10^4 steps: same position, same orientation.
cat > "$SCRATCH/rest.json" <<'JSON'
{ "method": "rigid", "dimension": 3, "gravity": [0, 0, -9.81],
  "bodies": [ { "type": "box", "half_extents": [0.2, 0.1, 0.05], "position": [0.1, 0.2, 0.05],
                "orientation": [0, 0, 0.3826834323650898, 0.9238795325112867], "density": 700 } ],
  "walls": [ { "point": [0, 0, 0], "normal": [0, 0, 1] } ],
  "time": { "end": 10, "step": 1e-3 }, "output": { "frame_interval": 10 } }
JSON
expect_exit 0 "$PERCUSSION" run "$SCRATCH/rest.json" --out "$SCRATCH/rest"
"$PY" - "$SCRATCH/rest/trajectory.h5" <<'PYEOF' || fail "the resting box moved"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
first, last = (f["frames"][k] for k in (sorted(f["frames"])[0], sorted(f["frames"])[-1]))
assert last.attrs["step"] == 10000, last.attrs["step"]
assert np.abs(last["position"][0] - first["position"][0]).max() <= 1e-15, last["position"][0]
assert np.abs(last["quaternion"][0] - first["quaternion"][0]).max() <= 1e-15, last["quaternion"][0]
assert np.abs(last["velocity"][0]).max() <= 1e-15 and np.abs(last["angular_velocity"][0]).max() <= 1e-15
PYEOF

# A free box spinning about a tilted axis: its world angular momentum is kept to round-off while it tumbles.
cat > "$SCRATCH/spin.json" <<'JSON'
{ "method": "rigid", "dimension": 3,
  "bodies": [ { "type": "box", "half_extents": [0.3, 0.2, 0.1], "position": [0, 0, 0], "velocity": [0.1, 0, 0],
                "angular_velocity": [1, 5, 0.2], "mass": 2 } ],
  "time": { "end": 2, "step": 1e-3 }, "output": { "frame_interval": 0.5 } }
JSON
expect_exit 0 "$PERCUSSION" run "$SCRATCH/spin.json" --out "$SCRATCH/spin"
"$PY" - "$SCRATCH/spin/trajectory.h5" <<'PYEOF' || fail "the free box"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
h, m = np.array([0.3, 0.2, 0.1]), 2.0
inertia = m / 3 * np.array([h[1]**2 + h[2]**2, h[0]**2 + h[2]**2, h[0]**2 + h[1]**2])
def rot(q):
    x, y, z, w = q
    return np.array([[1 - 2*(y*y + z*z), 2*(x*y - z*w), 2*(x*z + y*w)], [2*(x*y + z*w), 1 - 2*(x*x + z*z), 2*(y*z - x*w)],
                     [2*(x*z - y*w), 2*(y*z + x*w), 1 - 2*(x*x + y*y)]])
frames = [f["frames"][k] for k in sorted(f["frames"])]
L = [rot(fr["quaternion"][0]) @ np.diag(inertia) @ rot(fr["quaternion"][0]).T @ fr["angular_velocity"][0] for fr in frames]
assert len(frames) == 5 and np.abs(frames[-1]["quaternion"][0] - frames[0]["quaternion"][0]).max() > 0.1
assert max(np.abs(l - L[0]).max() for l in L) <= 1e-11 * np.abs(L[0]).max(), L  # 2000 steps of round-off
assert abs(frames[-1]["position"][0][0] - 0.2) < 1e-12
PYEOF

# One resolution: a cube landing flat on the floor, Generalized Reflections: normal velocity reversed, no spin.
cat > "$SCRATCH/land.json" <<'JSON'
{ "method": "rigid", "mode": "resolve", "dimension": 3,
  "bodies": [ { "type": "box", "half_extents": [1, 1, 1], "position": [0.3, -0.2, 1], "velocity": [0.5, 0, -2],
                "mass": 2 } ],
  "walls": [ { "point": [0, 0, 0], "normal": [0, 0, 1] } ],
  "impact": { "operator": "generalized_reflections" } }
JSON
expect_exit 0 "$PERCUSSION" run "$SCRATCH/land.json" --out "$SCRATCH/land"
r=$SCRATCH/land/resolution.json
[ "$(json_get "$r" "d['terminated'], len(d['impulses']), abs(d['velocities'][0][2] - 2) < 1e-12, max(map(abs, d['angular_velocities'][0])) < 1e-12, abs(d['energy_after'] - d['energy_before']) <= 1e-14 * d['energy_before']")" = "True 4 True True True" ] ||
  fail "landing cube: $(cat "$r")"

# A spinning box hits a ball and a second box (no walls), Gauss-Seidel: energy, momentum and angular momentum kept.
cat > "$SCRATCH/hit.json" <<'JSON'
{ "method": "rigid", "mode": "resolve", "dimension": 3,
  "bodies": [ { "type": "box", "half_extents": [1, 0.5, 0.25], "position": [0, 0, 0], "velocity": [1, 0.2, 0],
                "angular_velocity": [0.3, -0.5, 2], "orientation": [0, 0, 0.25881904510252074, 0.9659258262890683] },
              { "type": "ball", "position": [1.199038105676658, 0.9232050807568877, 0], "radius": 0.5, "mass": 3 },
              { "type": "box", "half_extents": [0.5, 0.5, 0.5], "position": [0, 0, 0.75], "mass": 0.5,
                "velocity": [0, 0, -1] } ] }
JSON
expect_exit 0 "$PERCUSSION" run "$SCRATCH/hit.json" --out "$SCRATCH/hit"
"$PY" - "$SCRATCH/hit/resolution.json" <<'PYEOF' || fail "box and ball: $(cat "$SCRATCH/hit/resolution.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["terminated"] and d["reflections"] > 0, d
assert len(d["angular_velocities"]) == 3 and d["angular_velocities"][1] == [0, 0, 0], d["angular_velocities"]
assert abs(d["energy_after"] - d["energy_before"]) <= 1e-14 * d["energy_before"]
for key in ("momentum", "angular_momentum"):
    for a, b in zip(d[key + "_before"], d[key + "_after"]):
        assert abs(a - b) <= 1e-14 * 10, (key, a, b)
assert min(i["impulse"] for i in d["impulses"]) >= 0
PYEOF

# Bad boxes: exit 2 and the JSON path.
bad() {
  edit "$SCRATCH/land.json" "$SCRATCH/bad.json" "$1"
  expect_exit 2 "$PERCUSSION" run "$SCRATCH/bad.json" --out "$SCRATCH/bad_out"
  expect_output "bad.json"
  expect_output "$2"
}
bad "d['bodies'][0]['position'][2]=0.9" "/walls/0: box 0 (/bodies/0) reaches"
bad "d['bodies'].append({'type': 'box', 'half_extents': [1, 1, 1], 'position': [1.3, 0, 1]})" "/bodies: bodies 0 (/bodies/0) and 1 (/bodies/1) overlap"
bad "d['bodies'][0]['orientation']=[0, 0, 0, 0]" "/bodies/0/orientation: must not be zero"
bad "d['bodies'][0]['density']=3" "/bodies/0: give \"mass\" or \"density\""
bad "d['bodies'][0]['half_extents']=[1, 0, 1]" "/bodies/0/half_extents/1"
bad "d['dimension']=2; d['bodies'][0]['position']=[0, 1]; d['walls']=[]" "/bodies/0/type: boxes need"
echo "rigid boxes: pile bit-identical on 1 and 3 ranks and across a restart, resting box, resolutions, bad boxes"
