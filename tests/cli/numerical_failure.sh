# Numerical failure is judged on what users see: a diverging run stops with exit 3 naming the step and the
# observable, keeps its last good checkpoint and writes a summary without null; overlapping bodies are reported.
source "$(dirname "$0")/../support/cli_common.sh"

source "$(dirname "$0")/../support/cli_scenes.sh"
# One end of a box pulled at 0.1 m/s; explicit steps of 1e-4 s (critical step 1.63e-4 s); a checkpoint every 5.
base='{"method":"bdem","materials":[{"name":"m","density":1000,"youngs_modulus":1e7,"tensile_strength":3e9}],
"bodies":[{"material":"m","particle_radius":0.02,"shape":{"type":"box","min":[0,0,0],"max":[0.2,0.2,0.2]}}],
"boundary_conditions":[{"region":{"min":[-1,-1,-1],"max":[0.03,1,1]},"velocity":[0.1,0,0]}],
"time":{"end":0.05,"step":1e-4},"output":{"frame_interval":0.003},"checkpoint":{"every_steps":5,"keep":2}}'

# Below the critical step the run is fine, and its summary holds numbers only.
expect_exit 0 "$PERCUSSION" run "$(scene "$base" stable)" --out "$SCRATCH/stable"
grep -q null "$SCRATCH/stable/summary.json" && fail "null in summary.json: $(cat "$SCRATCH/stable/summary.json")"

# 1.8 times the critical step, allowed: the kinetic energy explodes within ten steps (1.35 times still runs).
fast="${base/\"step\":1e-4/\"step\":3e-4,\"allow_above_critical\":true}"
for np in 1 2; do
  out=$SCRATCH/fast$np
  expect_exit 3 "$MPIEXEC" -n $np "$PERCUSSION" run "$(scene "$fast" fast)" --out "$out"
  expect_output "error: step "
  grep -q "observable 'kinetic' \(grew from\|is not finite\)" <<<"$OUT" || fail "no observable named: $OUT"
  grep -q '"exit": "numerical failure"' "$out/summary.json" || fail "summary: $(cat "$out/summary.json")"
  grep -q null "$out/summary.json" && fail "null in summary.json: $(cat "$out/summary.json")"
  failed=$(sed -n 's/^error: step \([0-9]*\).*/\1/p' <<<"$OUT" | head -1)
  # The last good checkpoint is kept and is earlier than the failure; nothing half-written is left.
  expect_exit 0 "$PERCUSSION" info "$out/checkpoints/latest"
  kept=$(readlink "$out/checkpoints/latest" | sed 's/ckpt_0*\([0-9][0-9]*\)\.h5/\1/')
  [ "$kept" -lt "$failed" ] || fail "latest checkpoint $kept is not before the failure at step $failed"
  ls -a "$out/checkpoints" | grep -q '\.tmp$' && fail "temporary left: $(ls -a "$out/checkpoints")"
done

# Two bodies in the same place: a warning with the count of overlapping pairs.
twin=$(sed 's/"bodies":\[\(.*\)\],$/"bodies":[\1,\1],/' <<<"$base")
[ "$(grep -o particle_radius <<<"$twin" | wc -l)" -eq 2 ] || fail "scene edit: $twin"
expect_exit 0 "$PERCUSSION" run "$(scene "$twin" twin)" --out "$SCRATCH/twin" --steps 1
expect_output "particle pairs that are not bonded overlap by more than 5% of the smaller radius at the start"
expect_exit 0 "$PERCUSSION" run "$(scene "$base" single)" --out "$SCRATCH/single" --steps 1
grep -q "overlap" <<<"$OUT" && fail "overlap reported for one body: $OUT"

echo "numerical failure: exit 3 on 1 and 2 ranks naming step and observable, last good checkpoint kept, no null; overlaps warned"
