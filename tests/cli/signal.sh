# SIGTERM (SLURM's warning) mid-run: a valid checkpoint, exit 75, and a restart that finishes the run.
source "$(dirname "$0")/../support/cli_common.sh"
scene=$INPUTS/bdem/beam_stretch_small.json
out=$SCRATCH/run

"$PERCUSSION" run "$scene" --out "$out" > "$SCRATCH/log" 2>&1 &
pid=$!
# Wait until the run is stepping (the first frame exists), then signal it.
for _ in $(seq 1 300); do
  [ -s "$out/trajectory.xdmf" ] && break
  sleep 0.1
done
sleep 0.5
kill -TERM "$pid"
set +e
wait "$pid"
code=$?
set -e
[ "$code" -eq 75 ] || fail "exit $code after SIGTERM (want 75): $(cat "$SCRATCH/log")"
grep -q "checkpointed on signal" "$SCRATCH/log" || fail "no signal message: $(cat "$SCRATCH/log")"
[ -L "$out/checkpoints/latest" ] || fail "no checkpoints/latest"
expect_exit 0 "$PERCUSSION" info "$out/checkpoints/latest"
expect_output "checkpoint"
grep -q '"exit": "signal"' "$out/summary.json" || fail "summary does not record the signal"

# Restart finishes the run and matches an uninterrupted one.
expect_exit 0 "$PERCUSSION" run "$scene" --out "$out" --restart "$out"
expect_output "restarted from"
expect_exit 0 "$PERCUSSION" run "$scene" --out "$SCRATCH/straight"
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/straight/trajectory.h5" "$out/trajectory.h5" --rtol 0

# SIGUSR1 through mpirun on 2 ranks does the same.
"$MPIEXEC" -n 2 "$PERCUSSION" run "$scene" --out "$SCRATCH/mpi" > "$SCRATCH/log2" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
  [ -s "$SCRATCH/mpi/trajectory.xdmf" ] && break
  sleep 0.1
done
sleep 0.5
kill -USR1 "$pid"
set +e
wait "$pid"
code=$?
set -e
[ "$code" -eq 75 ] || fail "mpirun exit $code after SIGUSR1 (want 75): $(cat "$SCRATCH/log2")"
expect_exit 0 "$MPIEXEC" -n 2 "$PERCUSSION" run "$scene" --out "$SCRATCH/mpi" --restart "$SCRATCH/mpi"
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/straight/trajectory.h5" "$SCRATCH/mpi/trajectory.h5" --rtol 0
echo "signal: checkpoint, exit 75, restart finishes bit-identically"
