# Shared by the command-line tests that edit a small scene in place (after cli_common.sh): a valid one-box scene,
# writing edited copies, and the check that a bad one is refused.

# scene TEXT [NAME]: TEXT into $SCRATCH/NAME.json (default s.json, which the next call overwrites); prints the path.
scene() { local f="$SCRATCH/${2:-s}.json"; echo "$1" > "$f"; echo "$f"; }
# Tests edit it with bash's ${base/old/new} (no python or jq needed).
base='{"method":"bdem","materials":[{"name":"m","density":1000,"youngs_modulus":1e7,"tensile_strength":3e4}],
"bodies":[{"material":"m","particle_radius":0.02,"shape":{"type":"box","min":[0,0,0],"max":[0.2,0.2,0.2]}}],
"time":{"end":0.01},"output":{"frame_interval":0.001}}'

# check_bad SCENE_TEXT EXPECTED_SUBSTRING: run and check both exit 2 with "<file>: EXPECTED", nothing written.
check_bad() {
  local f
  f=$(scene "$1")
  rm -rf "$SCRATCH/out"
  expect_exit 2 "$PERCUSSION" run "$f" --out "$SCRATCH/out"
  expect_output "$f: $2"
  [ ! -e "$SCRATCH/out" ] || fail "output written for bad input ($2)"
  expect_exit 2 "$PERCUSSION" check "$f"
  expect_output "$f: $2"
}
