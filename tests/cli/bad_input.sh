# Every kind of bad input: exit code 2, one message naming the file and the JSON path, nothing written.
source "$(dirname "$0")/../support/cli_common.sh"

source "$(dirname "$0")/../support/cli_scenes.sh"
good=$INPUTS/bdem/beam_snap_small.json

# The base scene is valid.
expect_exit 0 "$PERCUSSION" check "$(scene "$base")"

check_bad "${base/\"density\":1000/\"density\":-1}" "/materials/0/density"
check_bad "${base/\"youngs_modulus\":1e7/\"youngs_modulus\":-3}" "/materials/0/youngs_modulus: must be > 0, got -3"
check_bad "${base/\"tensile_strength\":3e4/\"tensile_strength\":3e4,\"poisson_ratio\":0.5}" "/materials/0/poisson_ratio"
check_bad "${base/\"particle_radius\":0.02/\"particle_radius\":0}" "/bodies/0/particle_radius"
check_bad "${base/\"particle_radius\":0.02/\"particle_radius\":\"big\"}" "/bodies/0/particle_radius"
check_bad "${base/\"method\":\"bdem\"/\"method\":\"bdem\",\"gravty\":[0,0,-9.81]}" "/gravty: unknown key"
check_bad "${base/\"shape\":\{/\"shape\":\{\"colour\":1,}" "/bodies/0/shape/colour: unknown key"
check_bad "${base/\"time\":\{\"end\":0.01\}/\"time\":\{\"end\":0.01,\"step\":-1e-5\}}" "/time/step"
check_bad "${base/,\"density\":1000/}" "/materials/0: missing required key 'density'"
check_bad "${base/\"material\":\"m\"/\"material\":\"steel\"}" "/bodies/0/material"
check_bad "${base/\"type\":\"box\"/\"type\":\"cone\"}" "/bodies/0/shape/type"
check_bad "${base/\"max\":\[0.2,0.2,0.2\]/\"max\":[0.2,-0.2,0.2]}" "/bodies/0/shape"
check_bad "${base/\"output\":\{\"frame_interval\":0.001\}/\"output\":{}}" "/output: missing required key 'frame_interval'"
check_bad "{\"method\": \"bdem\", " "invalid JSON"
check_bad "${base/\"time\":\{\"end\":0.01\}/\"time\":\{\"end\":0.01\},\"implicit\":\{\"form\":\"midpoint\",\"fracture_integrator\":\"explicit\"\}}" \
  "/implicit/fracture_integrator: \"explicit\" needs the backward_euler or bdf2 form"
check_bad "${base/\"time\":\{\"end\":0.01\}/\"time\":\{\"end\":0.01\},\"implicit\":\{\"hessian_lag_contraction\":1.5\}}" \
  "/implicit/hessian_lag_contraction: must be in [0, 1), got 1.5"
check_bad "${base/\"time\":\{\"end\":0.01\}/\"time\":\{\"end\":0.01\},\"implicit\":\{\"fracture_transient\":-2\}}" \
  "/implicit/fracture_transient: must be in [0, 1e+06], got -2"
check_bad "${base/\"time\":\{\"end\":0.01\}/\"time\":\{\"end\":0.01\},\"implicit\":\{\"fracture_transient_reach\":\"far\"\}}" \
  "/implicit/fracture_transient_reach"
# A shape too small to hold one particle is reported with its JSON path too.
check_bad "${base/\"max\":\[0.2,0.2,0.2\]/\"max\":[0.01,0.2,0.2]}" "/bodies/0/shape"

# Files and options.
expect_exit 2 "$PERCUSSION" run "$SCRATCH/missing.json" --out "$SCRATCH/out"
expect_output "$SCRATCH/missing.json: cannot read file"
expect_exit 2 "$PERCUSSION" run "$good" --frobnicate
expect_output "unknown option '--frobnicate'"
expect_exit 2 "$PERCUSSION" run "$good" --steps -4
expect_exit 2 "$PERCUSSION" run "$(scene "${base/\"method\":\"bdem\"/\"method\":\"bdem\",\"integrator\":\"implicit\"}")" \
  --out "$SCRATCH/out" -bdem_single_precision_product maybe
