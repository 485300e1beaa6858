# Restart half-way: bit-identical on the same rank count, equal to round-off on another; 1, 2, 3 ranks agree.
source "$(dirname "$0")/../support/cli_common.sh"
scene=$INPUTS/bdem/beam_snap_small.json
run() { local np=$1; shift; "$MPIEXEC" -n "$np" "$PERCUSSION" run "$scene" "$@" > "$SCRATCH/log.$np.$RANDOM" 2>&1; }

run 2 --out "$SCRATCH/full2" --steps "$(steps 616)"
run 1 --out "$SCRATCH/full1" --steps "$(steps 616)"
run 3 --out "$SCRATCH/full3" --steps "$(steps 616)"
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/full1/trajectory.h5" "$SCRATCH/full2/trajectory.h5" --rtol 1e-10
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/full1/trajectory.h5" "$SCRATCH/full3/trajectory.h5" --rtol 1e-10

# Interrupted at 308, continued to 616 (multiples of the 77-step frame cadence, so both end on a frame; a quarter of
# each under the sanitizers) on the same and on another rank count.
run 2 --out "$SCRATCH/half" --steps "$(steps 308)"
cp -r "$SCRATCH/half" "$SCRATCH/half3"
run 2 --out "$SCRATCH/half" --restart "$SCRATCH/half" --steps "$(steps 616)"
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/full2/trajectory.h5" "$SCRATCH/half/trajectory.h5" --rtol 0
run 3 --out "$SCRATCH/half3" --restart "$SCRATCH/half3/checkpoints/latest" --steps "$(steps 616)"
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/full2/trajectory.h5" "$SCRATCH/half3/trajectory.h5" --rtol 1e-10

# A one-rank run writes its files through POSIX I/O, the others through MPI-IO: continued across the two.
run 1 --out "$SCRATCH/half1" --steps "$(steps 308)"
run 2 --out "$SCRATCH/half1" --restart "$SCRATCH/half1" --steps "$(steps 616)"
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/full1/trajectory.h5" "$SCRATCH/half1/trajectory.h5" --rtol 1e-10
cp -r "$SCRATCH/half" "$SCRATCH/half2to1"
run 1 --out "$SCRATCH/half2to1" --restart "$SCRATCH/half2to1/checkpoints/latest" --steps "$(steps 924)"
expect_exit 0 "$PERCUSSION" info "$SCRATCH/half2to1/trajectory.h5"

# An implicit BDF2 scene whose cloth tears (its checkpoints carry the last step's start state,
# particles/bdf2_history) continues bit for bit on the same rank count. (On another rank count the block-Jacobi
# iterates differ within the Newton tolerance, 1e-5, and a tearing cloth carries that on; the MPI tests check rank
# counts to 1e-8 at tight tolerances.)
bdf2=$INPUTS/bdem/cloth_tear_small.json
"$MPIEXEC" -n 2 "$PERCUSSION" run "$bdf2" --out "$SCRATCH/bdf2_full" --steps "$(steps 30)" \
  > "$SCRATCH/log.bdf2.full" 2>&1
"$MPIEXEC" -n 2 "$PERCUSSION" run "$bdf2" --out "$SCRATCH/bdf2_half" --steps "$(steps 15)" \
  > "$SCRATCH/log.bdf2.half" 2>&1
"$MPIEXEC" -n 2 "$PERCUSSION" run "$bdf2" --out "$SCRATCH/bdf2_half" --restart "$SCRATCH/bdf2_half" \
  --steps "$(steps 30)" > "$SCRATCH/log.bdf2.rest" 2>&1
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/bdf2_full/trajectory.h5" "$SCRATCH/bdf2_half/trajectory.h5" --rtol 0

# The continued trajectory has the same frames as the uninterrupted one.
expect_exit 0 "$PERCUSSION" info "$SCRATCH/half/trajectory.h5"
frames_half=$(grep -m1 -i "frames" <<<"$OUT")
expect_exit 0 "$PERCUSSION" info "$SCRATCH/full2/trajectory.h5"
frames_full=$(grep -m1 -i "frames" <<<"$OUT")
[ "$frames_half" = "$frames_full" ] || fail "frames differ: '$frames_half' vs '$frames_full'"

# An explicit run continues an implicit run's checkpoint at its own step (at the implicit step it would blow up at
# once), from the checkpoint's time to the scene's end: 2 implicit steps of 20 T, then 107 of 0.2 T to 0.01 s.
small='{"method":"bdem","materials":[{"name":"m","density":1000,"youngs_modulus":1e7,"tensile_strength":3e4}],
"bodies":[{"material":"m","particle_radius":0.02,"shape":{"type":"box","min":[0,0,0],"max":[0.2,0.2,0.2]}}],
"time":{"end":0.01},"output":{"frame_interval":0.001}}'
echo "$small" > "$SCRATCH/explicit.json"
echo "${small/\"method\":\"bdem\"/\"method\":\"bdem\",\"integrator\":\"implicit\"}" > "$SCRATCH/implicit.json"
imp="$SCRATCH/implicit.json"
expect_exit 0 "$PERCUSSION" run "$imp" --out "$SCRATCH/implicit" --overwrite --steps 2
expect_exit 0 "$PERCUSSION" run "$SCRATCH/explicit.json" --restart "$SCRATCH/implicit" --out "$SCRATCH/implicit"
expect_output "ckpt_0000000002.h5: written by the implicit integrator at a step of"
expect_output "restarted from $SCRATCH/implicit/checkpoints/ckpt_0000000002.h5 at step 2"
expect_output "stopped at step 109, t = 0.0100266 s (end time)"

echo "restart: bit-identical on 2 ranks, equal on 3 and from 1 to 2; 1/2/3 ranks agree; so does an implicit BDF2 run; an explicit run continues an implicit checkpoint at its own step"
