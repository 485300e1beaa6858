# SIGTERM (SLURM's warning) mid-run, then SIGINT (Ctrl-C): a valid checkpoint, exit 75, and a restart that finishes
# the run.
source "$(dirname "$0")/../support/cli_common.sh"
source "$(dirname "$0")/../support/signal_wait.sh"
scene=$INPUTS/bdem/beam_snap_small.json
out=$SCRATCH/run

# interrupt SIGNAL SECOND OUTDIR LOG CMD...: start CMD in the background, wait until it is stepping (its first frame
# exists), send SIGNAL and 50 ms later SECOND (a second signal must not cut the checkpoint short), and require
# exit code 75.
interrupt() {
  local sig=$1 second=$2 dir=$3 log=$4; shift 4
  "$@" > "$log" 2>&1 &
  local pid=$!
  wait_stepping "$dir"
  kill "-$sig" "$pid"
  sleep 0.05
  kill "-$second" "$pid"
  set +e
  wait "$pid"
  local code=$?
  set -e
  [ "$code" -eq 75 ] || fail "exit $code after SIG$sig and SIG$second (want 75): $(cat "$log")"
}

interrupt TERM INT "$out" "$SCRATCH/log" "$PERCUSSION" run "$scene" --out "$out" "${TO_END[@]}"
grep -q "checkpointed on signal" "$SCRATCH/log" || fail "no signal message: $(cat "$SCRATCH/log")"
[ -L "$out/checkpoints/latest" ] || fail "no checkpoints/latest"
expect_exit 0 "$PERCUSSION" info "$out/checkpoints/latest"
expect_output "checkpoint"
grep -q '"exit": "signal"' "$out/summary.json" || fail "summary does not record the signal"

# Restart finishes the run and matches an uninterrupted one.
expect_exit 0 "$PERCUSSION" run "$scene" --out "$out" --restart "$out" "${TO_END[@]}"
expect_output "restarted from"
expect_exit 0 "$PERCUSSION" run "$scene" --out "$SCRATCH/straight" "${TO_END[@]}"
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/straight/trajectory.h5" "$out/trajectory.h5" --rtol 0

# SIGUSR1 then SIGUSR2 to mpirun (which forwards both) on 2 ranks do the same: mpirun ends with the ranks' 75.
interrupt USR1 USR2 "$SCRATCH/mpi" "$SCRATCH/log2" "$MPIEXEC" -n 2 "$PERCUSSION" run "$scene" --out "$SCRATCH/mpi" \
  "${TO_END[@]}"
expect_exit 0 "$MPIEXEC" -n 2 "$PERCUSSION" run "$scene" --out "$SCRATCH/mpi" --restart "$SCRATCH/mpi" "${TO_END[@]}"
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/straight/trajectory.h5" "$SCRATCH/mpi/trajectory.h5" --rtol 0
# SIGKILL (no chance to clean up) between frames: the trajectory is flushed after every frame, so the frames
# written before the kill are all readable.
"$PERCUSSION" run "$scene" --out "$SCRATCH/killed" > "$SCRATCH/log3" 2>&1 &
pid=$!
for _ in $(seq 1 3000); do  # at most 150 s
  frames=$(grep -c "<Time " "$SCRATCH/killed/trajectory.xdmf" 2>/dev/null || true)
  [ "${frames:-0}" -ge 3 ] && break
  sleep 0.05
done
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
[ "${frames:-0}" -ge 3 ] || fail "the run wrote fewer than 3 frames before it was killed: $(cat "$SCRATCH/log3")"
expect_exit 0 "$PERCUSSION" info "$SCRATCH/killed/trajectory.h5"
kept=$(sed -n 's/^  frames: \([0-9]*\).*/\1/p' <<<"$OUT")
[ "${kept:-0}" -ge "$frames" ] || fail "a killed run kept ${kept:-0} frames, it had written $frames: $OUT"
echo "signal: checkpoint, exit 75, restart finishes bit-identically; a killed run keeps its frames"
