# Quantities derived from a scene are checked like its keys: exit 2 naming the key that caused them, nothing written.
source "$(dirname "$0")/../support/cli_common.sh"
source "$(dirname "$0")/../support/cli_scenes.sh"

# Masses and critical steps that are not usable numbers (they gave a step of inf or 0 and t = nan).
check_bad "${base/\"density\":1000/\"density\":1e308}" "/bodies/0: particles of radius 0.02 m of /materials/0 ('m': density 1e+308, youngs_modulus 1e+07) have a mass of inf kg"
check_bad "${base/\"density\":1000/\"density\":5e-324}" "/bodies/0: particles of radius 0.02 m of /materials/0 ('m': density 4.941e-324"
check_bad "${base/\"youngs_modulus\":1e7/\"youngs_modulus\":1e308}" "/bodies/0: particles of radius 0.02 m of /materials/0 ('m': density 1000, youngs_modulus 1e+308) have a critical time step of 0 s"
check_bad "${base/\"youngs_modulus\":1e7/\"youngs_modulus\":1e300}" "/time/end: time.end / 1.033e-151 s = 9.682e+148 steps; at most 2^53"
# Counts beyond 2^53: steps, frame times, checkpoint times.
check_bad "${base/\"end\":0.01/\"end\":1e308}" "/time/end: time.end / 3.266e-05 s = inf steps"
check_bad "${base/\"end\":0.01/\"end\":0.01,\"step\":1e-300}" "/time/step: time.end / 1e-300 s = 1e+298 steps"
check_bad "${base/\"frame_interval\":0.001/\"frame_interval\":1e-300}" "/output/frame_interval: time.end / 1e-300 s = 1e+298 frame times"
check_bad "${base/\"time\"/\"checkpoint\":{\"every_time\":1e-300\},\"time\"}" "/checkpoint/every_time: time.end / 1e-300 s"
# A body beyond 64-bit counts of doubles: 1e12 m^3 of 2 cm spheres (about 2.2e16 particles).
check_bad "${base/\"max\":\[0.2,0.2,0.2\]/\"max\":[10000,10000,10000]}" "/bodies/0: would hold about 2.21e+16 particles; at most 2^53"

# An explicit step above the critical step is refused with both numbers, unless allowed.
above="${base/\"end\":0.01/\"end\":0.01,\"step\":1e-3}"
check_bad "$above" "/time/step: 0.001 s is above the explicit integrator's critical step 0.0001633 s (of /bodies/0)"
expect_exit 0 "$PERCUSSION" check "$(scene "${above/\"step\":1e-3/\"step\":1e-3,\"allow_above_critical\":true}")"
# The implicit integrator takes steps of many critical steps.
expect_exit 0 "$PERCUSSION" check "$(scene "${above/\"method\":\"bdem\"/\"method\":\"bdem\",\"integrator\":\"implicit\"}")"
check_bad "${above/\"step\":1e-3/\"step\":1e-3,\"allow_above_critical\":1}" "/time/allow_above_critical"

# A frame interval shorter than the step gives a frame every step (21 steps of 4.9e-4 s to 0.01 s: 22 frames).
short=$(scene "${base/\"frame_interval\":0.001/\"frame_interval\":1e-12}" short)
expect_exit 0 "$PERCUSSION" check "$short"
expect_exit 0 "$PERCUSSION" run "${short}" --out "$SCRATCH/short2"
steps=$(sed -n 's/.*"steps": \([0-9]*\),.*/\1/p' "$SCRATCH/short2/summary.json" | head -1)
expect_exit 0 "$PERCUSSION" info "$SCRATCH/short2/trajectory.h5"
expect_output "frames: $((steps + 1)) (steps 0 .. $steps,"

echo "derived checks: masses, critical steps, counts, explicit steps above the critical one; short frame intervals"
