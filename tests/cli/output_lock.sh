# One run per output directory: a second run is refused naming the holder, a dead holder's lock is taken over,
# and after kill -9 a restart succeeds at once.
source "$(dirname "$0")/../support/cli_common.sh"
# The demo beam, run five times longer so that it is still running while the checks below are made.
scene=$SCRATCH/beam.json
sed 's/"end": 0.04/"end": 0.2/' "$INPUTS/bdem/beam_snap_small.json" > "$scene"
grep -q '"end": 0.2' "$scene" || fail "scene edit"
out=$SCRATCH/run
lock=$out/.percussion.lock

# A finished run leaves no lock.
expect_exit 0 "$PERCUSSION" run "$scene" --out "$SCRATCH/done" --steps 10
[ ! -e "$SCRATCH/done/.percussion.lock" ] || fail "lock left after the run"

# While a run writes, a second run (fresh with --overwrite, or a restart) is refused with exit 2 naming it.
"$PERCUSSION" run "$scene" --out "$out" > "$SCRATCH/log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  [ -L "$out/checkpoints/latest" ] && break
  sleep 0.1
done
[ -e "$lock" ] || fail "no lock file while running: $(ls -a "$out")"
grep -qx "$(hostname):$pid" "$lock" || fail "lock holds '$(cat "$lock")', want $(hostname):$pid"
expect_exit 2 "$PERCUSSION" run "$scene" --out "$out" --overwrite
expect_output "$out: output directory is in use by run $(hostname):$pid (lock file $lock)"
expect_exit 2 "$MPIEXEC" -n 2 "$PERCUSSION" run "$scene" --out "$out" --restart "$out"
expect_output "in use by run $(hostname):$pid"

# kill -9 leaves the lock; the restart takes it over at once and finishes.
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
[ -e "$lock" ] || fail "kill -9 removed the lock"
expect_exit 0 "$PERCUSSION" run "$scene" --out "$out" --restart "$out" --steps 1100
expect_output "warning: $lock: taking over the lock of run"
[ ! -e "$lock" ] || fail "lock left after the restart"

# A lock from another host cannot be checked from here: refused, with the way out.
mkdir -p "$SCRATCH/other"
echo "elsewhere.example:12345" > "$SCRATCH/other/.percussion.lock"
expect_exit 2 "$PERCUSSION" run "$scene" --out "$SCRATCH/other" --steps 10
expect_output "in use by run elsewhere.example:12345"
expect_output "if that run is over, delete the lock file"
# A lock alone does not make a directory "not empty".
rm "$SCRATCH/other/.percussion.lock"
echo "$(hostname):999999999" > "$SCRATCH/other/.percussion.lock"
expect_exit 0 "$PERCUSSION" run "$scene" --out "$SCRATCH/other" --steps 10
expect_output "taking over the lock of run $(hostname):999999999"

echo "output lock: second run refused naming the holder, stale lock taken over, restart after kill -9 succeeds"
