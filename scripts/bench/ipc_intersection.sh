#!/usr/bin/env bash
# Seconds per distributed intersection check of the contact surfaces (two unit cubes 0.01 apart, three mesh
# sizes) on 1 and 2 ranks.
# Usage: scripts/bench/ipc_intersection.sh
# Environment: BUILD_DIR (default build; the ipc_intersection target is built there unless PERCUSSION_BENCH_NO_BUILD=1).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
build_dir="${BUILD_DIR:-build}"
echo "machine: $(nproc) cores, /proc/loadavg before the run: $(cat /proc/loadavg)"
if [[ "${PERCUSSION_BENCH_NO_BUILD:-0}" != 1 ]]; then
  if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
    cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  cmake --build "$build_dir" -j"$(nproc)" --target ipc_intersection >/dev/null
fi
program="$build_dir/tests/ipc_intersection"
[[ -x "$program" ]] || { echo "bench: $program not found (set BUILD_DIR, or drop PERCUSSION_BENCH_NO_BUILD)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
for np in 1 2; do mpirun --oversubscribe -n "$np" "$program"; done
