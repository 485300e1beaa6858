#!/usr/bin/env bash
# Costs of the impact lineality machinery (notes 003 Alg. E, F, δ) on 2D packs of SIDE × SIDE unit balls in a box
# (walls left, right and floor): a hexagonal pack (no implicit equality) and a square one (every row jammed between
# the side walls). Columns: implicit equalities |I| and dim E; seconds of the linear program, of building the
# reduced system and projecting, of the witness pre-filter on the wall-free pack (the program skipped: "-"); δ of
# the reduced problem (certified interval, TAO iterations, seconds); the energy the projection removes from
# v = (1, ..., 1).
# Usage: scripts/bench/impact_lineality.sh [SIDE...]   (default 8 16 32 64; PETSc options go in PETSC_OPTIONS,
# e.g. PETSC_OPTIONS="-impact_delta_tao_type bqnls")
# Environment: BUILD_DIR (default build; the impact_lineality target is built there unless
# PERCUSSION_BENCH_NO_BUILD=1).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
build_dir="${BUILD_DIR:-build}"
sides=("$@")
[[ ${#sides[@]} -gt 0 ]] || sides=(8 16 32 64)
echo "machine: $(nproc) cores, /proc/loadavg before the runs: $(cat /proc/loadavg)"
if [[ "${PERCUSSION_BENCH_NO_BUILD:-0}" != 1 ]]; then
  if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
    cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  cmake --build "$build_dir" -j"$(nproc)" --target impact_lineality >/dev/null
fi
program="$build_dir/tests/impact_lineality"
[[ -x "$program" ]] || { echo "bench: $program not found (set BUILD_DIR, or drop PERCUSSION_BENCH_NO_BUILD)" >&2; exit 1; }
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$program" "${sides[@]}"
