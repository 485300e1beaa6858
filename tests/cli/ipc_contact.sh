# The ipc method with contact: a disk dropped on a plane rebounds with the contact impulse an elastic bounce predicts;
# a block sliding with friction stops where μ and gravity say; two colliding disks agree on 1, 2 and 3 ranks and
# restart bit-identically, keeping momentum to the Newton tolerance; along every run no surface crosses (intersections 0), no element inverts and the
# distance stays positive; bodies that overlap or cross a plane at t = 0 are refused.
source "$(dirname "$0")/../support/cli_common.sh"
PY=/usr/bin/python3

cat > "$SCRATCH/bounce.json" <<'JSON'
{
  "method": "ipc", "dimension": 2, "integrator": "bdf2",
  "materials": [ { "name": "rubber", "model": "neo_hookean", "density": 1000, "youngs_modulus": 1e5, "poisson_ratio": 0.3 } ],
  "bodies": [ { "material": "rubber", "mesh": { "type": "disk", "center": [0, 0.15], "radius": 0.1, "element_size": 0.025 } } ],
  "obstacles": [ { "type": "plane", "point": [0, 0], "normal": [0, 1] } ],
  "gravity": [0, -9.81],
  "contact": { "dhat": 1e-3 },
  "time": { "end": 0.2, "step": 0.0025 },
  "output": { "frame_interval": 0.0025 }
}
JSON
expect_exit 0 "$PERCUSSION" run "$SCRATCH/bounce.json" --out "$SCRATCH/bounce"
# Falling 0.05 m the disk meets the plane with momentum m √(2 g h) and leaves it upwards with e times that, e ≤ 1
# for an elastic body (what BDF2 and the elements' vibration keep is lost), momenta taken in the last frame before
# and the first after the frames with contacts (gaps within d̂).
"$PY" - "$SCRATCH" <<'PYEOF' || fail "bounce"
import h5py, json, numpy as np, sys
d = sys.argv[1]
o = h5py.File(f"{d}/bounce/trajectory.h5", "r")["observables"]
t, p, c = o["time"][:], o["momentum"][:, 1], o["contacts"][:]
touching = np.nonzero(c > 0)[0]
first, last = touching[0], touching[-1]
assert last + 1 < len(t) and np.all(c[first:last + 1] > 0), "one contact phase, over before the end"
before, after = first - 1, last + 1
m = -p[before] / (9.81 * t[before])  # free fall from rest: p = −m g t
arrival = m * np.sqrt(2 * 9.81 * 0.05)
assert abs(-p[before] / arrival - 1) < 0.03, (p[before], arrival)
e = p[after] / -p[before]
assert 0.8 < e <= 1.0, e
s = json.load(open(f"{d}/bounce/summary.json"))
assert s["intersections"] == 0 and s["inverted_elements"] == 0, s
assert 0 < s["min_distance"] < 1e-3, s["min_distance"]
assert np.all(o["intersections"][:] == 0) and np.all(o["min_distance"][:] > 0)
print(f"bounce: arrives with {-p[before]:.3f} kg m/s, leaves with {p[after]:.3f} (e = {e:.3f}); min distance {s['min_distance']:.2e} m")
PYEOF

