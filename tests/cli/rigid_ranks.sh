# The rigid method on 1, 2 and 3 ranks: components gathered whole on one rank give the same trajectory bit for bit,
# a restart on another rank count continues it exactly, and one resolution reports the same numbers.
source "$(dirname "$0")/../support/cli_common.sh"
PY=/usr/bin/python3
edit() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); $3; json.dump(d, open(sys.argv[2],'w'))" "$1" "$2"; }

edit "$INPUTS/rigid/granular_box.json" "$SCRATCH/box.json" "d['time']['end']=0.06; d['output']['frame_interval']=0.02"
for np in 1 2 3; do
  expect_exit 0 "$MPIEXEC" -n "$np" "$PERCUSSION" run "$SCRATCH/box.json" --out "$SCRATCH/box$np"
done
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/box1/trajectory.h5" "$SCRATCH/box2/trajectory.h5" --rtol 0
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/box1/trajectory.h5" "$SCRATCH/box3/trajectory.h5" --rtol 0
grep -q '"reflections": [1-9]' "$SCRATCH/box3/summary.json" || fail "no impacts: $(cat "$SCRATCH/box3/summary.json")"

# Stopped on 2 ranks, continued on 3: the same trajectory as the straight run.
expect_exit 0 "$MPIEXEC" -n 2 "$PERCUSSION" run "$SCRATCH/box.json" --out "$SCRATCH/split" --steps 130
expect_exit 0 "$MPIEXEC" -n 3 "$PERCUSSION" run "$SCRATCH/box.json" --out "$SCRATCH/split" --restart "$SCRATCH/split"
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/box1/trajectory.h5" "$SCRATCH/split/trajectory.h5" --rtol 0

# The silo: hopper of fixed balls, contacts across the slices of every rank.
edit "$INPUTS/rigid/silo_small.json" "$SCRATCH/silo.json" "d['output']['frame_interval']=0.02"
expect_exit 0 "$PERCUSSION" run "$SCRATCH/silo.json" --out "$SCRATCH/silo1" --steps 250
expect_exit 0 "$MPIEXEC" -n 3 "$PERCUSSION" run "$SCRATCH/silo.json" --out "$SCRATCH/silo3" --steps 250
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/silo1/trajectory.h5" "$SCRATCH/silo3/trajectory.h5" --rtol 0

# One resolution of the geyser-like plug on 3 ranks: resolution.json as on 1.
for np in 1 3; do
  expect_exit 0 "$MPIEXEC" -n "$np" "$PERCUSSION" run "$INPUTS/rigid/two_ball_plug.json" --out "$SCRATCH/plug$np"
done
"$PY" - "$SCRATCH/plug1/resolution.json" "$SCRATCH/plug3/resolution.json" <<'PYEOF' || fail "resolutions differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for key in ("terminated", "velocities", "impulses", "lineality", "reflections"):
    assert a[key] == b[key], (key, a[key], b[key])
assert a["lineality"]["dimension"] == 2 and a["velocities"][0][1] == 0.2, a
PYEOF
# Each rank builds only its slice of a lattice, so placement is checked across ranks: the lowest bad pair or ball is
# named, the same on 3 ranks as on 1.
"$PY" - "$SCRATCH/overlap.json" "$SCRATCH/behind.json" <<'PYEOF'
import json, sys
scene = {"method": "rigid", "mode": "resolve", "dimension": 2,
         "bodies": [{"type": "ball_lattice", "min": [0, 0], "max": [10, 10], "radius": 0.5},
                    {"type": "ball", "position": [9.5, 9.0], "radius": 0.5}]}
json.dump(scene, open(sys.argv[1], "w"))
scene["bodies"].pop()
scene["walls"] = [{"point": [0, 9.2], "normal": [0, -1]}]
json.dump(scene, open(sys.argv[2], "w"))
PYEOF
for np in 1 3; do
  expect_exit 2 "$MPIEXEC" -n "$np" "$PERCUSSION" run "$SCRATCH/overlap.json" --out "$SCRATCH/overlap$np"
  expect_output "overlap.json: /bodies: balls 89 (/bodies/0) and 100 (/bodies/1) overlap by 0.5"
  expect_exit 2 "$MPIEXEC" -n "$np" "$PERCUSSION" run "$SCRATCH/behind.json" --out "$SCRATCH/behind$np"
  expect_output "behind.json: /walls/0: ball 90 (/bodies/0) reaches 0.8 behind wall 0"
done

echo "rigid on ranks: 1, 2, 3 ranks and a restart from 2 on 3 give the same trajectory bit for bit"