expect_output "option -bdem_single_precision_product: expected 1/0, true/false, yes/no or on/off, got 'maybe'"
implicit_scene="$(scene "${base/\"method\":\"bdem\"/\"method\":\"bdem\",\"integrator\":\"implicit\"}")"
expect_exit 2 "$PERCUSSION" run "$implicit_scene" --out "$SCRATCH/out" -bdem_half_precision_factor 2
expect_output "option -bdem_half_precision_factor: expected 1/0, true/false, yes/no or on/off, got '2'"
expect_exit 2 "$PERCUSSION" run "$implicit_scene" --out "$SCRATCH/out" -bdem_half_precision_split halves
expect_output "option -bdem_half_precision_split: expected 1/0, true/false, yes/no or on/off, got 'halves'"
expect_exit 2 "$PERCUSSION" run "$implicit_scene" --out "$SCRATCH/out" -bdem_sweeps_across_ranks sometimes
expect_output "option -bdem_sweeps_across_ranks: expected 1/0, true/false, yes/no or on/off, got 'sometimes'"
expect_exit 2 "$PERCUSSION" run "$implicit_scene" --out "$SCRATCH/out" -bdem_sub_pc_type sor
expect_output "option -bdem_sub_pc_type: the default preconditioner's blocks are icc, dilu or sgs, got 'sor'"
# PETSc 3.18 has no SOR for 6x6 blocks, and crashed after saying so: refused before the run.
expect_exit 2 "$PERCUSSION" run "$implicit_scene" --out "$SCRATCH/out" -bdem_pc_type eisenstat
expect_output "option -bdem_pc_type eisenstat: PETSc has no SOR for the 6x6-block Newton matrix"
# The unnamed shell of earlier versions: the message names the preconditioners it became.
expect_exit 2 "$PERCUSSION" run "$implicit_scene" --out "$SCRATCH/out" -bdem_pc_type shell
expect_output "option -bdem_pc_type shell: the project's preconditioners have names now: percussion_gs (the default)"
# A scene's D-ILU under another preconditioner named on the command line: refused, not an unknown PETSc type.
# (The \} keeps the object's closing brace from ending the substitution.)
dilu_scene="$(scene "${base/\"method\":\"bdem\"/\"method\":\"bdem\",\"integrator\":\"implicit\",\"implicit\":{\"petsc_options\":\"-bdem_sub_pc_type dilu\"\}}" dilu)"
expect_exit 0 "$PERCUSSION" check "$dilu_scene"
expect_exit 2 "$PERCUSSION" run "$dilu_scene" --out "$SCRATCH/out" -bdem_pc_type bjacobi
expect_output "option -bdem_sub_pc_type dilu (command line or implicit.petsc_options) is for the default preconditioner"
expect_exit 2 "$PERCUSSION" run "$implicit_scene" --out "$SCRATCH/out" -bdem_pc_type asm -bdem_sub_pc_type sgs
expect_output "option -bdem_sub_pc_type sgs (command line or implicit.petsc_options) is for the default preconditioner"
expect_exit 2 "$PERCUSSION" info "$good"
expect_output "$good"
expect_exit 2 "$PERCUSSION" run "$good" --restart "$SCRATCH/nothing-here" --out "$SCRATCH/out"
expect_output "no checkpoint found"

# An existing output directory is kept unless --overwrite.
mkdir -p "$SCRATCH/existing" && echo keep > "$SCRATCH/existing/notes.txt"
expect_exit 2 "$PERCUSSION" run "$(scene "$base")" --out "$SCRATCH/existing"
expect_output "use --overwrite"
[ "$(cat "$SCRATCH/existing/notes.txt")" = keep ] || fail "existing output touched"
echo "bad input: all cases exit 2 with the expected message"
