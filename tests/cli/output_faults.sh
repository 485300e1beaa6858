# File-system faults end with exit 4 ("cannot write output"), a message naming the path and the system's reason,
# on 1 and 2 ranks; the previous checkpoint stays `latest`, no temporary is left, and a restart finishes the run.
source "$(dirname "$0")/../support/cli_common.sh"

mounts=()
cleanup() {
  for m in "${mounts[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
}
cleanup_hooks+=(cleanup)

scene="$SCRATCH/s.json"
echo '{"method":"bdem","materials":[{"name":"m","density":1000,"youngs_modulus":1e7,"tensile_strength":3e4}],
"bodies":[{"material":"m","particle_radius":0.02,"shape":{"type":"box","min":[0,0,0],"max":[0.2,0.2,0.2]}}],
"gravity":[0,0,-9.81],"time":{"end":0.01},"output":{"frame_interval":0.0002},
"checkpoint":{"every_steps":50,"keep":2}}' > "$scene"

# An output path below a file.
touch "$SCRATCH/afile"
for np in 1 2; do
  expect_exit 4 "$MPIEXEC" -n $np "$PERCUSSION" run "$scene" --out "$SCRATCH/afile/out"
  expect_output "cannot write output: $SCRATCH/afile/out: cannot create output directory (Not a directory)"
done

# mount_tmpfs DIR OPTIONS: a small file system of our own (root only; skipped where mounting is not allowed).
mount_tmpfs() {
  mkdir -p "$1"
  if ! mount -t tmpfs -o "$2" percussion-test "$1" 2>/dev/null; then
    echo "output_faults: cannot mount a tmpfs here (not root, or no permission): read-only and disk-full cases skipped"
    exit 77
  fi
  mounts+=("$1")
}

# A read-only file system: refused before the run starts, on a fresh run and on a restart.
mount_tmpfs "$SCRATCH/ro" size=4m
expect_exit 0 "$PERCUSSION" run "$scene" --out "$SCRATCH/ro/out" --steps 60
mount -o remount,ro "$SCRATCH/ro"
for np in 1 2; do
  expect_exit 4 "$MPIEXEC" -n $np "$PERCUSSION" run "$scene" --out "$SCRATCH/ro/new"
  expect_output "cannot write output: $SCRATCH/ro/new: cannot create output directory (Read-only file system)"
  expect_exit 4 "$MPIEXEC" -n $np "$PERCUSSION" run "$scene" --out "$SCRATCH/ro/out" --restart "$SCRATCH/ro/out"
  expect_output "(Read-only file system)"
done

# A full disk during the run: the frames fill a 700 KiB file system.
expect_exit 0 "$PERCUSSION" run "$scene" --out "$SCRATCH/straight"
for np in 1 2; do
  full=$SCRATCH/full$np
  mount_tmpfs "$full" size=700k
  expect_exit 4 "$MPIEXEC" -n $np "$PERCUSSION" run "$scene" --out "$full/out"
  expect_output "No space left on device"
  expect_output "cannot write output: $full/out/"
  ls -a "$full/out/checkpoints" | grep -q '\.tmp$' && fail "temporary left: $(ls -a "$full/out/checkpoints")"
  expect_exit 0 "$PERCUSSION" info "$full/out/checkpoints/latest"
  # With room again, the restart continues the half-written trajectory and ends where an uninterrupted run does.
  mount -o remount,size=16m "$full"
  expect_exit 0 "$MPIEXEC" -n $np "$PERCUSSION" run "$scene" --out "$full/out" --restart "$full/out"
  expect_exit 0 "$PERCUSSION" compare "$SCRATCH/straight/trajectory.h5" "$full/out/trajectory.h5" --rtol 1e-10
done

# The disk fills while a restart appends frames (checkpoints every 100 steps, so frames fill it first): the
# trajectory's last frame is half-written; the next restart drops it and ends equal to an uninterrupted run.
sed 's/"every_steps":50,"keep":2/"every_steps":100,"keep":1/' "$scene" > "$SCRATCH/rare.json"
for np in 1 2; do
  tail=$SCRATCH/tail$np
  mount_tmpfs "$tail" size=16m
  expect_exit 0 "$MPIEXEC" -n $np "$PERCUSSION" run "$SCRATCH/rare.json" --out "$tail/out" --steps 30
  mount -o remount,size=$(( $(df -k --output=used "$tail" | tail -1) + 40 ))k "$tail"
  expect_exit 4 "$MPIEXEC" -n $np "$PERCUSSION" run "$SCRATCH/rare.json" --out "$tail/out" --restart "$tail/out"
  expect_output "cannot write output: $tail/out/trajectory"
  mount -o remount,size=16m "$tail"
  expect_exit 0 "$MPIEXEC" -n $np "$PERCUSSION" run "$SCRATCH/rare.json" --out "$tail/out" --restart "$tail/out"
  # On one rank HDF5 cannot delete the half-written frame in place: the file is rewritten without it.
  [ "$np" -ne 1 ] || expect_output "trajectory.h5: its tail (a frame written half when the run stopped) could not be removed in place; rewrote the file with its first"
  expect_exit 0 "$PERCUSSION" compare "$SCRATCH/straight/trajectory.h5" "$tail/out/trajectory.h5" --rtol 1e-10
done

echo "output faults: below a file, read-only, disk full: exit 4 on 1 and 2 ranks, checkpoint kept, restart finishes"
