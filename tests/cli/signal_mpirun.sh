# Signals as a cluster sends them to an mpirun job (2 ranks): each ends in a valid signal checkpoint from which
# the run finishes bit-identically. SIGUSR1 to mpirun: see signal.sh; SIGTERM to a batch script: signal_batch.sh.
source "$(dirname "$0")/../support/cli_common.sh"
source "$(dirname "$0")/../support/signal_wait.sh"
# The shipped scene lengthened, so that a run on a quiet machine is still stepping when the signals come.
scene=$SCRATCH/beam_snap_long.json
/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['time']['end']=0.2; json.dump(d, open(sys.argv[2],'w'))" \
  "$INPUTS/bdem/beam_snap_small.json" "$scene"
steps=(--steps 3000)

expect_exit 0 "$PERCUSSION" run "$scene" --out "$SCRATCH/straight" "${steps[@]}"

# start_mpirun DIR: 2 ranks into DIR in the background; returns once they are stepping (the first frame exists),
# with mpirun's pid in $MPIRUN and the ranks' in $RANKS.
start_mpirun() {
  "$MPIEXEC" -n 2 "$PERCUSSION" run "$scene" --out "$1" "${steps[@]}" > "$1.log" 2>&1 &
  MPIRUN=$!
  wait_stepping "$1"
  RANKS=$(pgrep -P "$MPIRUN" | tr '\n' ' ')
  [ "$(wc -w <<<"$RANKS")" -eq 2 ] || fail "mpirun $MPIRUN has children '$RANKS', want 2 ranks: $(cat "$1.log")"
}

# finish_mpirun WANT DIR: mpirun's exit code must be WANT; the ranks must be gone within 20 s, having written
# a signal checkpoint; a restart on 2 ranks finishes equal bit for bit to the uninterrupted run.
finish_mpirun() {
  local want=$1 dir=$2 code
  set +e
  wait "$MPIRUN"
  code=$?
  set -e
  [ "$code" -eq "$want" ] || fail "mpirun exit $code (want $want): $(cat "$dir.log")"
  for _ in $(seq 1 200); do
    kill -0 $RANKS 2>/dev/null || break
    sleep 0.1
  done
  ! kill -0 $RANKS 2>/dev/null || fail "ranks $RANKS still running 20 s after mpirun ended"
  grep -q '"exit": "signal"' "$dir/summary.json" || fail "no signal exit in $dir/summary.json: $(cat "$dir.log")"
  grep -q "checkpointed on signal" "$dir/log.txt" || fail "no signal message in $dir/log.txt"
  expect_exit 0 "$PERCUSSION" info "$dir/checkpoints/latest"
  expect_output "checkpoint"
  expect_exit 0 "$MPIEXEC" -n 2 "$PERCUSSION" run "$scene" --out "$dir" --restart "$dir" "${steps[@]}"
  expect_output "restarted from"
  expect_exit 0 "$PERCUSSION" compare "$SCRATCH/straight/trajectory.h5" "$dir/trajectory.h5" --rtol 0
}

# SIGTERM to both ranks, twice 50 ms apart (what srun and a batch system's process-tree kill do): the second
# signal does not cut the checkpoint short, and mpirun passes the ranks' 75 on.
start_mpirun "$SCRATCH/ranks"
kill -TERM $RANKS
sleep 0.05
kill -TERM $RANKS
finish_mpirun 75 "$SCRATCH/ranks"

# SIGTERM to mpirun: Open MPI 4.1's mpirun sets its own exit code to 1, sends the ranks SIGTERM a sigkill timeout
# later and SIGKILL another timeout later. With a timeout of 3 s (docs/running.md's way to give a checkpoint time, and
# room for a loaded machine) the ranks checkpoint before that; the whole scene, so that the run is still going.
"$MPIEXEC" -n 2 --mca odls_base_sigkill_timeout 3 "$PERCUSSION" run "$scene" --out "$SCRATCH/mpirun" \
    > "$SCRATCH/mpirun.log" 2>&1 &
MPIRUN=$!
wait_stepping "$SCRATCH/mpirun"
kill -TERM "$MPIRUN"
set +e
wait "$MPIRUN"
code=$?
set -e
[ "$code" -eq 1 ] || fail "mpirun exit $code after SIGTERM (want Open MPI's 1): $(cat "$SCRATCH/mpirun.log")"
grep -q '"exit": "signal"' "$SCRATCH/mpirun/summary.json" || fail "no signal exit: $(cat "$SCRATCH/mpirun.log")"
expect_exit 0 "$PERCUSSION" info "$SCRATCH/mpirun/checkpoints/latest"
step=$(sed -n 's/^  step: \([0-9]*\).*/\1/p' <<<"$OUT")
[ -n "$step" ] && [ "$step" -gt 0 ] || fail "no step in the signal checkpoint: $OUT"

# Twice 50 ms apart (an impatient user, or a scheduler's repeated TERM): mpirun exits at once without signalling
# the ranks; each rank checkpoints when its launcher is gone.
start_mpirun "$SCRATCH/twice"
kill -TERM "$MPIRUN"
sleep 0.05
kill -TERM "$MPIRUN"
finish_mpirun 1 "$SCRATCH/twice"
echo "signal_mpirun: SIGTERM to the ranks (exit 75) and to mpirun (exit 1, twice too): checkpoint, bit-identical restart"
