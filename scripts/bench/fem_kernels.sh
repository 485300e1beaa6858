#!/usr/bin/env bash
# Nanoseconds per element energy, gradient and Hessian of the FE kernels (P1/P2, 2D/3D; linear elastic,
# Neo-Hookean, viscous damping), one thread, averaged over 1000 random elements.
# Usage: scripts/bench/fem_kernels.sh
# Environment: BUILD_DIR (default build; the fem_kernels target is built there unless PERCUSSION_BENCH_NO_BUILD=1).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
build_dir="${BUILD_DIR:-build}"
echo "machine: $(nproc) cores, /proc/loadavg before the run: $(cat /proc/loadavg)"
if [[ "${PERCUSSION_BENCH_NO_BUILD:-0}" != 1 ]]; then
  if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
    cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  cmake --build "$build_dir" -j"$(nproc)" --target fem_kernels >/dev/null
fi
program="$build_dir/tests/fem_kernels"
[[ -x "$program" ]] || { echo "bench: $program not found (set BUILD_DIR, or drop PERCUSSION_BENCH_NO_BUILD)" >&2; exit 1; }
"$program"
