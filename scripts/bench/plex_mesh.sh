#!/usr/bin/env bash
# Cost of building a distributed unit-ball mesh (geometry/mesh): seconds of Gmsh's generation alone and of the
# whole build (generation, DMPlex creation, PT-Scotch partition, distribution, local arrays), and the largest
# rank's share of the cells over the mean, on 1 and 2 ranks.
# Usage: scripts/bench/plex_mesh.sh [H...]   (element sizes; default 0.1 0.05)
# Environment: BUILD_DIR (default build; the plex_mesh_build target is built there unless
# PERCUSSION_BENCH_NO_BUILD=1).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
build_dir="${BUILD_DIR:-build}"
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(0.1 0.05)
echo "machine: $(nproc) cores, /proc/loadavg before the runs: $(cat /proc/loadavg)"
if [[ "${PERCUSSION_BENCH_NO_BUILD:-0}" != 1 ]]; then
  if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
    cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  cmake --build "$build_dir" -j"$(nproc)" --target plex_mesh_build >/dev/null
fi
program="$build_dir/tests/plex_mesh_build"
[[ -x "$program" ]] || { echo "bench: $program not found (set BUILD_DIR, or drop PERCUSSION_BENCH_NO_BUILD)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for np in 1 2; do
  mpirun -np "$np" --oversubscribe "$program" "${sizes[@]}" | { [[ $np == 1 ]] && cat || tail -n +2; }
done
