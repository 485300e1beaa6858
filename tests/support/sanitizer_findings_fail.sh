# The sanitizer build's self-test (registered only with PERCUSSION_SANITIZE): a deliberate finding of each
# sanitizer ends its program with a report and a non-zero exit, also under mpiexec, and a command-line test that
# lets the exit code pass still fails on the report left in its logs.
source "$(dirname "$0")/cli_common.sh"
: "${CANARY:?set by ctest}"

# finding MODE REPORT: the canary's error MODE must exit non-zero and print REPORT.
finding() {
  set +e
  OUT=$("$CANARY" "$1" 1 2>&1)
  local got=$?
  set -e
  [ "$got" -ne 0 ] || fail "$1: exit 0, the finding did not stop the program: $OUT"
  expect_output "$2"
}
finding overflow "runtime error: signed integer overflow: 2147483647 + 1 cannot be represented in type 'int'"
finding heap "ERROR: AddressSanitizer: heap-buffer-overflow"
expect_exit 0 "$CANARY" overflow 0  # no error, no report

set +e
OUT=$("$MPIEXEC" -n 2 "$CANARY" overflow 1 2>&1)
got=$?
set -e
[ "$got" -ne 0 ] || fail "mpiexec: exit 0 although its ranks had a finding: $OUT"
expect_output "runtime error: signed integer overflow"

# A test that ignores the exit code and sends the output to a log: the report in the log fails it.
set +e
OUT=$(bash -c 'source "$1"; "$CANARY" overflow 1 > "$SCRATCH/log" 2>&1 || true' inner \
        "$(dirname "$0")/cli_common.sh" 2>&1)
got=$?
set -e
inner_scratch=$(sed -n 's/^kept the test.s files in //p' <<<"$OUT")
[ -n "$inner_scratch" ] && rm -rf "$inner_scratch"
[ "$got" -eq 1 ] || fail "a test that ignored a finding exited $got (want 1): $OUT"
expect_output "FAIL: sanitizer findings in"
expect_output "runtime error: signed integer overflow"

echo "sanitizer_findings_fail: UBSan and ASan findings exit non-zero, under mpiexec too;" \
  "a CLI test fails on a report in its logs"
