#!/usr/bin/env bash
# Build Release in build/ and run the whole test suite (unit, MPI at 1-3 ranks, command line).
# Extra arguments go to ctest, e.g. `scripts/test.sh -R scene` runs only the tests matching "scene".
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/setup.sh
source "$root/scripts/setup.sh"
cd "$root"

percussion_build build Release

status=0
ctest --test-dir build --output-on-failure -j2 "$@" || status=$?
exit "$status"