# Coulomb friction μ = 0.3 on a block at 1 m/s: it stops after v²/(2 μ g) = 0.1699 m (within 5 %). The lagged
# normal forces come from the converged states, so the Newton tolerance is tight.
cat > "$SCRATCH/slide.json" <<'JSON'
{
  "method": "ipc", "dimension": 2, "integrator": "bdf1",
  "materials": [ { "name": "block", "model": "neo_hookean", "density": 1000, "youngs_modulus": 1e7, "poisson_ratio": 0.3 } ],
  "bodies": [ { "material": "block", "mesh": { "type": "box", "min": [0, 0.000001], "max": [0.2, 0.100001], "element_size": 0.05 }, "velocity": [1, 0] } ],
  "obstacles": [ { "type": "plane", "point": [0, 0], "normal": [0, 1] } ],
  "gravity": [0, -9.81],
  "contact": { "dhat": 1e-3, "friction": 0.3, "friction_velocity": 1e-3 },
  "newton": { "tolerance": 1e-7 },
  "time": { "end": 0.4, "step": 0.005 },
  "output": { "frame_interval": 0.05 }
}
JSON
expect_exit 0 "$PERCUSSION" run "$SCRATCH/slide.json" --out "$SCRATCH/slide"
"$PY" - "$SCRATCH" <<'PYEOF' || fail "sliding block"
import h5py, json, numpy as np, sys
d = sys.argv[1]
f = h5py.File(f"{d}/slide/trajectory.h5", "r")
frames = sorted(f["frames"], key=lambda n: int(f["frames"][n].attrs["step"]))
x = [f["frames"][n]["mesh/displacement"][:, 0].mean() for n in frames]
predicted = 1.0 / (2 * 0.3 * 9.81)
assert abs(x[-1] - x[-2]) < 1e-6, "still sliding at the end"
assert abs(x[-1] / predicted - 1) < 0.05, (x[-1], predicted)
s = json.load(open(f"{d}/slide/summary.json"))
assert s["intersections"] == 0 and s["inverted_elements"] == 0 and s["min_distance"] > 0, s
print(f"sliding block: stops after {x[-1]:.4f} m, predicted {predicted:.4f} m")
PYEOF

# Two disks collide off-centre: 1, 2 and 3 ranks agree to 1e-8, total momentum is kept to round-off; stopped at step 40 and
# continued, the end state is bit-identical on the same rank count (2, and 3 where the default solver is BoomerAMG) and
# equal to 1e-8 when 2 ranks stop and 3 continue.
cat > "$SCRATCH/collide.json" <<'JSON'
{
  "method": "ipc", "dimension": 2, "integrator": "bdf2",
  "materials": [ { "name": "ball", "model": "neo_hookean", "density": 1000, "youngs_modulus": 1e6, "poisson_ratio": 0.3 } ],
  "bodies": [
    { "material": "ball", "mesh": { "type": "disk", "center": [-0.15, 0], "radius": 0.1, "element_size": 0.03 }, "velocity": [0.2, 0.02] },
    { "material": "ball", "mesh": { "type": "disk", "center": [0.11, 0.03], "radius": 0.1, "element_size": 0.03 }, "velocity": [-0.2, 0] }
  ],
  "contact": { "dhat": 1e-3 },
  "newton": { "tolerance": 1e-8 },
  "time": { "end": 0.16, "step": 0.002 },
  "output": { "frame_interval": 0.04 },
  "checkpoint": { "every_steps": 40, "keep": 2 }
}
JSON
for np in 1 2 3; do
  expect_exit 0 "$MPIEXEC" -n "$np" "$PERCUSSION" run "$SCRATCH/collide.json" --out "$SCRATCH/collide$np"
done
expect_exit 0 "$MPIEXEC" -n 2 "$PERCUSSION" run "$SCRATCH/collide.json" --out "$SCRATCH/split2" --steps 40
expect_exit 0 "$MPIEXEC" -n 2 "$PERCUSSION" run "$SCRATCH/collide.json" --out "$SCRATCH/split2" --restart "$SCRATCH/split2"
expect_exit 0 "$MPIEXEC" -n 2 "$PERCUSSION" run "$SCRATCH/collide.json" --out "$SCRATCH/split3" --steps 40
expect_exit 0 "$MPIEXEC" -n 3 "$PERCUSSION" run "$SCRATCH/collide.json" --out "$SCRATCH/split3" --restart "$SCRATCH/split3"
expect_exit 0 "$MPIEXEC" -n 3 "$PERCUSSION" run "$SCRATCH/collide.json" --out "$SCRATCH/split33" --steps 40
expect_exit 0 "$MPIEXEC" -n 3 "$PERCUSSION" run "$SCRATCH/collide.json" --out "$SCRATCH/split33" --restart "$SCRATCH/split33"
"$PY" - "$SCRATCH" <<'PYEOF' || fail "collision on ranks / restart"
import h5py, json, numpy as np, sys
d = sys.argv[1]
def last(run):
    f = h5py.File(f"{d}/{run}/trajectory.h5", "r")
    fr = f["frames"][sorted(f["frames"], key=lambda n: int(f["frames"][n].attrs["step"]))[-1]]
    return int(fr.attrs["step"]), fr["mesh/position"][:], fr["mesh/velocity"][:]
