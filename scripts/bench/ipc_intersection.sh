#!/usr/bin/env bash
# Seconds per distributed intersection check of the contact surfaces (two unit cubes 0.01 apart, three mesh
# sizes) on 1 and 2 ranks.
# Usage: scripts/bench/ipc_intersection.sh   (BUILD_DIR: a configured build directory, default build)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
build_dir="${BUILD_DIR:-build}"
echo "machine: $(nproc) cores, /proc/loadavg before the run: $(cat /proc/loadavg)"
cmake --build "$build_dir" -j"$(nproc)" --target ipc_intersection >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
for np in 1 2; do mpirun --oversubscribe -n "$np" "$build_dir/tests/ipc_intersection"; done
