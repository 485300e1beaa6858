#!/usr/bin/env bash
# Build Release in build/ and run the whole test suite (unit, MPI at 1-3 ranks, command line).
# Extra arguments go to ctest, e.g. `scripts/test.sh -R scene` runs only the tests matching "scene".
# `scripts/test.sh --sanitize [ctest args]` does the same in build-sanitize/ with AddressSanitizer
# and UndefinedBehaviorSanitizer: any finding stops its program and fails its test (tests/CMakeLists.txt sets the
# sanitizers' options). -O1 keeps the suite's run time a few times Release's; -g gives the reports file:line.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/setup.sh
source "$root/scripts/setup.sh"
cd "$root"

if [[ "${1:-}" == --sanitize ]]; then
  shift
  dir=build-sanitize
  percussion_build "$dir" RelWithDebInfo -DPERCUSSION_SANITIZE=ON \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g -DNDEBUG"
else
  dir=build
  percussion_build "$dir" Release
fi

status=0
ctest --test-dir "$dir" --output-on-failure -j2 "$@" || status=$?
exit "$status"