s1, x1, v1 = last("collide1")
assert s1 == 80
o = h5py.File(f"{d}/collide1/trajectory.h5", "r")["observables"]
assert o["contacts"][:].max() > 0, "the disks never touched"
p = o["momentum"][:]
assert np.abs(p - p[0]).max() < 1e-7 * np.abs(p[0]).max(), np.abs(p - p[0]).max()  # to the Newton tolerance
for n in (2, 3):
    s, x, v = last(f"collide{n}")
    assert s == 80
    # Each step ends with its last Newton direction taken, so runs differ by the linear solves' errors, not by the
    # Newton tolerance (1e-8 m/s).
    rx, rv = np.abs(x - x1).max() / np.abs(x1).max(), np.abs(v - v1).max() / np.abs(v1).max()
    assert rx < 1e-8 and rv < 1e-8, (n, rx, rv)
s0, x0, v0 = last("collide2")
sa, xa, va = last("split2")
sb, xb, vb = last("split3")
assert s0 == sa == sb == 80
assert np.array_equal(x0, xa) and np.array_equal(v0, va), "restart on 2 ranks is not bit-identical"
s3, x3, v3 = last("collide3")
sc, xc, vc = last("split33")
assert sc == 80 and np.array_equal(x3, xc) and np.array_equal(v3, vc), "restart on 3 ranks is not bit-identical"
for whole, split in (("collide2", "split2"), ("collide3", "split33")):
    c0, ca = (json.load(open(f"{d}/{run}/summary.json"))["counters"] for run in (whole, split))
    assert all(c0[k] == ca[k] for k in ("newton_iterations", "krylov_iterations", "linear_solver_fallbacks")), (c0, ca)
assert np.abs(xb - x0).max() < 1e-8 * np.abs(x0).max() and np.abs(vb - v0).max() < 1e-8 * np.abs(v0).max()
for run in ("collide1", "collide2", "collide3", "split2", "split3", "split33"):
    s = json.load(open(f"{d}/{run}/summary.json"))
    assert s["intersections"] == 0 and s["inverted_elements"] == 0 and s["min_distance"] > 0, (run, s)
print("collision: 1, 2, 3 ranks agree to 1e-8; restart bit-identical on 2 and on 3 ranks")
PYEOF
# `percussion compare` reads mesh frames the same way: equal, equal within a tolerance, different.
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/collide2/trajectory.h5" "$SCRATCH/split2/trajectory.h5" --rtol 0
expect_output "mesh ("
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/collide1/trajectory.h5" "$SCRATCH/collide3/trajectory.h5" --rtol 5e-7
expect_exit 1 "$PERCUSSION" compare "$SCRATCH/collide1/trajectory.h5" "$SCRATCH/collide3/trajectory.h5" --rtol 0

# Refused at t = 0: overlapping disks, a disk through the ground, a disk inside another.
overlap() {
  cat > "$SCRATCH/bad$1.json" <<JSON
{
  "method": "ipc", "dimension": 2, "integrator": "bdf2",
  "materials": [ { "name": "ball", "density": 1000, "youngs_modulus": 1e6 } ],
  "bodies": [
    { "material": "ball", "mesh": { "type": "disk", "center": [0, 0.5], "radius": $2, "element_size": 0.05 } },
    { "material": "ball", "mesh": { "type": "disk", "center": [$3, 0.5], "radius": 0.2, "element_size": 0.05 } }
  ],
  "obstacles": [ { "type": "plane", "point": [0, $4], "normal": [0, 1] } ],
  "time": { "end": 0.01, "step": 0.005 },
  "output": { "frame_interval": 0.005 }
}
JSON
  expect_exit 2 "$PERCUSSION" run "$SCRATCH/bad$1.json" --out "$SCRATCH/bad$1"
  grep -q "bad$1.json: $5" <<<"$OUT" || fail "bad$1: no message naming $5: $OUT"
}
overlap 1 0.2 0.3 0 "/bodies: bodies intersect at t = 0"
overlap 2 0.2 1.0 0.4 "/obstacles/0: bodies intersect at t = 0"
overlap 3 0.05 0.0 0 "/bodies: bodies intersect at t = 0"
echo "ipc contact: bounce, sliding block, collision on 1-3 ranks and restart, intersecting inputs refused"
