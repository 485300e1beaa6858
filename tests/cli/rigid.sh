# The rigid method from the command line: one resolution to resolution.json, time stepping with a restart equal bit
# for bit to an uninterrupted run, a ball at rest on a wall that stays there, and bad scenes refused with exit 2.
source "$(dirname "$0")/../support/cli_common.sh"
PY=/usr/bin/python3
scenes=$INPUTS/rigid

# json_get FILE EXPR: evaluate a python expression on the parsed file `d`.
json_get() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
# edit SRC DST EXPR: the scene with a python statement applied to `d`.
edit() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); $3; json.dump(d, open(sys.argv[2],'w'))" "$1" "$2"; }

# Newton's cradle in every order: (0, 0, 0, 0, 1) after 4 reflections, energy and momentum kept.
for order in lowest_index most_violated random; do
  edit "$scenes/newtons_cradle.json" "$SCRATCH/cradle.json" "d['impact']['order']='$order'"
  expect_exit 0 "$PERCUSSION" run "$SCRATCH/cradle.json" --out "$SCRATCH/cradle_$order"
  r=$SCRATCH/cradle_$order/resolution.json
  [ "$(json_get "$r" "d['terminated'], d['reflections']")" = "True 4" ] || fail "$order: $(cat "$r")"
  [ "$(json_get "$r" "max(abs(v[0] - w) + abs(v[1]) for v, w in zip(d['velocities'], [0, 0, 0, 0, 1])) < 1e-14")" = True ] ||
    fail "$order: $(cat "$r")"
  [ "$(json_get "$r" "abs(d['energy_after'] - d['energy_before']) <= 1e-15")" = True ] || fail "energy: $(cat "$r")"
  [ "$(json_get "$r" "abs(d['momentum_after'][0] - d['momentum_before'][0]) < 1e-14")" = True ] ||
    fail "momentum: $(cat "$r")"
  [ "$(json_get "$r" "len(d['impulses']), min(i['impulse'] for i in d['impulses']) > 0")" = "4 True" ] ||
    fail "impulses: $(cat "$r")"
done
# Generalized Reflections: one QP per violated contact here, the same result; energetic restitution c = 0.5 blends
# the inelastic (0.2, ..., 0.2) and the elastic result: (0.1, 0.1, 0.1, 0.1, 0.6), kinetic energy 0.2 J.
edit "$scenes/newtons_cradle.json" "$SCRATCH/gr.json" "d['impact']={'operator': 'generalized_reflections'}"
expect_exit 0 "$PERCUSSION" run "$SCRATCH/gr.json" --out "$SCRATCH/gr"
[ "$(json_get "$SCRATCH/gr/resolution.json" "d['terminated'], d['iterations'], max(abs(v[0] - w) for v, w in zip(d['velocities'], [0, 0, 0, 0, 1])) < 1e-12")" = "True 4 True" ] ||
  fail "GR cradle: $(cat "$SCRATCH/gr/resolution.json")"
edit "$scenes/newtons_cradle.json" "$SCRATCH/j2.json" "d['impact']['restitution']=0.5"
expect_exit 0 "$PERCUSSION" run "$SCRATCH/j2.json" --out "$SCRATCH/j2"
[ "$(json_get "$SCRATCH/j2/resolution.json" "max(abs(v[0] - w) for v, w in zip(d['velocities'], [0.1, 0.1, 0.1, 0.1, 0.6])) < 1e-12, abs(d['energy_after'] - 0.2) < 1e-12")" = "True True" ] ||
  fail "restitution 0.5: $(cat "$SCRATCH/j2/resolution.json")"
expect_exit 0 "$PERCUSSION" info "$SCRATCH/cradle_random/trajectory.h5"
expect_output "frames: 2"

# A ball resting on a wall under gravity stays at rest, elastic as it is: after 10^4 steps it has not moved.
cat > "$SCRATCH/rest.json" <<'JSON'
{ "method": "rigid", "dimension": 2, "gravity": [0, -9.81],
  "bodies": [ { "type": "ball", "position": [0, 0.5], "radius": 0.5 } ],
  "walls": [ { "point": [0, 0], "normal": [0, 1] } ],
  "time": { "end": 10, "step": 1e-3 }, "output": { "frame_interval": 10 } }
JSON
expect_exit 0 "$PERCUSSION" run "$SCRATCH/rest.json" --out "$SCRATCH/rest"
"$PY" - "$SCRATCH/rest/trajectory.h5" <<'PYEOF' || fail "the resting ball moved"
import sys, h5py
f = h5py.File(sys.argv[1], "r")
last = sorted(f["frames"])[-1]
y = f["frames"][last]["position"][0][1]
assert f["frames"][last].attrs["step"] == 10000, f["frames"][last].attrs["step"]
assert y == 0.5, y
v = f["frames"][last]["velocity"][0]
assert abs(v[1]) == 0.0, v
PYEOF

# Time stepping: stopped at step 400 and restarted, the billiard break ends equal bit for bit to a straight run.
edit "$scenes/billiard_break.json" "$SCRATCH/break.json" "d['time']['end']=0.1; d['output']['frame_interval']=0.02"
expect_exit 0 "$PERCUSSION" run "$SCRATCH/break.json" --out "$SCRATCH/straight"
expect_exit 0 "$PERCUSSION" run "$SCRATCH/break.json" --out "$SCRATCH/split" --steps 400
expect_exit 0 "$PERCUSSION" run "$SCRATCH/break.json" --out "$SCRATCH/split" --restart "$SCRATCH/split"
expect_output "restarted from"
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/straight/trajectory.h5" "$SCRATCH/split/trajectory.h5" --rtol 0
[ "$(json_get "$SCRATCH/straight/summary.json" "d['final']['reflections'] > 0")" = True ] ||
  fail "the break reflected nothing: $(cat "$SCRATCH/straight/summary.json")"

# Bad scenes: exit 2, the file and the JSON path named, nothing written.
bad() {
  local expr=$1 want=$2
  edit "$scenes/newtons_cradle.json" "$SCRATCH/bad.json" "$expr"
  expect_exit 2 "$PERCUSSION" run "$SCRATCH/bad.json" --out "$SCRATCH/bad_out"
  expect_output "bad.json"
  expect_output "$want"
  [ ! -e "$SCRATCH/bad_out/summary.json" ] || fail "a refused scene wrote output"
}
bad "d['bodies'][1]['position']=[1.5, 0]" "/bodies: balls 0 (/bodies/0) and 1 (/bodies/1) overlap"
bad "d['bodies'][0]['mass']=0" "/bodies/0/mass"
bad "d['bodies'][2]['velocity']=[1, 0, 0]" "/bodies/2/velocity: expected 2 numbers"
bad "d['walls']=[{'point': [1, 0], 'normal': [1, 0]}]" "/walls/0: ball 0 (/bodies/0) reaches"
bad "d['walls']=[{'point': [-5, 0], 'normal': [0, 0]}]" "/walls/0/normal: must not be zero"
bad "d['impact']['tolerance']=1" "/impact/tolerance"
bad "d['mode']='step'" "missing required key 'time'"
bad "d['impact']={'operator': 'generalized_reflections', 'restitution': 0.5, 'restitution_model': 'pairwise'}" \
  "/impact/restitution_model"
echo "rigid: cradle in three orders, resting ball, restart bit-identical, bad scenes refused"
