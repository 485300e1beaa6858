# Nothing global on any rank (issue 62): the explicit drop on 1-4 ranks bit for bit alike (each rank generates its
# share, the parallel partitioner places it); restarts by slices 2 -> 3 and 3 -> 1 (explicit bit for bit, implicit
# within the Newton tolerance); re-partitioning mid-run changes nothing and evens the work; memory in the summary.
source "$(dirname "$0")/../support/cli_common.sh"
drop=$INPUTS/bdem/drop_small.json
run() { local np=$1; shift; "$MPIEXEC" -n "$np" "$PERCUSSION" run "$@" > "$SCRATCH/log.$np.$RANDOM" 2>&1 || fail "run $* on $np ranks"; }

for np in 1 2 3 4; do run $np "$drop" --out "$SCRATCH/drop$np" --steps 240; done
for np in 2 3 4; do
  expect_exit 0 "$PERCUSSION" compare "$SCRATCH/drop1/trajectory.h5" "$SCRATCH/drop$np/trajectory.h5" --rtol 0
done

# Restart by slices on another rank count: each rank reads a slice of the rows, the partitioner places them.
run 2 "$drop" --out "$SCRATCH/d23" --steps 120
run 3 "$drop" --out "$SCRATCH/d23" --restart "$SCRATCH/d23" --steps 240
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/drop1/trajectory.h5" "$SCRATCH/d23/trajectory.h5" --rtol 0
run 3 "$drop" --out "$SCRATCH/d31" --steps 120
run 1 "$drop" --out "$SCRATCH/d31" --restart "$SCRATCH/d31" --steps 240
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/drop1/trajectory.h5" "$SCRATCH/d31/trajectory.h5" --rtol 0

# Implicit: the preconditioner follows the partition, so another rank count agrees within the Newton tolerance.
bend=$INPUTS/bdem/three_point_bending_small.json
run 2 "$bend" --out "$SCRATCH/b2" --steps 12
run 2 "$bend" --out "$SCRATCH/b23" --steps 6
run 3 "$bend" --out "$SCRATCH/b23" --restart "$SCRATCH/b23" --steps 12
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/b2/trajectory.h5" "$SCRATCH/b23/trajectory.h5" --rtol 1e-4

# Re-partitioning every 20 steps whenever the work per rank is 2 % off: the same trajectory bit for bit.
/usr/bin/python3 - "$drop" "$SCRATCH/balanced.json" <<'PY'
import json, sys
scene = json.load(open(sys.argv[1]))
scene["balance"] = {"every_steps": 20, "threshold": 1.02}
json.dump(scene, open(sys.argv[2], "w"))
PY
run 3 "$SCRATCH/balanced.json" --out "$SCRATCH/balanced" --steps 240
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/drop1/trajectory.h5" "$SCRATCH/balanced/trajectory.h5" --rtol 0
/usr/bin/python3 - "$SCRATCH/balanced/summary.json" "$SCRATCH/drop3/summary.json" <<'PY'
import json, sys
balanced, plain = (json.load(open(p)) for p in sys.argv[1:3])
b = balanced["balance"]
assert b["checks"] == 12, b
assert b["rebalances"] >= 1, f"never re-partitioned: {b}"
assert b["last"] <= b["threshold"], f"work max/mean {b['last']} above the threshold after re-partitioning: {b}"
for s in (balanced, plain):
    m = s["memory_peak_bytes"] if "memory_peak_bytes" in s else None
    assert m is None or 0 < m["min"] <= m["avg"] <= m["max"], m
print(f"balance: {b['rebalances']} re-partitions in {b['checks']} checks, work max/mean now {b['last']:.4f} "
      f"(worst {b['worst']:.4f})")
PY
echo "distributed: 1-4 ranks alike, restarts 2->3 and 3->1 by slices, implicit 2->3 within 1e-4, balancing changes nothing"
