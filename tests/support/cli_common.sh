# Shared by the command-line tests: the binary, a scratch directory, and assertions.
set -euo pipefail
: "${PERCUSSION:?set by ctest}"
: "${PERCUSSION_SOURCE_DIR:?set by ctest}"
MPIEXEC=${MPIEXEC:-mpiexec}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
SCRATCH=$(mktemp -d /tmp/percussion-cli-XXXXXX)
INPUTS=$PERCUSSION_SOURCE_DIR/inputs

fail() { echo "FAIL: $*" >&2; exit 1; }

# steps N: a step count for a test that steps a scene only to have something to compare; a quarter of N (at least 1)
# in the sanitizer build (PERCUSSION_SANITIZE=1, set by ctest there), where the program runs many times slower.
steps() { if [ "${PERCUSSION_SANITIZE:-0}" = 1 ]; then echo $(( $1 >= 4 ? $1 / 4 : 1 )); else echo "$1"; fi; }
# TO_END: run arguments for a test that runs a shipped scene to its end only to have something to compare: none,
# or a step limit in the sanitizer build.
TO_END=()
if [ "${PERCUSSION_SANITIZE:-0}" = 1 ]; then TO_END=(--steps 308); fi

# What AddressSanitizer, LeakSanitizer and UndefinedBehaviorSanitizer print when they find something.
SANITIZER_FINDING='runtime error:|(ERROR|SUMMARY): [A-Za-z]*Sanitizer'

# Functions a test adds to run before the scratch directory goes (e.g. unmounting what it mounted there).
cleanup_hooks=()

# On exit: a sanitizer report in any log the test kept under $SCRATCH fails the test, even where the test let the
# command's exit code pass; the scratch directory is kept when the test fails, so its logs can be read.
finish_cli_test() {
  local status=$? hook found=()
  set +e
  for hook in "${cleanup_hooks[@]}"; do "$hook"; done
  mapfile -t found < <(grep -rlIE "$SANITIZER_FINDING" "$SCRATCH" 2>/dev/null)
  if (( ${#found[@]} > 0 )); then
    echo "FAIL: sanitizer findings in ${found[*]}:" >&2
    grep -hE -A12 "$SANITIZER_FINDING" "${found[@]}" >&2
    status=1
  fi
  if [ "$status" -eq 0 ] || [ "$status" -eq 77 ]; then
    rm -rf "$SCRATCH"
  else
    echo "kept the test's files in $SCRATCH" >&2
  fi
  exit "$status"
}
trap finish_cli_test EXIT

# expect_exit CODE CMD...: run CMD, capture output in $OUT, check the exit code and that no sanitizer reported.
expect_exit() {
  local want=$1; shift
  set +e
  OUT=$("$@" 2>&1)
  local got=$?
  set -e
  [ "$got" -eq "$want" ] || fail "exit $got (want $want) from: $* -- output: $OUT"
  if grep -qE "$SANITIZER_FINDING" <<<"$OUT"; then fail "sanitizer finding from: $* -- output: $OUT"; fi
}

expect_output() {
  grep -qF -- "$1" <<<"$OUT" || fail "output lacks '$1': $OUT"
}
