# Shared by the command-line tests: the binary, a scratch directory, and assertions.
set -euo pipefail
: "${PERCUSSION:?set by ctest}"
: "${PERCUSSION_SOURCE_DIR:?set by ctest}"
MPIEXEC=${MPIEXEC:-mpiexec}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
SCRATCH=$(mktemp -d /tmp/percussion-cli-XXXXXX)
trap 'rm -rf "$SCRATCH"' EXIT
INPUTS=$PERCUSSION_SOURCE_DIR/inputs

fail() { echo "FAIL: $*" >&2; exit 1; }

# expect_exit CODE CMD...: run CMD, capture output in $OUT, check the exit code.
expect_exit() {
  local want=$1; shift
  set +e
  OUT=$("$@" 2>&1)
  local got=$?
  set -e
  [ "$got" -eq "$want" ] || fail "exit $got (want $want) from: $* -- output: $OUT"
}

expect_output() {
  grep -qF -- "$1" <<<"$OUT" || fail "output lacks '$1': $OUT"
}
