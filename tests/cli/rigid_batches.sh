# A percolating pack (two touching lattices of unequal masses on a floor: one component) resolved by independent-set
# batches (a low impact.gather_limit): the same velocities and impulses bit for bit on 1, 2 and 3 ranks. Batches and
# the gathered resolution on one rank both end feasible (min n_i.v >= -eps |v|_M) with the energy kept to 1e-14,
# and they differ (another Gauss-Seidel order), so the batches did run. Time stepping by batches: 1 and 3 ranks agree.
source "$(dirname "$0")/../support/cli_common.sh"
PY=/usr/bin/python3

"$PY" - "$SCRATCH/pack.json" "$SCRATCH/gathered.json" <<'PYEOF'
import json, sys
scene = {"method": "rigid", "mode": "resolve", "dimension": 2,
         "bodies": [{"type": "ball_lattice", "min": [0, 0], "max": [24, 24], "radius": 0.5, "mass": 1.0,
                     "jitter": 1.0, "seed": 7},
                    {"type": "ball_lattice", "min": [0, 24], "max": [24, 30], "radius": 0.5, "mass": 3.0,
                     "jitter": 1.0, "seed": 8}],
         "walls": [{"point": [0, 0], "normal": [0, 1]}],
         "impact": {"gather_limit": 20}}
json.dump(scene, open(sys.argv[1], "w"))
del scene["impact"]["gather_limit"]
json.dump(scene, open(sys.argv[2], "w"))
PYEOF
for np in 1 2 3; do
  expect_exit 0 "$MPIEXEC" -n "$np" "$PERCUSSION" run "$SCRATCH/pack.json" --out "$SCRATCH/batches$np"
done
expect_exit 0 "$PERCUSSION" run "$SCRATCH/gathered.json" --out "$SCRATCH/gathered"

"$PY" - "$SCRATCH" <<'PYEOF' || fail "batches: $(cat "$SCRATCH/batches1/resolution.json" | head -c 600)"
import json, math, sys
root = sys.argv[1]
res = {k: json.load(open(f"{root}/{k}/resolution.json")) for k in ("batches1", "batches2", "batches3", "gathered")}
for k in ("batches2", "batches3"):
    for key in ("velocities", "impulses", "reflections", "iterations", "terminated"):
        assert res[k][key] == res["batches1"][key], (k, key)
# The balls as the lattices place them (x fastest), in body order.
pos, mass = [], []
for lo_y, hi_y, m in ((0, 24, 1.0), (24, 30, 3.0)):
    ny = math.floor((hi_y - lo_y - 1.0) / 1.0 + 1e-9) + 1
    for j in range(ny):
        for i in range(24):
            pos.append((0 + 0.5 + 1.0 * i, lo_y + 0.5 + 1.0 * j))
            mass.append(m)
for k in ("batches1", "gathered"):
    r = res[k]
    v = r["velocities"]
    assert r["terminated"] and len(v) == len(pos) == 720, (k, r["terminated"], len(v))
    norm = math.sqrt(sum(m * (x * x + y * y) for m, (x, y) in zip(mass, v)))
    assert abs(r["energy_after"] - r["energy_before"]) <= 1e-14 * r["energy_before"], (k, r["energy_before"], r["energy_after"])
    assert r["reflections"] > 1000, (k, r["reflections"])
    worst = math.inf
    for c in r["impulses"]:
        a = c["a"]
        assert c["impulse"] >= 0, c
        if "wall" in c:
            s = v[a][1] / math.sqrt(1 / mass[a])
        else:
            b = c["b"]
            d = (pos[b][0] - pos[a][0], pos[b][1] - pos[a][1])
            ln = math.hypot(*d)
            s = (d[0] * (v[b][0] - v[a][0]) + d[1] * (v[b][1] - v[a][1])) / ln / math.sqrt(1 / mass[a] + 1 / mass[b])
        worst = min(worst, s)
    assert worst >= -1e-10 * norm, (k, worst, norm)
    assert len(r["impulses"]) > 1300, (k, len(r["impulses"]))
assert res["batches1"]["velocities"] != res["gathered"]["velocities"]
print("batches: %d sweeps, %d reflections; gathered: %d reflections" % (
    res["batches1"]["iterations"], res["batches1"]["reflections"], res["gathered"]["reflections"]))
PYEOF
# Time stepping: a touching pack settling on a floor under gravity, its first impacts one component above the limit;
# 1 and 3 ranks give the same trajectory bit for bit, and the batches ran (fewer sweeps than gathered passes).
"$PY" - "$SCRATCH/pile.json" "$SCRATCH/pile_gathered.json" <<'PYEOF'
import json, sys
scene = {"method": "rigid", "mode": "step", "dimension": 2, "gravity": [0, -9.81],
         "bodies": [{"type": "ball_lattice", "min": [0, 0], "max": [0.4, 0.4], "radius": 0.01, "mass": 0.001,
                     "jitter": 0.3, "seed": 3}],
         "walls": [{"point": [0, 0], "normal": [0, 1]}],
         "impact": {"gather_limit": 20}, "time": {"end": 0.01, "step": 2e-4}, "output": {"frame_interval": 0.005}}
json.dump(scene, open(sys.argv[1], "w"))
del scene["impact"]["gather_limit"]
json.dump(scene, open(sys.argv[2], "w"))
PYEOF
expect_exit 0 "$PERCUSSION" run "$SCRATCH/pile.json" --out "$SCRATCH/pile1"
expect_exit 0 "$MPIEXEC" -n 3 "$PERCUSSION" run "$SCRATCH/pile.json" --out "$SCRATCH/pile3"
expect_exit 0 "$PERCUSSION" run "$SCRATCH/pile_gathered.json" --out "$SCRATCH/pile_gathered"
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/pile1/trajectory.h5" "$SCRATCH/pile3/trajectory.h5" --rtol 0
"$PY" - "$SCRATCH/pile1/summary.json" "$SCRATCH/pile_gathered/summary.json" <<'PYEOF' || fail "pile: batches did not run"
import json, sys
b, g = (json.load(open(p))["final"] for p in sys.argv[1:3])
assert b["reflections"] > 1000 and b["iterations"] < g["iterations"] / 4, (b, g)
PYEOF

echo "rigid batches: 1, 2, 3 ranks bit-identical (resolution and time stepping); batches and gathering both feasible and elastic"
