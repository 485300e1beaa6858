# A batch script that receives SIGTERM turns it into SIGUSR1 for mpirun (the recipe in docs/running.md): the job ends with
# 75 and a valid signal checkpoint, where SIGTERM to mpirun itself would end it with Open MPI's 1.
source "$(dirname "$0")/../support/cli_common.sh"
source "$(dirname "$0")/../support/signal_wait.sh"
scene=$INPUTS/bdem/beam_snap_small.json
out=$SCRATCH/run

cat > "$SCRATCH/job.sh" <<JOB
"$MPIEXEC" -n 2 "$PERCUSSION" run "$scene" --out "$out" --steps 800 & pid=\$!
trap 'kill -USR1 \$pid' TERM INT
wait \$pid; code=\$?; while kill -0 \$pid 2>/dev/null; do wait \$pid; code=\$?; done
exit \$code
JOB
bash "$SCRATCH/job.sh" > "$SCRATCH/log" 2>&1 &
job=$!
wait_stepping "$out"
kill -TERM "$job"
set +e
wait "$job"
code=$?
set -e
[ "$code" -eq 75 ] || fail "the job script exited $code after SIGTERM (want 75): $(cat "$SCRATCH/log")"
grep -q '"exit": "signal"' "$out/summary.json" || fail "no signal exit in summary.json: $(cat "$SCRATCH/log")"
expect_exit 0 "$PERCUSSION" info "$out/checkpoints/latest"
expect_output "checkpoint"
step=$(sed -n 's/^  step: \([0-9]*\).*/\1/p' <<<"$OUT")
[ -n "$step" ] && [ "$step" -gt 0 ] && [ "$step" -lt 800 ] || fail "the signal checkpoint is at step '$step': $OUT"
echo "signal_batch: SIGTERM to the job script -> SIGUSR1 to mpirun -> checkpoint at step $step, exit 75"
